import {
  GraphQLError,
  Kind,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  parse,
  print,
  specifiedRules,
  validate,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  OperationTypeNode,
} from 'graphql';
import type { Identity } from '../../common/auth/principal';
import { can, readScope } from '../../subgraphs/messaging/public';
import { AppError, type ErrorCode } from '../../common/errors';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../common/json-depth';
import { documentNestsDeeperThan } from '../security/graphql-limits';
import type { EventType } from '../../common/events/types';
import { EVENT_TYPE_BY_ENUM, SUBSCRIBABLE_EVENT_TYPES } from './schema';
import { storableTextRule, variablesProblem } from '../security/text';

export interface SubscribeRequest {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

export type SubscriptionPlan =
  | { field: 'events'; types: ReadonlySet<EventType> }
  | {
      field: 'messageStatusChanged';
      messageId?: string;
      patientId?: string;
      /** The client's response key for the root field (its alias, or the field name). */
      responseKey: string;
      selectionSet: SelectionSetNode;
      fragments: Record<string, FragmentDefinitionNode>;
      /** The query that reads one message with the client's selection through the gateway. */
      query: string;
      idVariable: string;
      /** The client's variables the selection uses, passed on to that query. */
      variables: Record<string, unknown>;
    };

export interface PreparedOperation {
  document: DocumentNode;
  operationName?: string;
  variableValues?: Record<string, unknown>;
  plan: SubscriptionPlan;
}

export const graphQLError = (code: ErrorCode, message: string) => new GraphQLError(message, { extensions: { code } });

/**
 * onSubscribe: parses and validates the client's document against the
 * subscription schema, and checks what the caller may subscribe to, so a bad
 * or forbidden document is refused before anything listens.
 */
export function prepareOperation(schema: GraphQLSchema, identity: Identity, request: SubscribeRequest): PreparedOperation | GraphQLError[] {
  if (typeof request.query !== 'string' || request.query.length === 0) return [graphQLError('VALIDATION_ERROR', 'The subscribe payload needs a query')];
  if (documentNestsDeeperThan(request.query, MAX_JSON_DEPTH))
    return [graphQLError('VALIDATION_ERROR', `The GraphQL document nests deeper than ${MAX_JSON_DEPTH} levels`)];
  if (nestsDeeperThan(request.variables, MAX_JSON_DEPTH)) return [graphQLError('VALIDATION_ERROR', `The variables nest deeper than ${MAX_JSON_DEPTH} levels`)];
  let document: DocumentNode;
  try {
    document = parse(request.query, { maxTokens: 5000 });
  } catch (err) {
    return [graphQLError('VALIDATION_ERROR', (err as Error).message)];
  }
  const invalid = validate(schema, document, [...specifiedRules, storableTextRule]);
  if (invalid.length > 0) return invalid.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'VALIDATION_ERROR' } }));
  const operationName = request.operationName ?? undefined;
  const operation = getOperationAST(document, operationName);
  if (!operation) return [graphQLError('VALIDATION_ERROR', 'Name the operation to run with operationName')];
  if (operation.operation !== OperationTypeNode.SUBSCRIPTION) {
    return [graphQLError('VALIDATION_ERROR', 'Only subscriptions are served over WebSocket; send queries and mutations to POST /graphql')];
  }
  const badText = variablesProblem(request.variables);
  if (badText) return [graphQLError(badText.code, badText.message)];
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
  if (variables.errors) return variables.errors.map((e) => new GraphQLError(e.message, { extensions: { code: 'VALIDATION_ERROR' } }));
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const field = rootField(operation.selectionSet, fragments);
  const fieldDef = schema.getSubscriptionType()!.getFields()[field.name.value];
  const args = getArgumentValues(fieldDef, field, variables.coerced);
  const base = { document, operationName, variableValues: request.variables ?? undefined };
  try {
    if (field.name.value === 'events') return { ...base, plan: { field: 'events', types: eventTypes(identity, args.types as string[] | null | undefined) } };
    readScope(identity, 'message');
    return {
      ...base,
      plan: {
        field: 'messageStatusChanged',
        messageId: (args.messageId as string | null) ?? undefined,
        patientId: (args.patientId as string | null) ?? undefined,
        responseKey: field.alias?.value ?? field.name.value,
        selectionSet: field.selectionSet!,
        fragments,
        ...messageQuery(operation, field, fragments, request.variables ?? {}),
      },
    };
  } catch (err) {
    if (err instanceof AppError) return [graphQLError(err.code, err.message)];
    throw err;
  }
}

