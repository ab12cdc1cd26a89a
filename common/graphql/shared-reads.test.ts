import { SharedReads, type ReadAccount } from './shared-reads';
import type { SubgraphResponse } from './subgraph-server';

const identity = { sub: 'u', tenantId: 'demo', roles: ['admin' as const] };
const request = { query: '{ patients { data { id } } }' };

/** An execution that waits until released, counting runs and the request ids its reads were logged again for. */
function harness(outcome: { response?: SubgraphResponse; shareable?: boolean; logFails?: boolean; throws?: boolean } = {}) {
  const state = { runs: 0, loggedFor: [] as string[], release: () => {} };
  const gate = new Promise<void>((resolve) => (state.release = resolve));
  const account: ReadAccount = {
    shareable: outcome.shareable ?? true,
    logReadsFor: async (ids) => {
      if (outcome.logFails) throw new Error('database down');
      state.loggedFor.push(...ids);
    },
  };
  const execute = async () => {
    state.runs++;
    await gate;
    if (outcome.throws && state.runs === 1) throw new Error('boom');
    return { response: outcome.response ?? { data: { patients: { data: [{ id: 'p-1' }] } } }, account };
  };
  return { state, execute };
}

/** Starts `n` identical calls, lets them queue behind the first, then releases the execution. */
async function callTogether(shared: SharedReads, h: ReturnType<typeof harness>, n: number) {
  const calls = Array.from({ length: n }, (_, i) => shared.run(request, { identity, requestId: `r${i}` }, h.execute));
  await new Promise((resolve) => setImmediate(resolve));
  h.state.release();
  return Promise.allSettled(calls);
}

test('identical reads in flight run once; the others get copies, after their reads are logged under their own ids', async () => {
  const counted: number[] = [];
  const h = harness();
  const results = await callTogether(new SharedReads((n) => counted.push(n)), h, 4);
  expect(h.state.runs).toBe(1);
  expect(h.state.loggedFor).toEqual(['r1', 'r2', 'r3']);
  expect(counted).toEqual([3]);
  const values = results.map((r) => (r as PromiseFulfilledResult<SubgraphResponse>).value);
  for (const value of values) expect(value).toEqual(values[0]);
  expect(new Set(values.map((v) => v.data)).size).toBe(4);
});

test('different identities or variables do not share', async () => {
  const shared = new SharedReads();
  const h = harness();
  const calls = [
    shared.run(request, { identity, requestId: 'a' }, h.execute),
    shared.run(request, { identity: { ...identity, sub: 'v' }, requestId: 'b' }, h.execute),
    shared.run({ ...request, variables: { limit: 1 } }, { identity, requestId: 'c' }, h.execute),
  ];
  await new Promise((resolve) => setImmediate(resolve));
  h.state.release();
  await Promise.all(calls);
  expect(h.state.runs).toBe(3);
});

test.each<[string, Parameters<typeof harness>[0]]>([
  ['the execution answered errors', { response: { errors: [{ message: 'no' }] } }],
  ['the execution began a change', { shareable: false }],
  ['logging their reads failed', { logFails: true }],
  ['the execution threw', { throws: true }],
])('when %s, the others run on their own', async (_, outcome) => {
  const h = harness(outcome);
  const results = await callTogether(new SharedReads(), h, 3);
  expect(h.state.runs).toBe(3);
  expect(results.filter((r) => r.status === 'rejected')).toHaveLength(outcome?.throws ? 1 : 0);
});
