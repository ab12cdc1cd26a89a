import 'reflect-metadata';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { readSupergraph } from '../supergraph';
import { categoryOf, categoryTable, restPathCategory, supergraphRootFields } from './categories';
import { operationCategories } from '../plugins/rate-limit';

describe('rate-limit categories', () => {
  // test/supergraph.test.ts keeps the checked-in supergraph equal to what the subgraphs compose to.
  it('classifies every root field of the supergraph (add new fields to ROOT_FIELD_CATEGORIES)', () => {
    const sdl = readSupergraph();
    const fields = supergraphRootFields(sdl);
    expect(fields.length).toBeGreaterThan(0);
    expect(categoryTable(sdl).unclassified.map((f) => `${f.type}.${f.name}`)).toEqual([]);
  });

  it('follows docs/api.md §7 for the current fields', () => {
    const { table } = categoryTable(readSupergraph());
    expect(table.get('Query.patient')).toBe('PATIENTS');
    expect(table.get('Query.appointments')).toBe('PATIENTS');
    expect(table.get('Query.messages')).toBe('MESSAGES_READ');
    expect(table.get('Query.templates')).toBe('TEMPLATES');
    expect(table.get('Mutation.sendMessages')).toBe('MESSAGES_SEND');
    // Provider callbacks are classified but not counted.
    expect(table.has('Mutation.recordDeliveryStatus')).toBe(false);
  });

  it('makes unlisted fields of the ehr subgraph EHR and leaves unlisted messaging fields unclassified', () => {
    expect(categoryOf({ name: 'compositions', owners: ['EHR'] })).toBe('EHR');
    expect(categoryOf({ name: 'patient', owners: ['EHR'] })).toBe('PATIENTS');
    expect(categoryOf({ name: 'somethingNew', owners: ['MESSAGING'] })).toBeUndefined();
    expect(categoryOf({ name: 'receiveSms', owners: ['MESSAGING'] })).toBe('NOT_LIMITED');
  });

  it("reads owners from @join__field, else from the type's @join__type, and finds fields of type extensions", () => {
    const fields = supergraphRootFields(`
      type Query @join__type(graph: EHR) @join__type(graph: MESSAGING) { a: Int @join__field(graph: EHR) b: Int @join__field(graph: MESSAGING) }
      type Mutation @join__type(graph: EHR) { c: Int }
      extend type Subscription { d: Int @join__field(graph: MESSAGING) }`);
    expect(fields).toEqual([
      { type: 'Query', name: 'a', owners: ['EHR'] },
      { type: 'Query', name: 'b', owners: ['MESSAGING'] },
      { type: 'Mutation', name: 'c', owners: ['EHR'] },
      { type: 'Subscription', name: 'd', owners: ['MESSAGING'] },
    ]);
  });

  describe('operation → categories', () => {
    const table = new Map([
      ['Query.messages', 'MESSAGES_READ'],
      ['Query.templates', 'TEMPLATES'],
      ['Mutation.sendMessages', 'MESSAGES_SEND'],
      ['Mutation.sendMessage', 'MESSAGES_SEND'],
    ] as const);
    const categories = (source: string) => {
      const document = parse(source);
      const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode;
      return operationCategories(operation, document, new Map(table)).sort();
    };

    it('counts a batch send as one MESSAGES_SEND point (one root field)', () => {
      expect(categories('mutation { sendMessages(input: { messages: [{}, {}, {}] }) { accepted } }')).toEqual(['MESSAGES_SEND']);
    });

    it('spends each category an operation touches, once each', () => {
      expect(categories('{ messages { total } a: templates { id } b: templates { id } }')).toEqual(['MESSAGES_READ', 'TEMPLATES']);
      expect(categories('mutation { a: sendMessage { id } b: sendMessage { id } }')).toEqual(['MESSAGES_SEND']);
    });

    it('sees root fields behind fragments and ignores __typename', () => {
      expect(categories('query { __typename ...F ... on Query { templates { id } } } fragment F on Query { messages { total } }')).toEqual([
        'MESSAGES_READ',
        'TEMPLATES',
      ]);
      expect(categories('{ __typename }')).toEqual([]);
    });
  });

  it('maps REST paths to the same categories (for answers refused before their operation)', () => {
    expect(restPathCategory('GET', '/v1/messages')).toBe('MESSAGES_READ');
    expect(restPathCategory('GET', '/v1/messages/m-1')).toBe('MESSAGES_READ');
    expect(restPathCategory('POST', '/v1/messages')).toBe('MESSAGES_SEND');
    expect(restPathCategory('POST', '/v1/messages/batch')).toBe('MESSAGES_SEND');
    expect(restPathCategory('POST', '/v1/appointments/appt-1/remind')).toBe('MESSAGES_SEND');
    expect(restPathCategory('GET', '/v1/appointments')).toBe('PATIENTS');
    expect(restPathCategory('PATCH', '/v1/patients/p-1/preferences')).toBe('PATIENTS');
    expect(restPathCategory('GET', '/v1/templates/x')).toBe('TEMPLATES');
    expect(restPathCategory('POST', '/v1/webhooks')).toBe('WEBHOOKS');
    expect(restPathCategory('GET', '/api/ehr/patients/p-1')).toBe('EHR');
    expect(restPathCategory('GET', '/v1/unknown')).toBeUndefined();
  });
});
