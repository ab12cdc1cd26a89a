import type PgBoss from 'pg-boss';
import { systemClock, type Clock } from '../../../common/clock';
import { ensureQueue, workQueue } from '../../../common/db/boss';
import { SYSTEM_SUBJECTS } from '../../../common/auth/system-identities';
import type { Logger } from '../../../common/logger';
import type { EhrPrisma } from '../db/client';
import { TenantStore } from '../db/store';
import type { AuditCheckpointer, CheckpointLog } from '../audit/checkpoints';

/** The clinical record's scheduled purge; one job a day, on the job queue so a missed run happens after a restart. */
export const RECORD_PURGE_QUEUE = 'ehr-retention-purge';
const RECORD_PURGE_CRON = '17 3 * * *';
/** Prisma keeps DateTime as UTC `timestamp(3)`. */
const sqlTime = (date: Date) => date.toISOString();

export interface RecordPurgeReport {
  tenantId: string;
  records: number;
  accessLog: number;
  auditUpToSeq: number | null;
  audit: number;
}

/**
 * Retention of the clinical record (docs/privacy.md), per tenant:
 * - a restricted record whose deleteAfter has passed is deleted (patient, EHR,
 *   compositions with every version, consents, appointments), unless under legal hold;
 * - access log entries older than the access-log period go, except a held patient's;
 * - the oldest audit records go, as a prefix of the chain that ends at a signed
 *   checkpoint (taken first), so verification continues from that checkpoint;
 *   the prefix stops before the first record about a held patient.
 * Each deletion is itself an audit record. The periods are the tenant's stored
 * ones, counted on the database's clock: the database's purge functions take
 * nothing but the tenant and delete only what the purge record names and is due.
 */
export class RecordRetention {
  constructor(
    private readonly prisma: EhrPrisma,
    private readonly chainKey: Buffer,
    private readonly checkpointer: AuditCheckpointer,
    private readonly checkpoints: CheckpointLog,
    private readonly transactionalReads: boolean,
    private readonly clock: Clock = systemClock,
  ) {}

  async purge(now = this.clock.now()): Promise<RecordPurgeReport[]> {
    await this.checkpointer.checkpoint(now);
    const tenants = await this.prisma.$queryRaw<Array<{ tenantId: string }>>`SELECT "tenantId" FROM ehr.audit_chain_heads()`;
    const reports: RecordPurgeReport[] = [];
    for (const { tenantId } of tenants) reports.push(await this.purgeTenant(tenantId, now));
    return reports;
  }

  private store(tenantId: string): TenantStore {
    return new TenantStore(
      this.prisma,
      { sub: SYSTEM_SUBJECTS.retention, tenantId, roles: [] },
      { transactionalReads: this.transactionalReads, chainKey: this.chainKey },
    );
  }

  async purgeTenant(tenantId: string, now: Date): Promise<RecordPurgeReport> {
    const store = this.store(tenantId);
    const records = await this.deleteExpiredRecords(store, now);
    const accessLog = await this.purgeAccessLog(store);
    const { upToSeq, deleted } = await this.purgeAudit(store);
    return { tenantId, records, accessLog, auditUpToSeq: upToSeq, audit: deleted };
  }

  /** The moment before which the tenant's entries of `category` are due, as the database's purge functions count it. */
  private async cutoff(store: TenantStore, category: 'audit' | 'access_log'): Promise<Date> {
    const [row] = await store.read((tx) => tx.$queryRaw<Array<{ cutoff: Date }>>`SELECT ehr.retention_cutoff(${store.tenantId}, ${category}) AS cutoff`);
    return row.cutoff;
  }

