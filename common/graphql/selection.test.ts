import { buildSchema, graphql, type GraphQLResolveInfo } from 'graphql';

import { selectsField } from './selection';

describe('selectsField', () => {
  const schema = buildSchema(`
    type Page { data: [Int!]! pagination: Paging! }
    type Paging { total: Int! }
    type Query { page: Page! }
  `);

  async function asked(query: string): Promise<boolean> {
    let seen: boolean | undefined;
    const rootValue = {
      page: (_args: unknown, _ctx: unknown, info: GraphQLResolveInfo) => {
        seen = selectsField(info, 'pagination');
        return { data: [1], pagination: { total: 1 } };
      },
    };
    const result = await graphql({ schema, source: query, rootValue });
    expect(result.errors).toBeUndefined();
    return seen!;
  }

  it('sees a field selected directly', async () => {
    expect(await asked('{ page { data pagination { total } } }')).toBe(true);
  });

  it('sees a field selected through inline fragments and named fragments', async () => {
    expect(await asked('{ page { ... on Page { pagination { total } } } }')).toBe(true);
    expect(await asked('query { page { ...P } } fragment P on Page { data pagination { total } }')).toBe(true);
  });

  it('does not see a field that is not selected, nor one selected deeper down', async () => {
    expect(await asked('{ page { data } }')).toBe(false);
    expect(await asked('query { page { ...P } } fragment P on Page { data }')).toBe(false);
  });
});
