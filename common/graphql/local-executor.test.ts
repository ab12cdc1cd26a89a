import { buildSchema } from 'graphql';

import { AppError } from '../errors';
import { createLogger } from '../logger';
import { createErrorFormatter } from './errors';
import { LocalExecutor } from './local-executor';

describe('LocalExecutor', () => {
  const schema = buildSchema(`
    type Query { hello(name: String!): String! fails: String broken: String }
  `);
  const fields = schema.getQueryType()!.getFields();
  fields.hello.resolve = (_source, { name }, ctx) => `hello ${name} from ${ctx.tenant}`;
  fields.fails.resolve = () => {
    throw new AppError('NOT_FOUND', 'No such thing');
  };
  fields.broken.resolve = () => {
    throw new Error('secret internals');
  };
  const executor = new LocalExecutor(schema, createErrorFormatter(createLogger('silent')));
  const run = (query: string, variables?: Record<string, unknown>) => executor.run({ query, variables }, { tenant: 'demo' });

  it('executes with the given context, again from the cached document', async () => {
    const query = 'query($n: String!) { hello(name: $n) }';
    expect(await run(query, { n: 'a' })).toEqual({ data: { hello: 'hello a from demo' } });
    expect(await run(query, { n: 'b' })).toEqual({ data: { hello: 'hello b from demo' } });
  });

  it('answers documents that do not parse or validate as client errors', async () => {
    const unparsable = await run('{ hello(');
    expect(unparsable.errors?.[0].extensions).toEqual({ code: 'VALIDATION_ERROR' });
    expect(unparsable.data).toBeUndefined();
    const invalid = await run('{ nope }');
    expect(invalid.errors?.[0]).toMatchObject({ message: expect.stringMatching(/nope/), extensions: { code: 'VALIDATION_ERROR' } });
  });

  it('answers variables that do not coerce as client errors', async () => {
    const result = await run('query($n: String!) { hello(name: $n) }', { n: 42 });
    expect(result.data).toBeUndefined();
    expect(result.errors?.[0].extensions).toEqual({ code: 'VALIDATION_ERROR' });
  });

  it("keeps an AppError's code and hides unexpected errors", async () => {
    const result = await run('{ fails broken }');
    expect(result.data).toEqual({ fails: null, broken: null });
    expect(result.errors).toEqual([
      { message: 'No such thing', path: ['fails'], locations: [{ line: 1, column: 3 }], extensions: { code: 'NOT_FOUND' } },
      { message: 'Internal server error', path: ['broken'], extensions: { code: 'INTERNAL_ERROR' } },
    ]);
  });
});
