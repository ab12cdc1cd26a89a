import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { categorise, summarise, type CpuProfile } from './cpu-profile';

const ROOT = '/srv/caregraph';
const area = (url: string, functionName = 'f') => categorise({ functionName, url }, ROOT);

describe('CPU profile areas', () => {
  it('groups packages by area, the Prisma adapter with the driver and pg-boss not with it', () => {
    expect(area(`file://${ROOT}/node_modules/graphql/execution/execute.js`)).toMatch(/^graphql-js/);
    expect(area(`file://${ROOT}/node_modules/@apollo/query-planner/dist/buildPlan.js`)).toMatch(/^@apollo\/gateway/);
    expect(area(`file://${ROOT}/node_modules/@prisma/client/runtime/client.js`)).toMatch(/^Prisma client runtime/);
    expect(area(`file://${ROOT}/node_modules/@prisma/adapter-pg/dist/index.js`)).toMatch(/^database driver/);
    expect(area(`file://${ROOT}/node_modules/pglite-prisma-adapter/dist/index.cjs`)).toMatch(/^database driver/);
    expect(area(`file://${ROOT}/node_modules/pg-protocol/dist/parser.js`)).toMatch(/^database driver/);
    expect(area(`file://${ROOT}/node_modules/pg-boss/src/manager.js`)).toBe('other packages');
    expect(area(`file://${ROOT}/node_modules/jose/dist/node/cjs/jws/verify.js`)).toMatch(/^crypto and auth/);
    expect(area(`file://${ROOT}/node_modules/pino/lib/proto.js`)).toBe('logging (pino)');
    expect(area(`file://${ROOT}/node_modules/express/lib/response.js`)).toMatch(/^HTTP/);
  });

  it('names our code by folder, and counts the generated Prisma clients as Prisma', () => {
    expect(area(`file://${ROOT}/dist/gateway/rest/messaging.js`)).toBe('ours: gateway/rest/');
    expect(area(`file://${ROOT}/dist/gateway/server.js`)).toBe('ours: gateway/');
    expect(area(`file://${ROOT}/dist/subgraphs/messaging/messages/send.service.js`)).toBe('ours: subgraphs/messaging/messages/');
    expect(area(`file://${ROOT}/common/db/pglite-worker.cjs`)).toBe('ours: common/db/');
    expect(area(`file://${ROOT}/dist/subgraphs/ehr/db/generated/internal/class.js`)).toMatch(/^Prisma client runtime/);
  });

  it('tells node core, V8 and garbage collection apart', () => {
    expect(area('node:internal/crypto/hash')).toMatch(/^crypto and auth/);
    expect(area('node:_http_server')).toMatch(/^HTTP/);
    expect(area('node:internal/timers')).toMatch(/^node core/);
    expect(area('', '(garbage collector)')).toMatch(/^garbage collection/);
    expect(area('', '(idle)')).toBe('(idle)');
    expect(area('', '(program)')).toMatch(/program/);
    expect(area('wasm://wasm/0123abcd')).toBe('WebAssembly');
    expect(categorise({ functionName: 'f', url: 'wasm://wasm/0123abcd' }, ROOT, 'PostgreSQL')).toBe('PostgreSQL');
    expect(area('', 'postMessage')).toMatch(/^thread messages/);
    expect(area('node:internal/worker')).toMatch(/^thread messages/);
  });
});

describe('CPU profile summary', () => {
  const frame = (id: number, functionName: string, url: string) => ({ id, callFrame: { functionName, url, lineNumber: 0 } });
  // Samples at 1000, 2000, 3000, 4000 µs; each stands for the time until the next (the last until endTime).
  const profile: CpuProfile = {
    nodes: [
      frame(1, '(root)', ''),
      frame(2, 'run', `file://${ROOT}/dist/gateway/a.js`),
      frame(3, '(idle)', ''),
      frame(4, 'execute', `file://${ROOT}/node_modules/graphql/x.js`),
    ],
    startTime: 0,
    endTime: 4500,
    samples: [2, 3, 4, 4],
    timeDeltas: [1000, 1000, 1000, 1000],
  };

  it('counts self time per area, idle apart, shares of the busy time', () => {
    const s = summarise(profile, ROOT);
    expect(s.windowMs).toBeCloseTo(3.5);
    expect(s.idleMs).toBeCloseTo(1);
    expect(s.busyMs).toBeCloseTo(2.5);
    expect(s.categories.map((c) => [c.name.split(' ')[0], c.ms, c.share])).toEqual([
      ['graphql-js', 1.5, 0.6],
      ['ours:', 1, 0.4],
    ]);
    expect(s.functions[0].name).toBe('execute (graphql/x.js:1)');
  });

  it('keeps only the samples inside the window', () => {
    const s = summarise(profile, ROOT, { window: { startUs: 2500, endUs: 3500 } });
    expect(s.categories).toEqual([{ name: expect.stringMatching(/^graphql-js/), ms: 1, share: 1 }]);
  });

  it('finds the phases of a real node --cpu-prof profile by windows taken with process.hrtime', () => {
    // A program under a project-like folder: 400 ms in its own code, then 400 ms in graphql-js.
    const root = mkdtempSync(join(tmpdir(), 'cpu-profile-'));
    try {
      mkdirSync(join(root, 'dist', 'gateway'), { recursive: true });
      const script = join(root, 'dist', 'gateway', 'hot.js');
      writeFileSync(
        script,
        `const { graphql, buildSchema } = require(${JSON.stringify(require.resolve('graphql'))});
const now = () => Number(process.hrtime.bigint() / 1000n);
function spin(ms) { let x = 0; const end = Date.now() + ms; while (Date.now() < end) x += Math.sqrt(x + 1); return x; }
const schema = buildSchema('type Query { a(n: Int): [Int] }');
const rootValue = { a: ({ n }) => Array.from({ length: n }, (_, i) => i) };
async function main() {
  const t0 = now(); spin(400); const t1 = now();
  const end = Date.now() + 400;
  while (Date.now() < end) await graphql({ schema, rootValue, source: '{ a(n: 50) }' });
  const t2 = now();
  process.stdout.write(JSON.stringify({ t0, t1, t2 }));
}
main();
`,
      );
      const out = execFileSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${root}`, script], { encoding: 'utf8' });
      const { t0, t1, t2 } = JSON.parse(out) as { t0: number; t1: number; t2: number };
      const file = readdirSync(root).find((f) => f.endsWith('.cpuprofile'))!;
      const real = JSON.parse(readFileSync(join(root, file), 'utf8')) as CpuProfile;
      const share = (window: { startUs: number; endUs: number }, prefix: string) =>
        summarise(real, root, { window }).categories.find((c) => c.name.startsWith(prefix))?.share ?? 0;
      // Ratios within each window: on a loaded machine a preempted process's samples shrink every absolute share.
      const spinning = { startUs: t0, endUs: t1 };
      const querying = { startUs: t1, endUs: t2 };
      expect(share(spinning, 'ours: gateway/')).toBeGreaterThan(0.3);
      expect(share(spinning, 'ours: gateway/')).toBeGreaterThan(10 * share(spinning, 'graphql-js'));
      expect(share(querying, 'graphql-js')).toBeGreaterThan(0.15);
      expect(share(querying, 'graphql-js')).toBeGreaterThan(1.5 * share(querying, 'ours: gateway/'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