/** The single root field (validation guarantees one), found through fragments if need be. */
function rootField(selectionSet: SelectionSetNode, fragments: Record<string, FragmentDefinitionNode>): FieldNode {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) return selection;
    const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value].selectionSet;
    return rootField(inner, fragments);
  }
  throw new Error('validated subscription without a root field');
}

function eventTypes(identity: Identity, requested: string[] | null | undefined): Set<EventType> {
  const admin = can(identity, 'alertEvents');
  if (requested === null || requested === undefined) {
    if (!admin) readScope(identity, 'message');
    return new Set(SUBSCRIBABLE_EVENT_TYPES.filter((type) => admin || type !== 'webhook.disabled'));
  }
  if (requested.length === 0) throw new AppError('VALIDATION_ERROR', 'types must name at least one event type (omit it for all)');
  const types = new Set(requested.map((name) => EVENT_TYPE_BY_ENUM.get(name)!));
  if (types.has('webhook.disabled') && !admin) throw new AppError('FORBIDDEN', 'Only admins can subscribe to WEBHOOK_DISABLED');
  // Every other event is about one patient's messages or appointments.
  if ([...types].some((type) => type !== 'webhook.disabled')) readScope(identity, 'message');
  return types;
}

/**
 * `subscription { s: messageStatusChanged(…) { <selection> } }` becomes
 * `query ($id: ID!) { s: message(id: $id) { <selection> } }`: run through
 * the gateway per status change, it answers exactly the shape the client
 * asked for, with fields from any subgraph and the caller's access rules.
 */
function messageQuery(
  operation: OperationDefinitionNode,
  field: FieldNode,
  fragments: Record<string, FragmentDefinitionNode>,
  clientVariables: Record<string, unknown>,
): { query: string; idVariable: string; variables: Record<string, unknown> } {
  const usedFragments = new Map<string, FragmentDefinitionNode>();
  const usedVariables = new Set<string>();
  collectUses(field.selectionSet!, fragments, usedFragments, usedVariables);
  let idVariable = 'messageId';
  while (usedVariables.has(idVariable)) idVariable += '_';
  const variableDefinitions = (operation.variableDefinitions ?? []).filter((d) => usedVariables.has(d.variable.name.value));
  const name = (value: string) => ({ kind: Kind.NAME, value }) as const;
  const query: DocumentNode = {
    kind: Kind.DOCUMENT,
    definitions: [
      {
        kind: Kind.OPERATION_DEFINITION,
        operation: 'query' as OperationDefinitionNode['operation'],
        name: name('MessageStatusChanged'),
        variableDefinitions: [
          {
            kind: Kind.VARIABLE_DEFINITION,
            variable: { kind: Kind.VARIABLE, name: name(idVariable) },
            type: { kind: Kind.NON_NULL_TYPE, type: { kind: Kind.NAMED_TYPE, name: name('ID') } },
          },
          ...variableDefinitions,
        ],
        selectionSet: {
          kind: Kind.SELECTION_SET,
          selections: [
            {
              kind: Kind.FIELD,
              alias: name(field.alias?.value ?? field.name.value),
              name: name('message'),
              arguments: [{ kind: Kind.ARGUMENT, name: name('id'), value: { kind: Kind.VARIABLE, name: name(idVariable) } }],
              selectionSet: field.selectionSet,
            },
          ],
        },
      },
      ...usedFragments.values(),
    ],
  };
  const variables: Record<string, unknown> = {};
  for (const variable of usedVariables) if (variable in clientVariables) variables[variable] = clientVariables[variable];
  return { query: print(query), idVariable, variables };
}

function collectUses(
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  usedFragments: Map<string, FragmentDefinitionNode>,
  usedVariables: Set<string>,
): void {
  visit(selectionSet, {
    Variable: (node) => void usedVariables.add(node.name.value),
    FragmentSpread: (node) => {
      if (usedFragments.has(node.name.value)) return;
      const fragment = fragments[node.name.value];
      usedFragments.set(node.name.value, fragment);
      collectUses(fragment.selectionSet, fragments, usedFragments, usedVariables);
    },
  });
}
