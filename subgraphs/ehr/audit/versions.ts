import { AppError } from '../../../common/errors';
import { Prisma } from '../db/generated/client';
import type { TenantTx } from '../db/tenant';

/**
 * Records without version columns (patients, appointments, EHR_STATUS) are
 * versioned by their audit trail: every change writes one audit record with
 * the state after it, so version n is the `after` snapshot of the entity's
 * n-th audit record. The trail is append-only, so these versions never change.
 */
export interface AuditVersion {
  version: number;
  at: Date;
  action: string;
  actor: string;
  reason: string | null;
  after: Record<string, unknown> | null;
}

export async function auditVersions(tx: TenantTx, entityTypes: string[], entityId: string): Promise<AuditVersion[]> {
  const rows = await tx.auditRecord.findMany({
    where: { entityType: { in: entityTypes }, entityId },
    orderBy: { seq: 'asc' },
    select: { at: true, action: true, actor: true, reason: true, after: true },
  });
  return rows.map((row, index) => ({
    version: index + 1,
    at: row.at,
    action: row.action,
    actor: row.actor,
    reason: row.reason,
    after: row.after as Record<string, unknown> | null,
  }));
}

/** The current version number and time of each entity (entities without an audit record are version 1). */
export async function currentVersions(tx: TenantTx, entityTypes: string[], entityIds: string[]): Promise<Map<string, { version: number; at: Date | null }>> {
  const groups = entityIds.length
    ? await tx.auditRecord.groupBy({
        by: ['entityId'],
        where: { entityType: { in: entityTypes }, entityId: { in: entityIds } },
        _count: { _all: true },
        _max: { at: true },
      })
    : [];
  const byId = new Map(groups.map((g) => [g.entityId, { version: g._count._all, at: g._max.at }]));
  return new Map(entityIds.map((id) => [id, byId.get(id) ?? { version: 1, at: null }]));
}

/**
 * Version-aware update guard: locks the entity's row until the transaction
 * ends, then compares the expected version with the audit-derived one, so two
 * writers that read the same version cannot both pass.
 */
export async function assertVersion(tx: TenantTx, lock: () => Promise<unknown>, entityTypes: string[], entityId: string, expected: number): Promise<void> {
  await lock();
  const current = (await tx.auditRecord.count({ where: { entityType: { in: entityTypes }, entityId } })) || 1;
  if (current !== expected) {
    throw new AppError('PRECONDITION_FAILED', `Version ${expected} is not the current version of ${entityId}; the current version is ${current}`, [
      { path: 'ifMatch', message: `current version is ${current}`, currentVersion: current },
    ]);
  }
}

/** assertVersion with the entity's row of `table` as the lock, for an update that names the version it expects (none: nothing to check). */
export async function assertRowVersion(
  tx: TenantTx,
  table: 'Patient' | 'Ehr',
  tenantId: string,
  entityTypes: string[],
  entityId: string,
  expected: number | undefined,
): Promise<void> {
  if (expected === undefined) return;
  const lockRow = () => tx.$queryRaw`SELECT id FROM ehr.${Prisma.raw(`"${table}"`)} WHERE "tenantId" = ${tenantId} AND id = ${entityId} FOR UPDATE`;
  await assertVersion(tx, lockRow, entityTypes, entityId, expected);
}
