import { notFound, validationError } from '../../../common/errors';
import type { PopulationQuery, TenantStore } from '../db/store';
import { assertCan, can } from '../policy/rules';
import { parsePaging, type Page } from '../common/paging';
import { parseBound } from '../common/dates';
import { ACCESS_NEN7513, accessLogHash, auditHash, findChainProblem, HMAC_SHA256, UNCHAINED, type ChainCheck, type ChainLink } from './chain';
import type { Checkpoint, CheckpointLog } from './checkpoints';
import type { AccessLog as AccessLogRow, AuditRecord as AuditRow } from '../db/generated/client';

/** The access log's keyed hash versions, oldest first (chain.ts). */
const ACCESS_KEYED_VERSIONS = [HMAC_SHA256, ACCESS_NEN7513];

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

  /** The chain's head as the database's insert trigger keeps it (LogHead), which the runtime role cannot write. */
  private head(log: 'audit' | 'access') {
    return this.store.read((tx) => tx.logHead.findFirst({ where: { log }, select: { seq: true, hash: true, unchainedUpTo: true } }));
  }

  /** The tenant's newest keyed purge record of `entityType`, with what it names (privacy/retention.ts). */
  private async lastPurge(entityType: 'AuditRecord' | 'AccessLog') {
    const record = await this.store.read((tx) => tx.auditRecord.findFirst({ where: { action: 'purge', entityType }, orderBy: { seq: 'desc' } }));
    if (!record) return null;
    const after = (record.after ?? {}) as { upToSeq?: number; lastHash?: string; checkpointHash?: string; kept?: number[] };
    // Purge records from before `lastHash` named the checkpoint's hash, the same record's.
    return { record, upToSeq: after.upToSeq ?? -1, lastHash: after.lastHash ?? after.checkpointHash ?? null, kept: after.kept ?? [] };
  }

  /** A checkpoint file with a forged line answers nothing else. */
  private forgedCheckpoints(forged: number[]): ChainVerification | null {
    if (forged.length === 0) return null;
    return {
      valid: false,
      checked: 0,
      brokenAtSeq: null,
      brokenRecordId: null,
      problem: `checkpoint file ${this.seal.checkpoints.path}: line(s) ${forged.join(', ')} have no valid signature`,
    };
  }

  /**
   * Walks the tenant's whole chain in batches and reports the first broken
   * record: a broken link or keyed hash, an unsealed legacy record, or a
   * record that differs from a signed checkpoint; a start other than a keyed
   * purge record names; then a chain shorter than its head (LogHead) or its
   * checkpoints (records removed from the end, or all of them).
   */
  async verify(): Promise<ChainVerification> {
    assertCan(this.store.identity, 'readAudit');
    const { checkpoints, forged } = this.seal.checkpoints.forTenant(this.store.tenantId);
    const forgery = this.forgedCheckpoints(forged);
    if (forgery) return forgery;
    const check = { key: this.seal.chainKey, sealedUpTo: Math.max(0, ...checkpoints.map((cp) => cp.seq)) };
    return this.walk({
      checkpoints,
      check,
      head: await this.head('audit'),
      rows: (after) => this.store.read((tx) => tx.auditRecord.findMany({ where: after ? { seq: { gt: after } } : {}, orderBy: { seq: 'asc' }, take: BATCH })),
      start: async (first) => {
        // The oldest records were purged at the end of their retention period (privacy/retention.ts): only up to a
        // signed checkpoint, which the chain continues from, and named by a keyed purge record the walk checks.
        const anchor = checkpoints.find((cp) => cp.seq === first.seq - 1);
        const purge = await this.lastPurge('AuditRecord');
        if (!anchor || anchor.hash !== first.prevHash || purge?.upToSeq !== anchor.seq || purge.lastHash !== first.prevHash) return null;
        return { seq: anchor.seq, hash: anchor.hash, hashVersion: first.hashVersion };
      },
    });
  }

  /**
   * The access log's chain, checked as the audit trail's: its entries in
   * seq order from where the newest keyed purge record of the access log says
   * the kept chain continues (the entries it lists as kept, a held patient's,
   * checked one by one), up to the head and the signed checkpoints.
   */
  async verifyAccessLog(): Promise<ChainVerification> {
    assertCan(this.store.identity, 'readAudit');
    const { checkpoints, forged } = this.seal.checkpoints.forTenant(this.store.tenantId, 'access');
    const forgery = this.forgedCheckpoints(forged);
    if (forgery) return forgery;
    const head = await this.head('access');
    const check: ChainCheck<AccessLogRow> = {
      key: this.seal.chainKey,
      sealedUpTo: head?.unchainedUpTo ?? 0,
      legacyVersion: UNCHAINED,
      hashOf: accessLogHash,
      keyedVersions: ACCESS_KEYED_VERSIONS,
    };
    const purge = await this.lastPurge('AccessLog');
    const broken = (seq: number | null, id: string | null, problem: string): ChainVerification => ({
      valid: false,
      checked: 0,
      brokenAtSeq: seq,
      brokenRecordId: id,
      problem,
    });
    let from: { seq: number; hash: string; hashVersion: number } | undefined;
    let keptChecked = 0;
    if (purge) {
      if (auditHash(purge.record, this.seal.chainKey) !== purge.record.hash || purge.lastHash === null) {
        return broken(null, null, `the access log's purge record (audit record ${purge.record.seq}) does not verify`);
      }
      const kept = await this.store.read((tx) => tx.accessLog.findMany({ where: { seq: { lte: purge.upToSeq } }, orderBy: { seq: 'asc' } }));
      const present = new Set(kept.map((row) => row.seq));
      const missing = purge.kept.find((seq) => !present.has(seq));
      if (missing !== undefined) return broken(missing, null, `entry ${missing}, kept by the purge of audit record ${purge.record.seq}, is missing`);
      for (const row of kept) {
        const legacy = row.hashVersion === UNCHAINED && row.seq <= check.sealedUpTo;
        if (!legacy && (!ACCESS_KEYED_VERSIONS.includes(row.hashVersion) || accessLogHash(row, check.key) !== row.hash)) {
          return broken(row.seq, row.id, "hash does not match the entry's content (the entry was altered)");
        }
      }
      keptChecked = kept.length;
      from = { seq: purge.upToSeq, hash: purge.lastHash, hashVersion: purge.upToSeq < check.sealedUpTo ? UNCHAINED : HMAC_SHA256 };
    }
    const result = await this.walk({
      checkpoints,
      check,
      head,
      from,
      rows: (after) =>
        this.store.read((tx) => tx.accessLog.findMany({ where: { seq: { gt: after ?? from?.seq ?? 0 } }, orderBy: { seq: 'asc' }, take: BATCH })),
      start: async () => null,
    });
    return { ...result, checked: result.checked + keptChecked };
  }

  /**
   * The walk both chains share. `from` is where the kept chain continues after a purge (the access log's);
   * `start` answers for a chain that starts later than expected, or null when nothing accounts for it.
   */
  private async walk<R extends ChainLink>(chain: {
    checkpoints: Checkpoint[];
    check: ChainCheck<R>;
    head: { seq: number; hash: string } | null;
    from?: { seq: number; hash: string; hashVersion: number };
    rows: (afterSeq: number | undefined) => Promise<R[]>;
    start: (first: R) => Promise<{ seq: number; hash: string; hashVersion: number } | null>;
  }): Promise<ChainVerification> {
    const signedAt = new Map(chain.checkpoints.map((cp) => [cp.seq, cp]));
    const broken = (seq: number | null, id: string | null, problem: string, checked: number): ChainVerification => ({
      valid: false,
      checked,
      brokenAtSeq: seq,
      brokenRecordId: id,
      problem,
    });
    let previous = chain.from;
    let checked = 0;
    for (;;) {
      const rows = await chain.rows(checked > 0 ? previous?.seq : undefined);
      if (rows.length === 0) break;
      const expected = (previous?.seq ?? 0) + 1;
      if (checked === 0 && rows[0].seq !== expected) {
        const start = chain.from ? null : await chain.start(rows[0]);
        if (!start) {
          return broken(
            rows[0].seq,
            rows[0].id,
            `the chain starts at record ${rows[0].seq}, not ${expected}, without a signed checkpoint and a purge record ending at the record before it (records were removed)`,
            0,
          );
        }
        previous = start;
      }
      const problem = findChainProblem(rows, chain.check, previous);
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
    const end = previous?.seq ?? 0;
    const beyond = chain.checkpoints.filter((cp) => cp.seq > end).sort((a, b) => b.seq - a.seq)[0];
    if (beyond) {
      return broken(
        end + 1,
        null,
        `the chain ends at record ${end} but the signed checkpoint of ${beyond.at} covers record ${beyond.seq} (records were removed)`,
        checked,
      );
    }
    if (chain.head && (chain.head.seq !== end || chain.head.hash !== previous?.hash)) {
      return broken(
        end + 1,
        null,
        chain.head.seq > end
          ? `the chain ends at record ${end} but the database's head of it is record ${chain.head.seq} (records were removed)`
          : `the chain's last record ${end} is not the database's head of it (the chain was rewritten)`,
        checked,
      );
    }
    if (!chain.head && end > 0) return broken(null, null, 'the chain has no head in the database (LogHead was removed)', checked);
    return { valid: true, checked, brokenAtSeq: null, brokenRecordId: null, problem: null };
  }

  /**
   * Who read a patient's record (NEN 7513): admins, and the patient for their own record; within [`from`, `to`]
   * when given (YYYY-MM-DD, `to` including its day, or ISO 8601 timestamps).
   */
  async accessLog(
    patientId: string,
    limit?: number | null,
    offset?: number | null,
    period: { from?: string | null; to?: string | null } = {},
  ): Promise<Page<AccessLogRow>> {
    assertCan(this.store.identity, 'readAccessLog', { patientId });
    const paging = parsePaging(limit, offset);
    const from = parseBound('from', period.from);
    const to = parseBound('to', period.to, true);
    if (from && to && from > to) throw validationError("'from' is after 'to'", [{ path: 'from', message: 'must not be after to' }]);
    const where = { patientId, ...(from || to ? { at: { ...(from ? { gte: from } : {}), ...(to ? { lte: to } : {}) } } : {}) };
    return this.store.read(async (tx) => {
      const [data, total] = await Promise.all([
        tx.accessLog.findMany({ where, orderBy: [{ at: 'desc' }, { id: 'asc' }], take: paging.limit, skip: paging.offset }),
        tx.accessLog.count({ where }),
      ]);
      return { data, pagination: { ...paging, total } };
    });
  }

  /** One access-log entry, for whoever may read its patient's log; NOT_FOUND otherwise (an entry of another patient looks absent). */
  async accessLogEntry(id: string): Promise<AccessLogRow> {
    const row = await this.store.read((tx) => tx.accessLog.findFirst({ where: { id } }));
    if (!row?.patientId || !can(this.store.identity, 'readAccessLog', { patientId: row.patientId })) throw notFound('AuditEvent', id);
    return row;
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
