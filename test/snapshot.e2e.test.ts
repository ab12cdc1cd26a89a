import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestPlatform, backendName, type TestPlatform } from './harness';

/**
 * Test platforms start from one migrated and seeded database per jest run
 * (test/support/snapshot.js): each gets its own copy, with the runtime role's
 * grants and row-level security, and nothing one file writes reaches another.
 */
describe(`test database snapshot (${backendName})`, () => {
  let a: TestPlatform;
  let b: TestPlatform;
  beforeAll(async () => {
    [a, b] = await Promise.all([startTestPlatform(), startTestPlatform()]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('is made once per run by the global setup', () => {
    expect(process.env.CAREGRAPH_TEST_SNAPSHOT).toMatch(/manifest\.json$/);
  });

  it('holds every migration, the seed and pg-boss', async () => {
    const db = a.platform.db!;
    for (const subgraph of ['ehr', 'messaging']) {
      const committed = readdirSync(join(__dirname, '..', 'prisma', subgraph, 'migrations'), { withFileTypes: true }).filter((e) => e.isDirectory()).length;
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${subgraph}"."_prisma_migrations" WHERE finished_at IS NOT NULL`);
      expect(rows[0].n).toBe(committed);
    }
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM "ehr"."Patient"')).rows[0].n).toBeGreaterThan(0);
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'pgboss'`)).rows[0].n).toBeGreaterThan(
      0,
    );
  });

  it('keeps the runtime role least-privileged and under row-level security', async () => {
    const db = a.platform.db!;
    const { rows } = await db.query<{ tbl: string; rls: boolean; forced: boolean; granted: boolean }>(
      `SELECT c.relname AS tbl, c.relrowsecurity AS rls, c.relforcerowsecurity AS forced,
              has_table_privilege($1, c.oid, 'SELECT,INSERT,UPDATE,DELETE') AS granted
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('ehr', 'messaging') AND c.relkind = 'r' AND c.relname IN ('Patient', 'Message')`,
      [db.runtimeRole],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ rls: true, forced: true, granted: true });
    // Through the platform: the seed reads back with the keys it was written with, and only in its tenant.
    const query = '{ patient(id: "p-1001") { id name { family } } }';
    const demo = await a.graphql(query);
    expect(demo.body).toEqual({ data: { patient: { id: 'p-1001', name: { family: 'de Vries' } } } });
    const acme = await a.graphql(query, undefined, { token: await a.token({ tenants: ['acme'] }) });
    expect(acme.body).toEqual({ data: { patient: null } });
  });

  it('gives every platform its own copy', async () => {
    await a.platform.db!.exec('CREATE TABLE public.snapshot_probe (id int)');
    const seen = async (t: TestPlatform) =>
      (await t.platform.db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'snapshot_probe'`)).rows[0].n;
    expect(await seen(a)).toBe(1);
    expect(await seen(b)).toBe(0);
  });
});
