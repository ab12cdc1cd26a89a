import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import pg from 'pg';

import { FieldCipher } from '../common/crypto';
import { createBoss, ensureQueue } from '../common/db/boss';
import { openDatabase, type Database } from '../common/db/database';
import { migrateAll } from '../common/db/migrate';
import { applyRuntimePrivileges, JOB_QUEUE_SCHEMA, TENANT_SCHEMAS } from '../common/db/roles';
import { tenantBound } from '../common/db/tenant-session';
import { InProcessEventBus } from '../common/events/bus';
import { createLogger } from '../common/logger';
import { stopTestBoss, testBackends, type TestDatabase } from '../common/db/test-backends';
import { createEhrPrisma } from '../subgraphs/ehr/db/client';
import { chainKey } from '../subgraphs/ehr/audit/chain';
import { AuditCheckpointer, CheckpointLog } from '../subgraphs/ehr/audit/checkpoints';
import { seedEhr } from '../subgraphs/ehr/seed';
import { TenantStore } from '../subgraphs/ehr/db/store';
import { createMessagingPrisma } from '../subgraphs/messaging/db/client';
import { relayClinicalEvents } from '../subgraphs/messaging/events/clinical-relay';
import { sealMessagingContent } from '../subgraphs/messaging/keys/seal';
import { seedMessaging } from '../subgraphs/messaging/seed';
import { createMetricsRegistry } from '../common/metrics/registry';
import { ehrMetrics } from '../subgraphs/ehr/metrics';
import { systemClock } from '../common/clock';

/**
 * The database's own guarantees (docs/security.md, Database roles), attacked
 * from the service's runtime session: what SQL injection or a bug in the
 * service could try. On PostgreSQL the session is a login of the runtime role;
 * on PGlite it is the one embedded session, switched to the runtime role.
 */

