import { validationError } from '../../../common/errors';
import type { PopulationQuery, TenantStore } from '../db/store';
import { assertCan } from '../policy/rules';
import { parsePaging, type Page } from '../common/paging';
import { findChainProblem } from './chain';
import type { CheckpointLog } from './checkpoints';
import type { AccessLog as AccessLogRow, AuditRecord as AuditRow } from '../db/generated/client';

export interface ChainVerification {
  valid: boolean;
  checked: number;
  brokenAtSeq: number | null;
  brokenRecordId: string | null;
  problem: string | null;
}

const BATCH = 1000;

/** What verification checks the chain against: the chain key and the signed checkpoints outside the database. */
export interface AuditSeal {
  chainKey: Buffer;
  checkpoints: CheckpointLog;
}

/** Reading the audit trail and the access log, and verifying the tenant's hash chain. */
export class AuditService {
  constructor(
    private readonly store: TenantStore,
    private readonly seal: AuditSeal,
  ) {}

  async list(
    filter: { entityId?: string | null; entityType?: string | null; actor?: string | null },
    limit?: number | null,
    offset?: number | null,
  ): Promise<Page<AuditRow>> {
    assertCan(this.store.identity, 'readAudit');
    const paging = parsePaging(limit, offset);
    for (const [name, value] of Object.entries(filter)) {
      if (value !== null && value !== undefined && (value.length === 0 || value.length > 256))
        throw validationError(`'${name}' must be 1..256 characters`, [{ path: name, message: 'invalid length' }]);
    }
    const where = {
      ...(filter.entityId ? { entityId: filter.entityId } : {}),
      ...(filter.entityType ? { entityType: filter.entityType } : {}),
      ...(filter.actor ? { actor: filter.actor } : {}),
    };
    return this.store.read(async (tx) => {
      const [data, total] = await Promise.all([
        tx.auditRecord.findMany({ where, orderBy: { seq: 'desc' }, take: paging.limit, skip: paging.offset }),
        tx.auditRecord.count({ where }),
      ]);
      return { data, pagination: { ...paging, total } };
    });
  }