  /**
   * The access log's entries older than the tenant's period, up to a seq,
   * except a held patient's (listed as kept). The purge record names the
   * range, the count, the kept entries and the hash the kept chain continues
   * from; the database deletes only what it names, and only what is due.
   */
  private async purgeAccessLog(store: TenantStore): Promise<number> {
    const tenant = store.tenantId;
    const cutoff = await this.cutoff(store, 'access_log');
    const plan = await store.read(async (tx) => {
      const previous = await tx.auditRecord.findFirst({
        where: { action: 'purge', entityType: 'AccessLog' },
        orderBy: { seq: 'desc' },
        select: { after: true },
      });
      const [range] = await tx.$queryRaw<Array<{ upToSeq: number | null }>>`
        SELECT greatest(${(previous?.after as { upToSeq?: number } | null)?.upToSeq ?? 0}::int,
                        coalesce((SELECT min(seq) - 1 FROM "ehr"."AccessLog" WHERE "tenantId" = ${tenant} AND at >= ${sqlTime(cutoff)}::timestamp),
                                 (SELECT max(seq) FROM "ehr"."AccessLog" WHERE "tenantId" = ${tenant}))) AS "upToSeq"`;
      const upToSeq = range?.upToSeq ?? 0;
      const [entries] = await tx.$queryRaw<Array<{ fromSeq: number | null; due: number; kept: number[]; lastHash: string | null }>>`
        SELECT min(l.seq) AS "fromSeq",
               (count(*) FILTER (WHERE NOT l.keep))::int AS due,
               coalesce(array_agg(l.seq ORDER BY l.seq) FILTER (WHERE l.keep), '{}') AS kept,
               coalesce((SELECT n."prevHash" FROM "ehr"."AccessLog" n WHERE n."tenantId" = ${tenant} AND n.seq = ${upToSeq}::int + 1),
                        (SELECT h.hash FROM "ehr"."LogHead" h WHERE h."tenantId" = ${tenant} AND h.log = 'access' AND h.seq = ${upToSeq}::int)) AS "lastHash"
        FROM (SELECT a.seq, a.at >= ${sqlTime(cutoff)}::timestamp
                     OR EXISTS (SELECT 1 FROM "ehr"."Patient" p WHERE p."tenantId" = ${tenant} AND p.id = a."patientId" AND p."legalHold") AS keep
              FROM "ehr"."AccessLog" a WHERE a."tenantId" = ${tenant} AND a.seq <= ${upToSeq}::int) l`;
      return { upToSeq, ...entries };
    });
    if (!plan.due) return 0;
    return store.change('access log retention period ended', async (tx, audit) => {
      await audit.record({
        action: 'purge',
        entityType: 'AccessLog',
        entityId: `${plan.fromSeq}..${plan.upToSeq}`,
        after: { fromSeq: plan.fromSeq, upToSeq: plan.upToSeq, count: plan.due, kept: plan.kept, lastHash: plan.lastHash, olderThan: cutoff },
      });
      const rows = await tx.$queryRaw<Array<{ n: number }>>`SELECT ehr.purge_access_log(${tenant}) AS n`;
      return rows[0]?.n ?? 0;
    });
  }

  private async deleteExpiredRecords(store: TenantStore, now: Date): Promise<number> {
    const due = await store.read((tx) =>
      tx.patient.findMany({ where: { restrictedAt: { not: null }, deleteAfter: { lte: now }, legalHold: false }, select: { id: true } }),
    );
    for (const { id } of due) {
      await store.change('retention period of the restricted record ended', async (tx, audit) => {
        const patient = await tx.patient.findFirst({ where: { id, legalHold: false } });
        if (!patient) return;
        const compositions = await tx.composition.findMany({ where: { patientId: id }, select: { id: true } });
        await tx.compositionVersion.deleteMany({ where: { compositionId: { in: compositions.map((c) => c.id) } } });
        await tx.composition.deleteMany({ where: { patientId: id } });
        const directories = await tx.directory.findMany({ where: { patientId: id }, select: { id: true } });
        await tx.directoryVersion.deleteMany({ where: { directoryId: { in: directories.map((d) => d.id) } } });
        await tx.directory.deleteMany({ where: { patientId: id } });
        await tx.itemTag.deleteMany({ where: { patientId: id } });
        await tx.ehrStatusVersion.deleteMany({ where: { ehrId: patient.ehrId } });
        await tx.contribution.deleteMany({ where: { ehrId: patient.ehrId } });
        await tx.consent.deleteMany({ where: { patientId: id } });
        await tx.appointment.deleteMany({ where: { patientId: id } });
        await tx.ehr.deleteMany({ where: { patientId: id } });
        await tx.patient.deleteMany({ where: { id } });
        await audit.record({
          action: 'delete',
          entityType: 'Patient',
          entityId: id,
          before: { restrictedAt: patient.restrictedAt, deleteAfter: patient.deleteAfter, compositions: compositions.length },
          after: null,
        });
      });
    }
    return due.length;
  }