interface RuntimeSession {
  query<T = any>(sql: string, values?: unknown[]): Promise<T[]>;
  /** Runs `fn` in one transaction, rolled back afterwards. */
  inTransaction<T>(fn: (q: RuntimeSession['query']) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

async function runtimeSession(db: Database): Promise<RuntimeSession> {
  if (db.kind === 'postgres') {
    const client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    const query = async (sql: string, values?: unknown[]) => (await client.query(sql, values as any[])).rows;
    return {
      query,
      async inTransaction(fn) {
        await client.query('BEGIN');
        try {
          return await fn(query);
        } finally {
          await client.query('ROLLBACK');
        }
      },
      close: () => client.end(),
    };
  }
  const pglite = db.pglite!;
  return {
    query: async (sql, values) => (await pglite.query(sql, values)).rows,
    inTransaction: (fn) =>
      pglite.transaction(async (tx) => {
        try {
          return await fn(async (sql, values) => (await tx.query(sql, values)).rows);
        } finally {
          await tx.rollback();
        }
      }),
    close: async () => {},
  };
}

const KEY = Buffer.alloc(32, 7).toString('base64');

describe.each(testBackends())('database roles on $name', (backend) => {
  let database: TestDatabase;
  let db: Database;
  let runtime: RuntimeSession;
  let tenantTables: string[];

  beforeAll(async () => {
    database = await backend.create();
    db = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: '.' });
    await migrateAll(db);
    await createBoss(db); // installs pg-boss's schema as the owner
    const ehr = createEhrPrisma(db);
    const messaging = createMessagingPrisma(db);
    expect(await seedEhr(ehr, new FieldCipher(Buffer.from(KEY, 'base64')), chainKey(Buffer.alloc(32, 9)))).toBe(true);
    expect(await seedMessaging(messaging)).toBe(true);
    // A second start finds the demo data, although the runtime role sees no row without a tenant.
    expect(await seedEhr(ehr, new FieldCipher(Buffer.from(KEY, 'base64')), chainKey(Buffer.alloc(32, 9)))).toBe(false);
    expect(await seedMessaging(messaging)).toBe(false);
    await ehr.$disconnect();
    await messaging.$disconnect();
    runtime = await runtimeSession(db);
    tenantTables = (
      await db.query<{ name: string }>(
        `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'p')
           AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenantId' AND NOT a.attisdropped)
         ORDER BY 1`,
        [TENANT_SCHEMAS],
      )
    ).rows.map((r) => r.name);
  });

  afterAll(async () => {
    await runtime?.close();
    await db?.close();
    await database?.drop();
  });

  it('[SEC-005] runs as a role that is neither superuser nor BYPASSRLS and owns nothing', async () => {
    const [me] = await runtime.query(`SELECT current_user AS name, r.rolsuper AS sup, r.rolbypassrls AS bypass FROM pg_roles r WHERE r.rolname = current_user`);
    expect(me).toEqual({ name: db.runtimeRole, sup: false, bypass: false });
    const owned = await runtime.query(
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY($1::text[]) AND pg_get_userbyid(c.relowner) = current_user`,
      [[...TENANT_SCHEMAS, 'pgboss']],
    );
    expect(owned).toEqual([]);
  });

  it('[SEC-005] every tenant table has FORCEd row-level security and the tenant policy', async () => {
    expect(tenantTables).toEqual(
      expect.arrayContaining([
        'ehr."Patient"',
        'ehr."AuditRecord"',
        'ehr."AccessLog"',
        'messaging."Message"',
        'messaging."InboundMessage"',
        'messaging."WebhookSubscription"',
      ]),
    );
    const rows = await db.query<{ name: string; forced: boolean; policy: boolean }>(
      `SELECT format('%I.%I', n.nspname, c.relname) AS name, c.relrowsecurity AND c.relforcerowsecurity AS forced,
              EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'tenant_isolation') AS policy
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE format('%I.%I', n.nspname, c.relname) = ANY($1::text[]) ORDER BY 1`,
      [tenantTables],
    );
    expect(rows.rows).toEqual(tenantTables.map((name) => ({ name, forced: true, policy: true })));
  });

  it('has no table of tenant data outside the rule (every table of the tenant schemas has a "tenantId")', async () => {
    // A new table without "tenantId" would be readable in full by the runtime role: make that a decision, here.
    const untenanted = await db.query<{ name: string }>(
      `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'p') AND c.relname <> '_prisma_migrations'
         AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenantId' AND NOT a.attisdropped)`,
      [TENANT_SCHEMAS],
    );
    // The decisions: the tenants themselves (docs/tenants.md) are platform records, managed by platform
    // admins and read by the gateway for every tenant, so row-level security by tenant cannot apply.
    expect(untenanted.rows.map((r) => r.name)).toEqual(['messaging."Organization"', 'messaging."OrganizationChange"']);
  });

  it('reads no row of any tenant table without a tenant set', async () => {
    // Tables of both schemas that hold rows of both demo tenants (seeded), as the owner sees them.
    for (const table of ['ehr."Patient"', 'ehr."Appointment"', 'ehr."AuditRecord"', 'messaging."MessageTemplate"', 'messaging."MessageTemplateVersion"']) {
      const owner = await db.query<{ tenants: number }>(`SELECT count(DISTINCT "tenantId")::int AS tenants FROM ${table}`);
      expect({ table, tenants: owner.rows[0].tenants }).toEqual({ table, tenants: 2 });
    }
    for (const table of tenantTables) {
      const [row] = await runtime.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      expect({ table, n: row.n }).toEqual({ table, n: 0 });
    }
  });

  it("[SEC-005] reads and writes only the set tenant's rows", async () => {
    await runtime.inTransaction(async (q) => {
      await q(`SELECT set_config('app.tenant_id', 'demo', true)`);
      expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."Patient"`))[0].n).toBe(3);
      for (const table of tenantTables) {
        const [row] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE "tenantId" <> 'demo'`);
        expect({ table, n: row.n }).toEqual({ table, n: 0 });
      }
      expect(await q(`UPDATE ehr."Patient" SET family = 'X' WHERE "tenantId" = 'acme'`)).toEqual([]);
      await expect(
        q(`INSERT INTO ehr."Consent" ("tenantId", "patientId", purpose, granted, "changedBy") VALUES ('acme', 'p-2001', 'MESSAGING', false, 'x')`),
      ).rejects.toThrow(/row-level security/);
    });
    expect((await db.query(`SELECT family FROM ehr."Patient" WHERE "tenantId" = 'acme'`)).rows).toEqual([{ family: 'Visser' }]);
  });

  it("binds each read of a tenant-bound client to its tenant, among other tenants' concurrent reads, and leaves no tenant behind", async () => {
    // The reads the drivers bind to a tenant themselves (tenant-session.ts), many in flight at once, alternating tenants.
    const ehr = createEhrPrisma(db);
    try {
      const reads = await Promise.all(
        Array.from({ length: 24 }, async (_, i) => {
          const tenant = i % 2 ? 'acme' : 'demo';
          const bound = tenantBound(ehr, tenant);
          const rows = i % 3 ? await bound.patient.findMany({ select: { tenantId: true } }) : [{ tenantId: tenant }];
          const count = await bound.patient.count();
          return { tenant, seen: [...new Set(rows.map((r) => r.tenantId))], count };
        }),
      );
      for (const read of reads) expect(read).toEqual({ tenant: read.tenant, seen: [read.tenant], count: read.tenant === 'demo' ? 3 : 1 });
      // The tenant was the statement's only: the same client unbound sees nothing.
      expect(await ehr.patient.count()).toBe(0);
    } finally {
      await ehr.$disconnect();
    }
  });

  it.each([
    ['UPDATE', `UPDATE ehr."AuditRecord" SET actor = 'someone else'`],
    ['DELETE', `DELETE FROM ehr."AuditRecord"`],
    ['TRUNCATE', `TRUNCATE ehr."AuditRecord"`],
    ['UPDATE of the access log', `UPDATE ehr."AccessLog" SET actor = 'x'`],
    ['DELETE of the access log', `DELETE FROM ehr."AccessLog"`],
    ['UPDATE of the chain heads', `UPDATE ehr."LogHead" SET seq = 0`],
    ['DELETE of the chain heads', `DELETE FROM ehr."LogHead"`],
    ['INSERT of a chain head', `INSERT INTO ehr."LogHead" ("tenantId", log, seq, hash) VALUES ('demo', 'x', 0, '')`],
  ])('cannot %s audit rows, with the tenant set, with or without session_replication_role', async (_name, sql) => {
    await runtime.inTransaction(async (q) => {
      await q(`SELECT set_config('app.tenant_id', 'demo', true)`);
      expect((await q<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."AuditRecord"`))[0].n).toBeGreaterThan(0);
      await expect(q(sql)).rejects.toThrow(/permission denied/);
    });
    await runtime.inTransaction(async (q) => {
      // Replica mode skips triggers, which is how the append-only trigger was bypassed: a non-superuser may not set it.
      await expect(q(`SET LOCAL session_replication_role = replica`)).rejects.toThrow(/permission denied to set parameter "session_replication_role"/);
    });
    await runtime.inTransaction(async (q) => {
      await q(`SELECT set_config('app.tenant_id', 'demo', true)`);
      await expect(q(`SELECT set_config('session_replication_role', 'replica', true)`)).rejects.toThrow(/permission denied/);
    });
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."AuditRecord" WHERE actor = 'someone else'`)).rows[0].n).toBe(0);
  });

  // Issue 45: the purges took their cut-off from the caller, so one a day ahead deleted a tenant's whole audit trail and access log.
  it("[AUD-005] cannot purge the audit trail or the access log with a cut-off of its own, nor anything younger than the tenant's periods", async () => {
    const ehr = createEhrPrisma(db);
    const admin = { sub: 'roles-admin', tenantId: 'demo', roles: ['admin' as const] };
    const store = new TenantStore(ehr, admin, { transactionalReads: db.kind === 'postgres', chainKey: chainKey(Buffer.alloc(32, 9)) });
    try {
      await store.read((tx) => store.logAccess(tx, [{ entityType: 'Patient', entityId: 'p-1001', patientId: 'p-1001' }]));
    } finally {
      await ehr.$disconnect();
    }
    const counts = async () =>
      (
        await db.query<{ audit: number; access: number }>(
          `SELECT (SELECT count(*) FROM ehr."AuditRecord" WHERE "tenantId" = 'demo')::int AS audit,
                  (SELECT count(*) FROM ehr."AccessLog" WHERE "tenantId" = 'demo')::int AS access`,
        )
      ).rows[0];
    const before = await counts();
    expect(before).toEqual({ audit: expect.any(Number), access: expect.any(Number) });
    expect(Math.min(before.audit, before.access)).toBeGreaterThan(0);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    await expect(runtime.query(`SELECT ehr.purge_audit_records('demo', 2147483647, $1::timestamp)`, [tomorrow])).rejects.toThrow(/does not exist/);
    await expect(runtime.query(`SELECT ehr.purge_access_log('demo', $1::timestamp, 1000000)`, [tomorrow])).rejects.toThrow(/does not exist/);
    // What it may run takes the tenant only.
    const signatures = await runtime.query<{ name: string; args: string }>(
      `SELECT proname AS name, pg_get_function_identity_arguments(p.oid) AS args FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'ehr' AND proname IN ('purge_audit_records', 'purge_access_log') ORDER BY 1`,
    );
    expect(signatures).toEqual([
      { name: 'purge_access_log', args: 'tenant text' },
      { name: 'purge_audit_records', args: 'tenant text' },
    ]);
    // Even with the tenant's periods at their shortest (set by the runtime role itself) and a purge record at the
    // chain's head that names everything, nothing of today goes: the period counts on the database's clock.
    for (const [purged, fn] of [
      ['AuditRecord', 'purge_audit_records'],
      ['AccessLog', 'purge_access_log'],
    ]) {
      await runtime.inTransaction(async (q) => {
        await q(`SELECT set_config('app.tenant_id', 'demo', true)`);
        await q(
          `INSERT INTO ehr."RetentionSetting" ("tenantId", category, days, "updatedAt", "updatedBy") VALUES ('demo', 'audit', 1, now(), 'x'), ('demo', 'access_log', 1, now(), 'x')
           ON CONFLICT ("tenantId", category) DO UPDATE SET days = 1`,
        );
        const [head] = await q<{ seq: number; hash: string }>(`SELECT seq, hash FROM ehr."AuditRecord" ORDER BY seq DESC LIMIT 1`);
        const claim = { upToSeq: purged === 'AuditRecord' ? head.seq : 2147483647, count: purged === 'AuditRecord' ? before.audit : before.access };
        await q(
          `INSERT INTO ehr."AuditRecord" ("tenantId", seq, id, actor, action, "entityType", "entityId", at, after, "prevHash", hash, "hashVersion")
           VALUES ('demo', $1, 'forged-purge', 'x', 'purge', $2, 'all', now(), $3::jsonb, $4, 'forged', 2)`,
          [head.seq + 1, purged, JSON.stringify(claim), head.hash],
        );
        await expect(q(`SELECT ehr.${fn}('demo')`)).rejects.toThrow(/not all older than/);
      });
    }
    expect(await counts()).toEqual(before);
  });

  it('[AUD-002] holds INSERT and SELECT only on the audit trail, and cannot grant itself more', async () => {
    const privileges = `SELECT p AS privilege, has_table_privilege(current_user, 'ehr."AuditRecord"', p) AS held
      FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER', 'REFERENCES']) AS p ORDER BY 1`;
    const expected = [
      { privilege: 'DELETE', held: false },
      { privilege: 'INSERT', held: true },
      { privilege: 'REFERENCES', held: false },
      { privilege: 'SELECT', held: true },
      { privilege: 'TRIGGER', held: false },
      { privilege: 'TRUNCATE', held: false },
      { privilege: 'UPDATE', held: false },
    ];
    expect(await runtime.query(privileges)).toEqual(expected);
    // A non-owner's GRANT only warns "no privileges were granted".
    await runtime.query(`GRANT UPDATE, DELETE ON ehr."AuditRecord" TO CURRENT_USER`).catch(() => []);
    expect(await runtime.query(privileges)).toEqual(expected);
  });

  it.each([
    ['disable row-level security', `ALTER TABLE ehr."Patient" DISABLE ROW LEVEL SECURITY`],
    ['drop FORCE', `ALTER TABLE ehr."Patient" NO FORCE ROW LEVEL SECURITY`],
    ['drop a policy', `DROP POLICY tenant_isolation ON ehr."Patient"`],
    ['disable the append-only trigger', `ALTER TABLE ehr."AuditRecord" DISABLE TRIGGER ALL`],
    ['drop a table', `DROP TABLE ehr."AuditRecord"`],
    ['add a column', `ALTER TABLE ehr."Patient" ADD COLUMN x int`],
    ['create a table', `CREATE TABLE ehr.mine (x int)`],
    ['read the migration history', `SELECT * FROM ehr._prisma_migrations`],
  ])('cannot %s', async (_name, sql) => {
    await runtime.inTransaction(async (q) => {
      await expect(q(sql)).rejects.toThrow(/must be owner|permission denied|no privileges were granted|insufficient privilege/i);
    });
  });

  it("runs the workers' cross-tenant steps over every tenant: audit checkpoints, the clinical outbox relay, sealing legacy content", async () => {
    // Through the runtime role each of these saw no row without its SECURITY DEFINER function and did nothing, silently.
    const ehr = createEhrPrisma(db);
    const messaging = createMessagingPrisma(db);
    const dir = mkdtempSync(path.join(tmpdir(), 'roles-checkpoints-'));
    try {
      const checkpointer = new AuditCheckpointer(
        ehr,
        new CheckpointLog(path.join(dir, 'cp.jsonl'), Buffer.alloc(32, 9)),
        createLogger('silent'),
        60_000,
        ehrMetrics(createMetricsRegistry()),
      );
      const checkpoints = await checkpointer.checkpoint();
      // Every tenant's audit trail, and the access log of each tenant whose records were read (the seed reads demo's).
      expect(
        checkpoints
          .filter((cp) => !cp.log)
          .map((cp) => cp.tenantId)
          .sort(),
      ).toEqual(['acme', 'demo']);
      expect(checkpoints.filter((cp) => cp.log === 'access').map((cp) => cp.tenantId)).toEqual(['demo']);

      for (const tenantId of ['acme', 'demo']) {
        await db.query(
          `INSERT INTO ehr."OutboxEvent" ("tenantId", id, type, data) VALUES ($1, $2, 'appointment.confirmed', '{"appointmentId":"a-1"}'::jsonb)`,
          [tenantId, `evt_roles_${tenantId}`],
        );
      }
      const cipher = new FieldCipher(Buffer.from(KEY, 'base64'));
      // Confirmations schedule no reminder: the queue is passed but not written to.
      expect(await relayClinicalEvents(messaging, cipher, new InProcessEventBus(), await createBoss(db), systemClock)).toBe(2);
      const relayed = await db.query<{ tenantId: string; dataEnc: string | null }>(
        `SELECT "tenantId", "dataEnc" FROM messaging."Event" WHERE id LIKE 'evt_roles_%' ORDER BY 1`,
      );
      expect(relayed.rows.map((r) => [r.tenantId, r.dataEnc !== null])).toEqual([
        ['acme', true],
        ['demo', true],
      ]);
      expect(
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."OutboxEvent" WHERE id LIKE 'evt_roles_%' AND "relayedAt" IS NULL`)).rows[0].n,
      ).toBe(0);

      for (const tenantId of ['acme', 'demo']) {
        await db.query(
          `INSERT INTO messaging."Event" ("tenantId", id, type, data, "dispatchedAt") VALUES ($1, $2, 'message.response', '{"body":"legacy"}'::jsonb, now())`,
          [tenantId, `evt_legacy_${tenantId}`],
        );
      }
      const sealed = await sealMessagingContent(messaging, cipher, { rotate: false });
      expect(Object.keys(sealed.tenants).sort()).toEqual(['acme', 'demo']);
      expect(
        (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM messaging."Event" WHERE id LIKE 'evt_legacy_%' AND data IS NULL AND "dataEnc" IS NOT NULL`,
          )
        ).rows[0].n,
      ).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await ehr.$disconnect();
      await messaging.$disconnect();
    }
  });

  it('still uses the job queue: sends and fetches a job as the runtime role', async () => {
    const boss = await createBoss(db);
    await boss.start();
    try {
      await boss.createQueue('roles-probe');
      const id = await boss.send('roles-probe', { n: 1 });
      expect(id).toEqual(expect.any(String));
      const [job] = await boss.fetch('roles-probe');
      expect(job.data).toEqual({ n: 1 });
      await boss.complete('roles-probe', job.id);
    } finally {
      await stopTestBoss(boss);
    }
  });

  // Scale-out roles starting together: each process adds its queues (each a new partition of
  // pg-boss's job table, with a foreign key to the queue table) while another runs the grant script
  // over every table of the schema. PostgreSQL then failed one of them ("deadlock detected",
  // "tuple concurrently updated"), and a worker died of it at start.
  it('adds queues from several processes at once while another grants the runtime privileges', async () => {
    const bosses = [await createBoss(db), await createBoss(db), await createBoss(db)];
    await Promise.all(bosses.map((boss) => boss.start()));
    let granting = true;
    const grants = (async () => {
      let runs = 0;
      while (granting || runs === 0) {
        await db.withOwner((owner) => applyRuntimePrivileges(owner, db.runtimeRole, [...TENANT_SCHEMAS, JOB_QUEUE_SCHEMA]));
        runs++;
      }
      return runs;
    })();
    try {
      const names = (p: number) => Array.from({ length: 15 }, (_, i) => `race-${p}-${i}`);
      await Promise.all(
        bosses.map(async (boss, p) => {
          for (const name of names(p)) await ensureQueue(boss, { name, retryLimit: 1 });
        }),
      );
      granting = false;
      expect(await grants).toBeGreaterThan(0);
      const created = (await bosses[0].getQueues()).map((q: { name: string }) => q.name);
      expect(created).toEqual(expect.arrayContaining([...names(0), ...names(1), ...names(2)]));
    } finally {
      granting = false;
      await grants.catch(() => {});
      await Promise.all(bosses.map(stopTestBoss));
    }
  });
});