  /**
   * Walks the tenant's whole chain in batches and reports the first broken
   * record: a broken link or keyed hash, an unsealed legacy record, or a
   * record that differs from a signed checkpoint; then a chain shorter than
   * its checkpoints (records removed from the end).
   */
  async verify(): Promise<ChainVerification> {
    assertCan(this.store.identity, 'readAudit');
    const { checkpoints, forged } = this.seal.checkpoints.forTenant(this.store.tenantId);
    if (forged.length > 0) {
      return {
        valid: false,
        checked: 0,
        brokenAtSeq: null,
        brokenRecordId: null,
        problem: `checkpoint file ${this.seal.checkpoints.path}: line(s) ${forged.join(', ')} have no valid signature`,
      };
    }
    const signedAt = new Map(checkpoints.map((cp) => [cp.seq, cp]));
    const check = { key: this.seal.chainKey, sealedUpTo: Math.max(0, ...checkpoints.map((cp) => cp.seq)) };
    const broken = (seq: number, id: string, problem: string, checked: number): ChainVerification => ({
      valid: false,
      checked,
      brokenAtSeq: seq,
      brokenRecordId: id,
      problem,
    });
    let previous: { seq: number; hash: string; hashVersion: number } | undefined;
    let checked = 0;
    for (;;) {
      const rows = await this.store.read((tx) =>
        tx.auditRecord.findMany({ where: previous ? { seq: { gt: previous.seq } } : {}, orderBy: { seq: 'asc' }, take: BATCH }),
      );
      if (rows.length === 0) break;
      if (!previous && rows[0].seq > 1) {
        // The oldest records were purged at the end of their retention period (privacy/retention.ts): only up to a
        // signed checkpoint, which the chain continues from, and named by a keyed purge record the walk below checks.
        const anchor = signedAt.get(rows[0].seq - 1);
        const purge =
          anchor &&
          (await this.store.read((tx) =>
            tx.auditRecord.findFirst({
              where: { action: 'purge', entityType: 'AuditRecord', entityId: { endsWith: `..${anchor.seq}` } },
              select: { seq: true },
            }),
          ));
        if (!anchor || anchor.hash !== rows[0].prevHash || !purge) {
          return broken(
            rows[0].seq,
            rows[0].id,
            `the chain starts at record ${rows[0].seq} without a signed checkpoint and a purge record ending at the record before it (records were removed)`,
            0,
          );
        }
        previous = { seq: anchor.seq, hash: anchor.hash, hashVersion: rows[0].hashVersion };
      }
      const problem = findChainProblem(rows, check, previous);
      const bad = rows.findIndex((r) => r.seq === problem?.seq);
      const mismatch = rows.findIndex((r, i) => (bad < 0 || i < bad) && signedAt.has(r.seq) && signedAt.get(r.seq)!.hash !== r.hash);
      if (mismatch >= 0) {
        const row = rows[mismatch];
        return broken(
          row.seq,
          row.id,
          `record ${row.seq} differs from the signed checkpoint of ${signedAt.get(row.seq)!.at} (the chain was rewritten)`,
          checked + mismatch,
        );
      }
      if (problem) return broken(problem.seq, problem.id, problem.problem, checked + bad);
      checked += rows.length;
      const last = rows[rows.length - 1];
      previous = { seq: last.seq, hash: last.hash, hashVersion: last.hashVersion };
    }
    const beyond = checkpoints.filter((cp) => cp.seq > (previous?.seq ?? 0)).sort((a, b) => b.seq - a.seq)[0];
    if (beyond) {
      return {
        valid: false,
        checked,
        brokenAtSeq: (previous?.seq ?? 0) + 1,
        brokenRecordId: null,
        problem: `the chain ends at record ${previous?.seq ?? 0} but the signed checkpoint of ${beyond.at} covers record ${beyond.seq} (records were removed)`,
      };
    }
    return { valid: true, checked, brokenAtSeq: null, brokenRecordId: null, problem: null };
  }

  /** Who read a patient's record (NEN 7513): admins, and the patient for their own record. */
  async accessLog(patientId: string, limit?: number | null, offset?: number | null): Promise<Page<AccessLogRow>> {
    assertCan(this.store.identity, 'readAccessLog', { patientId });
    const paging = parsePaging(limit, offset);
    return this.store.read(async (tx) => {
      const [data, total] = await Promise.all([
        tx.accessLog.findMany({ where: { patientId }, orderBy: [{ at: 'desc' }, { id: 'asc' }], take: paging.limit, skip: paging.offset }),
        tx.accessLog.count({ where: { patientId } }),
      ]);
      return { data, pagination: { ...paging, total } };
    });
  }

  /** The population statistics computed over the tenant's records (their access-log entries, which name no patient): admins. */
  async populationQueries(limit?: number | null, offset?: number | null): Promise<Page<PopulationQueryRow>> {
    assertCan(this.store.identity, 'readPopulationQueries');
    const paging = parsePaging(limit, offset);
    return this.store.read(async (tx) => {
      const where = { patientId: null, action: 'query' };
      const [rows, total] = await Promise.all([
        tx.accessLog.findMany({ where, orderBy: [{ at: 'desc' }, { id: 'asc' }], take: paging.limit, skip: paging.offset }),
        tx.accessLog.count({ where }),
      ]);
      const data = rows.map(({ detail, ...row }) => {
        const query = detail as unknown as PopulationQuery;
        return { ...row, ...query, patientsExact: query.patientsExact ?? true };
      });
      return { data, pagination: { ...paging, total } };
    });
  }
}

export type PopulationQueryRow = Omit<AccessLogRow, 'detail'> & PopulationQuery & { patientsExact: boolean };