  /** The audit records of held patients' records: ids as the audit trail names them. */
  private async heldEntityFilter(store: TenantStore) {
    return store.read(async (tx) => {
      const held = await tx.patient.findMany({ where: { legalHold: true }, select: { id: true, ehrId: true } });
      if (held.length === 0) return null;
      const ids = held.map((p) => p.id);
      const [compositions, appointments, directories] = await Promise.all([
        tx.composition.findMany({ where: { patientId: { in: ids } }, select: { id: true } }),
        tx.appointment.findMany({ where: { patientId: { in: ids } }, select: { id: true } }),
        tx.directory.findMany({ where: { patientId: { in: ids } }, select: { id: true } }),
      ]);
      const recordIds = [...held.map((p) => p.ehrId), ...appointments.map((a) => a.id), ...compositions.map((c) => c.id), ...directories.map((d) => d.id)];
      return {
        OR: [
          { entityId: { in: [...ids, ...recordIds] } },
          ...compositions.map((c) => ({ entityId: { startsWith: `${c.id}::` } })),
          ...ids.map((id) => ({ entityType: 'Consent', entityId: { startsWith: `${id}:` } })),
        ],
      };
    });
  }

  private async purgeAudit(store: TenantStore): Promise<{ upToSeq: number | null; deleted: number }> {
    const cutoff = await this.cutoff(store, 'audit');
    const held = await this.heldEntityFilter(store);
    const [firstRecent, firstHeld, first] = await store.read((tx) =>
      Promise.all([
        tx.auditRecord.findFirst({ where: { at: { gte: cutoff } }, orderBy: { seq: 'asc' }, select: { seq: true } }),
        held ? tx.auditRecord.findFirst({ where: held, orderBy: { seq: 'asc' }, select: { seq: true } }) : null,
        tx.auditRecord.findFirst({ orderBy: { seq: 'asc' }, select: { seq: true } }),
      ]),
    );
    if (!first) return { upToSeq: null, deleted: 0 };
    // The purge writes its own record first, so the whole chain may go up to the head it was checkpointed at.
    const limits = [firstRecent?.seq, firstHeld?.seq].filter((s): s is number => s !== undefined).map((s) => s - 1);
    const head = await store.read((tx) => tx.auditRecord.findFirst({ orderBy: { seq: 'desc' }, select: { seq: true, hash: true } }));
    const allowed = Math.min(head!.seq, ...limits);
    const signed = this.checkpoints.forTenant(store.tenantId).checkpoints;
    const boundary = signed
      .filter((cp) => cp.seq >= first.seq && cp.seq <= allowed)
      .sort((a, b) => b.seq - a.seq)
      .find(() => true);
    if (!boundary) return { upToSeq: null, deleted: 0 };
    const deleted = await store.change('audit retention period ended', async (tx, audit) => {
      // The database deletes what this record names (upToSeq, count) and refuses it unless all of it is due.
      await audit.record({
        action: 'purge',
        entityType: 'AuditRecord',
        entityId: `${first.seq}..${boundary.seq}`,
        after: {
          fromSeq: first.seq,
          upToSeq: boundary.seq,
          count: boundary.seq - first.seq + 1,
          lastHash: boundary.hash,
          checkpointAt: boundary.at,
          olderThan: cutoff,
        },
      });
      const rows = await tx.$queryRaw<Array<{ n: number }>>`SELECT ehr.purge_audit_records(${store.tenantId}) AS n`;
      return rows[0]?.n ?? 0;
    });
    return { upToSeq: boundary.seq, deleted };
  }
}

/** Runs the purge daily through the job queue (pg-boss's schedule survives restarts; one worker takes each run). */
export async function scheduleRecordPurge(boss: PgBoss, retention: RecordRetention, logger: Logger): Promise<{ close(): Promise<void> }> {
  await ensureQueue(boss, { name: RECORD_PURGE_QUEUE, retryLimit: 3, retryDelay: 60, expireInSeconds: 3600 });
  await boss.schedule(RECORD_PURGE_QUEUE, RECORD_PURGE_CRON, {}, { tz: 'UTC' });
  return workQueue(boss, RECORD_PURGE_QUEUE, { pollingIntervalSeconds: 1 }, async () => {
    const reports = await retention.purge();
    for (const report of reports) {
      if (report.records || report.accessLog || report.audit) logger.info(report, 'clinical record retention: expired data deleted');
    }
  });
}