/**
 * The production set-up: two roles an operator created, neither a superuser,
 * the owner owning the database. The owner is itself under the FORCEd
 * policies; its `owner_maintenance` policy is what lets the SECURITY DEFINER
 * functions and maintenance look across tenants.
 */
(process.env.TEST_DATABASE_URL ? describe : describe.skip)('database roles with DATABASE_OWNER_URL (PostgreSQL)', () => {
  const admin = process.env.TEST_DATABASE_URL!;
  const suffix = `${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
  const owner = `cg_owner_${suffix}`;
  const runtimeRole = `cg_runtime_${suffix}`;
  const database = `caregraph_roles_${suffix}`;
  const url = (user: string) => {
    const u = new URL(admin);
    u.username = user;
    u.password = '';
    u.pathname = `/${database}`;
    return u.toString();
  };
  const asAdmin = async (sql: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  let db: Database;

  beforeAll(async () => {
    await asAdmin(`CREATE ROLE ${owner} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE`);
    await asAdmin(`CREATE ROLE ${runtimeRole} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE`);
    await asAdmin(`CREATE DATABASE ${database} OWNER ${owner}`);
    db = await openDatabase({ databaseUrl: url(runtimeRole), ownerUrl: url(owner), dataDir: '.' });
    await migrateAll(db);
    await createBoss(db);
    const ehr = createEhrPrisma(db);
    const messaging = createMessagingPrisma(db);
    expect(await seedEhr(ehr, new FieldCipher(Buffer.from(KEY, 'base64')), chainKey(Buffer.alloc(32, 9)))).toBe(true);
    expect(await seedMessaging(messaging)).toBe(true);
    await ehr.$disconnect();
    await messaging.$disconnect();
  });

  afterAll(async () => {
    await db?.close();
    await asAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await asAdmin(`DROP ROLE IF EXISTS ${runtimeRole}`);
    await asAdmin(`DROP ROLE IF EXISTS ${owner}`);
  });

  it('runs as the configured runtime role, which sees no row without a tenant; the owner sees all', async () => {
    expect(db.runtimeRole).toBe(runtimeRole);
    const runtime = await runtimeSession(db);
    try {
      expect((await runtime.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."Patient"`))[0].n).toBe(0);
      expect((await runtime.query<{ n: number }>(`SELECT count(*)::int AS n FROM messaging."MessageTemplate"`))[0].n).toBe(0);
      // The cross-tenant functions run as the owner, whose policy spans tenants.
      expect((await runtime.query<{ t: string }>(`SELECT t FROM ehr.tenants_with_records() AS t`)).map((r) => r.t)).toEqual(['acme', 'demo']);
      expect((await runtime.query<{ tenantId: string }>(`SELECT "tenantId" FROM ehr.audit_chain_heads() ORDER BY 1`)).map((r) => r.tenantId)).toEqual([
        'acme',
        'demo',
      ]);
    } finally {
      await runtime.close();
    }
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."Patient"`)).rows[0].n).toBe(4);
  });

  it('lets the runtime role create and use a job queue (create_queue runs as the owner)', async () => {
    const boss = await createBoss(db);
    await boss.start();
    try {
      await boss.createQueue('owner-url-probe');
      expect(await boss.send('owner-url-probe', { n: 2 })).toEqual(expect.any(String));
      const [job] = await boss.fetch('owner-url-probe');
      expect(job.data).toEqual({ n: 2 });
    } finally {
      await stopTestBoss(boss);
    }
  });

  it('refuses to run as the owner or as a superuser', async () => {
    await expect(
      openDatabase({ databaseUrl: url(owner), ownerUrl: url(owner), dataDir: '.' }).then((d) => migrateAll(d).finally(() => d.close())),
    ).rejects.toThrow(/is the owner connection's role/);
    const superuser = new URL(admin);
    superuser.pathname = `/${database}`;
    await expect(openDatabase({ databaseUrl: superuser.toString(), ownerUrl: url(owner), dataDir: '.' })).rejects.toThrow(/superuser/);
  });
});
