import { AppError, validationError } from '../../../common/errors';
import type { TenantStore } from '../db/store';
import { assertCan } from '../access';
import { parsePaging, type Page } from '../shared/paging';
import { findChainProblem, type ChainedFields } from './chain';
import type { AccessLog as AccessLogRow, AuditRecord as AuditRow } from '../db/generated/client';

export interface ChainVerification {
  valid: boolean;
  checked: number;
  brokenAtSeq: number | null;
  brokenRecordId: string | null;
  problem: string | null;
}

const BATCH = 1000;

/** Reading the audit trail and the access log, and verifying the tenant's hash chain. */
export class AuditService {
  constructor(private readonly store: TenantStore) {}

  async list(filter: { entityId?: string | null; entityType?: string | null; actor?: string | null }, limit?: number | null, offset?: number | null): Promise<Page<AuditRow>> {
    assertCan(this.store.identity, 'readAudit', 'read the audit trail');
    const paging = parsePaging(limit, offset);
    for (const [name, value] of Object.entries(filter)) {
      if (value !== null && value !== undefined && (value.length === 0 || value.length > 256)) throw validationError(`'${name}' must be 1..256 characters`, [{ path: name, message: 'invalid length' }]);
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

  /** Walks the tenant's whole chain in batches and reports the first broken record. */
  async verify(): Promise<ChainVerification> {
    assertCan(this.store.identity, 'readAudit', 'verify the audit trail');
    let previous: { seq: number; hash: string } | undefined;
    let checked = 0;
    for (;;) {
      const rows = await this.store.read((tx) =>
        tx.auditRecord.findMany({ where: previous ? { seq: { gt: previous.seq } } : {}, orderBy: { seq: 'asc' }, take: BATCH }),
      );
      if (rows.length === 0) return { valid: true, checked, brokenAtSeq: null, brokenRecordId: null, problem: null };
      const problem = findChainProblem(rows as Array<ChainedFields & { hash: string }>, previous);
      if (problem) return { valid: false, checked: checked + rows.findIndex((r) => r.seq === problem.seq), brokenAtSeq: problem.seq, brokenRecordId: problem.id, problem: problem.problem };
      checked += rows.length;
      const last = rows[rows.length - 1];
      previous = { seq: last.seq, hash: last.hash };
    }
  }

  /** Who read a patient's record (NEN 7513): admins, and the patient for their own record. */
  async accessLog(patientId: string, limit?: number | null, offset?: number | null): Promise<Page<AccessLogRow>> {
    const identity = this.store.identity;
    const own = identity.roles.includes('patient') && identity.patientId === patientId;
    if (!own && !identity.roles.includes('admin')) {
      if (identity.roles.every((r) => r === 'patient')) throw new AppError('NOT_FOUND', `Patient '${patientId}' was not found`);
      throw new AppError('FORBIDDEN', 'Only admin may read the access log of a patient');
    }
    const paging = parsePaging(limit, offset);
    return this.store.read(async (tx) => {
      const [data, total] = await Promise.all([
        tx.accessLog.findMany({ where: { patientId }, orderBy: [{ at: 'desc' }, { id: 'asc' }], take: paging.limit, skip: paging.offset }),
        tx.accessLog.count({ where: { patientId } }),
      ]);
      return { data, pagination: { ...paging, total } };
    });
  }
}
