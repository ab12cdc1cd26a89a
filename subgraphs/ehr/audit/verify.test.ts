import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { openDatabase, type Database } from '../../../common/db/database';
import { migrate } from '../../../common/db/migrate';
import { testBackends, type TestDatabase } from '../../../common/db/test-backends';
import { createLogger } from '../../../common/logger';
import { createMetricsRegistry } from '../../../common/metrics/registry';
import { retentionDays } from '../../../common/retention';
import { createEhrPrisma, type EhrPrisma } from '../db/client';
import { TenantStore } from '../db/store';
import { ehrMetrics } from '../metrics';
import { RecordRetention } from '../privacy/retention';
import { AuditService } from './audit.service';
import { chainKey } from './chain';
import { AuditCheckpointer, CheckpointLog } from './checkpoints';

/**
 * Verification of the audit trail and the access log against the real
 * database: whatever removes entries outside the retention purge (here the
 * owner, past the append-only trigger; before any checkpoint was signed) is
 * reported, and a purge leaves a keyed record both verifications accept.
 */
const AUDIT_KEY = Buffer.alloc(32, 5);
const KEY = chainKey(AUDIT_KEY);

describe.each(testBackends())('audit trail and access log verification on $name', (backend) => {
  let database: TestDatabase;
  let db: Database;
  let prisma: EhrPrisma;
  let checkpoints: CheckpointLog;
  const dir = mkdtempSync(join(tmpdir(), 'caregraph-verify-'));

  beforeAll(async () => {
    database = await backend.create();
    db = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: dir });
    await migrate(db, 'ehr');
    prisma = createEhrPrisma(db);
    checkpoints = new CheckpointLog(join(dir, 'checkpoints.jsonl'), AUDIT_KEY);
  }, 300_000); // migrating a new embedded database from scratch

  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const store = (tenantId: string) =>
    new TenantStore(prisma, { sub: 'admin-1', tenantId, roles: ['admin'] }, { transactionalReads: db.kind === 'postgres', chainKey: KEY });
  const service = (tenantId: string) => new AuditService(store(tenantId), { chainKey: KEY, checkpoints });

  /** `n` audit records and `n` access-log entries, written by the service's own writers. */
  async function fill(tenantId: string, n: number): Promise<void> {
    for (let i = 1; i <= n; i++) {
      const s = store(tenantId);
      await s.change('test', (_tx, audit) => audit.record({ action: 'create', entityType: 'Probe', entityId: `probe-${i}`, after: { i } }));
      await s.read((tx) => s.logAccess(tx, [{ entityType: 'Patient', entityId: `p-${i}`, patientId: `p-${i}` }]));
    }
  }

  /** As the owner, past the append-only trigger (one statement: on PGlite's one session a separate BEGIN could be ended by other work). */
  const remove = (table: 'AuditRecord' | 'AccessLog', tenantId: string, where: string) =>
    db.withOwner((owner) =>
      owner.query(
        `DO $$ BEGIN
           PERFORM set_config('caregraph.retention_purge', '${table}', true);
           DELETE FROM ehr."${table}" WHERE "tenantId" = '${tenantId}' ${where};
         END $$`,
      ),
    );

  const verifyBoth = async (tenantId: string) => ({ audit: await service(tenantId).verify(), access: await service(tenantId).verifyAccessLog() });

  it('accepts intact chains of both logs, and an untouched tenant with none', async () => {
    await fill('t-intact', 3);
    const { audit, access } = await verifyBoth('t-intact');
    expect(audit).toEqual({ valid: true, checked: 3, brokenAtSeq: null, brokenRecordId: null, problem: null });
    expect(access).toEqual({ valid: true, checked: 3, brokenAtSeq: null, brokenRecordId: null, problem: null });
    expect(await verifyBoth('t-never')).toEqual({
      audit: expect.objectContaining({ valid: true, checked: 0 }),
      access: expect.objectContaining({ valid: true, checked: 0 }),
    });
  });

  it.each([
    ['AuditRecord', 'emptied', ''],
    ['AuditRecord', 'shortened', 'AND seq > 1'],
    ['AccessLog', 'emptied', ''],
    ['AccessLog', 'shortened', 'AND seq > 1'],
  ] as const)('reports a %s chain %s before any checkpoint', async (table, how, where) => {
    const tenantId = `t-${table}-${how}`;
    await fill(tenantId, 3);
    await remove(table, tenantId, where);
    const result = table === 'AuditRecord' ? await service(tenantId).verify() : await service(tenantId).verifyAccessLog();
    expect(result).toMatchObject({ valid: false, problem: expect.stringMatching(/records were removed/) });
    // The other log of the tenant is untouched.
    const other = table === 'AuditRecord' ? await service(tenantId).verifyAccessLog() : await service(tenantId).verify();
    expect(other.valid).toBe(true);
  });

  it('[AUD-003] reports an access-log entry removed from the middle', async () => {
    await fill('t-access-gap', 3);
    await remove('AccessLog', 't-access-gap', 'AND seq = 2');
    expect(await service('t-access-gap').verifyAccessLog()).toMatchObject({ valid: false, brokenAtSeq: 3, problem: expect.stringMatching(/sequence gap/) });
  });

  it("counts the service's default periods when the tenant set none, and the tenant's own otherwise", async () => {
    await db.withOwner((owner) =>
      owner.query(`INSERT INTO ehr."RetentionSetting" ("tenantId", category, days, "updatedAt", "updatedBy") VALUES ('t-periods', 'audit', 40, now(), 'x')`),
    );
    const days = async (tenant: string, category: string) =>
      (await db.query<{ days: number }>(`SELECT ehr.retention_days($1, $2) AS days`, [tenant, category])).rows[0].days;
    expect([await days('t-none', 'audit'), await days('t-none', 'access_log')]).toEqual([retentionDays('audit', []), retentionDays('access_log', [])]);
    expect(await days('t-periods', 'audit')).toBe(40);
  });

  it('refuses an entry that does not continue the chain at its head', async () => {
    await fill('t-head', 1);
    await expect(
      db.withOwner((owner) =>
        owner.query(
          `INSERT INTO ehr."AccessLog" ("tenantId", seq, id, actor, roles, action, "entityType", "entityId", "prevHash", hash) VALUES ('t-head', 5, 'x', 'x', '{}', 'read', 'Patient', 'p', 'x', 'x')`,
        ),
      ),
    ).rejects.toThrow(/does not continue the chain/);
  });

  it("[AUD-005] purges what the tenant's periods make due, and leaves keyed purge records both verifications accept", async () => {
    const tenantId = 't-purge';
    await fill(tenantId, 3);
    await db.withOwner(async (owner) => {
      await owner.query(
        `INSERT INTO ehr."RetentionSetting" ("tenantId", category, days, "updatedAt", "updatedBy") VALUES ($1, 'audit', 1, now(), 'x'), ($1, 'access_log', 1, now(), 'x')`,
        [tenantId],
      );
      // Two days on, on the database's clock (the owner alone may move it).
      await owner.query(
        `CREATE OR REPLACE FUNCTION ehr.retention_now() RETURNS timestamp LANGUAGE sql STABLE AS $$ SELECT (now() AT TIME ZONE 'UTC')::timestamp + interval '2 days' $$`,
      );
    });
    try {
      const checkpointer = new AuditCheckpointer(prisma, checkpoints, createLogger('silent'), 60_000, ehrMetrics(createMetricsRegistry()));
      expect((await checkpointer.checkpoint()).filter((cp) => cp.tenantId === tenantId).map((cp) => [cp.log ?? 'audit', cp.seq])).toEqual([
        ['audit', 3],
        ['access', 3],
      ]);
      const retention = new RecordRetention(prisma, KEY, checkpointer, checkpoints, db.kind === 'postgres');
      expect(await retention.purgeTenant(tenantId, new Date())).toEqual({ tenantId, records: 0, accessLog: 3, auditUpToSeq: 3, audit: 3 });
      const purges = await store(tenantId).read((tx) =>
        tx.auditRecord.findMany({ where: { action: 'purge' }, orderBy: { seq: 'asc' }, select: { seq: true, entityType: true, after: true } }),
      );
      expect(purges).toEqual([
        { seq: 4, entityType: 'AccessLog', after: expect.objectContaining({ fromSeq: 1, upToSeq: 3, count: 3, kept: [], lastHash: expect.any(String) }) },
        { seq: 5, entityType: 'AuditRecord', after: expect.objectContaining({ fromSeq: 1, upToSeq: 3, count: 3, lastHash: expect.any(String) }) },
      ]);
      expect(await verifyBoth(tenantId)).toEqual({
        audit: expect.objectContaining({ valid: true, checked: 2 }),
        access: expect.objectContaining({ valid: true, checked: 0 }),
      });
      // New entries continue both chains after the purge, and the next checkpoints are signed.
      await fill(tenantId, 1);
      expect(await verifyBoth(tenantId)).toEqual({
        audit: expect.objectContaining({ valid: true, checked: 3 }),
        access: expect.objectContaining({ valid: true, checked: 1 }),
      });
      expect((await checkpointer.checkpoint()).filter((cp) => cp.tenantId === tenantId).map((cp) => [cp.log ?? 'audit', cp.seq])).toEqual([
        ['audit', 6],
        ['access', 4],
      ]);
      // Removing what the purge kept is still caught.
      await remove('AccessLog', tenantId, '');
      expect(await service(tenantId).verifyAccessLog()).toMatchObject({ valid: false, problem: expect.stringMatching(/records were removed/) });
    } finally {
      await db.withOwner((owner) =>
        owner.query(
          `CREATE OR REPLACE FUNCTION ehr.retention_now() RETURNS timestamp LANGUAGE sql STABLE AS $$ SELECT (now() AT TIME ZONE 'UTC')::timestamp $$`,
        ),
      );
    }
  });
});
