import { buildSchema, parse, validate } from 'graphql';
import { queryLimitsRule } from './graphql-limits';

const schema = buildSchema(`
  type Query { node(id: ID!): Node  nodes(limit: Int = 20): NodePage!  all: [Node!]! }
  type NodePage { data: [Node!]!  total: Int! }
  type Node { id: ID!  name: String  tags: [String!]!  parent: Node  children(limit: Int): NodePage! }
`);
const limits = { maxDepth: 12, maxAliases: 30, maxCost: 10_000 };
const errors = (query: string, custom = limits) => validate(schema, parse(query), [queryLimitsRule(custom)]).map((e) => e.message);

describe('GraphQL depth, alias and cost limits', () => {
  it('allows ordinary operations', () => {
    expect(errors('{ node(id: "1") { id name tags parent { id } } nodes(limit: 100) { data { id name } total } }')).toEqual([]);
  });

  it('counts depth through fragments and inline fragments', () => {
    const nested = (n: number) => 'parent { '.repeat(n) + 'id' + ' }'.repeat(n);
    expect(errors(`{ node(id: "1") { ${nested(10)} } }`)).toEqual([]);
    expect(errors(`{ node(id: "1") { ${nested(11)} } }`)).toEqual(['The operation is nested deeper than 12 levels']);
    expect(errors(`{ node(id: "1") { ...F } } fragment F on Node { ... on Node { ${nested(11)} } }`)).toEqual([
      'The operation is nested deeper than 12 levels',
    ]);
  });

  it('limits aliases', () => {
    const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: node(id: "${i}") { id }`).join(' ')} }`;
    expect(errors(aliased(30))).toEqual([]);
    expect(errors(aliased(31))).toEqual(['The operation uses 31 aliases; at most 30 are allowed']);
  });

  it('prices lists by their page size: literal, variable default, schema default, or the largest page', () => {
    // nodes(limit: 100) { data { 3 fields } } = 1 + (1 + 100 × 3) = 302 per copy.
    const page = (limit: string) => `nodes(limit: ${limit}) { data { id name tags } }`;
    expect(errors(`{ ${page('100')} }`, { ...limits, maxCost: 302 })).toEqual([]);
    expect(errors(`{ ${page('101')} }`, { ...limits, maxCost: 302 })).toHaveLength(1);
    expect(errors(`query($n: Int = 100) { ${page('$n')} }`, { ...limits, maxCost: 302 })).toEqual([]);
    expect(errors(`query($n: Int) { ${page('$n')} }`, { ...limits, maxCost: 301 })).toHaveLength(1);
    expect(errors('{ nodes { data { id name tags } } }', { ...limits, maxCost: 62 })).toEqual([]);
    // A list without a page argument counts 10 items.
    expect(errors('{ all { id name } }', { ...limits, maxCost: 21 })).toEqual([]);
    expect(errors('{ all { id name } }', { ...limits, maxCost: 20 })).toHaveLength(1);
  });

  it('multiplies nested pages and refuses the product', () => {
    const messages = errors('{ nodes(limit: 100) { data { children(limit: 100) { data { id name } } } } }');
    expect(messages).toEqual([expect.stringMatching(/^The operation's estimated cost \d+ exceeds the limit of 10000/)]);
  });

  it('stops on fragment bombs (2^30 expansions) instead of walking them out', () => {
    const fragments = Array.from({ length: 30 }, (_, i) => `fragment F${i} on Node { ...F${i + 1} ...F${i + 1} }`).join(' ');
    expect(errors(`{ node(id: "1") { ...F0 } } ${fragments} fragment F30 on Node { id }`)).toEqual([expect.stringMatching(/estimated cost/)]);
  });

  it('leaves introspection to the introspection setting', () => {
    expect(
      errors('{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } }'),
    ).toEqual([]);
  });
});
