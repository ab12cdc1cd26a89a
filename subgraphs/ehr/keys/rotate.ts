import type { FieldCipher } from '../../../common/crypto';
import type { EhrPrisma } from '../db/client';
import { AuditWriter } from '../db/store';

export interface RotationReport {
  keyId: string;
  tenants: Record<string, { patients: number; compositionVersions: number }>;
  /** Values no configured key can read (their key is missing from PREVIOUS_ENCRYPTION_KEYS). */
  unreadable: Array<{ tenantId: string; table: string; key: string }>;
}

const BATCH = 200;
const ACTOR = 'system:key-rotation';

/**
 * Re-encrypts every encrypted column of the clinical record (contact details,
 * composition content) that was written with another key than the cipher's
 * current one. Runs per tenant, in batches, each batch in one transaction with
 * `app.tenant_id` set; each tenant's rotation leaves one audit record.
 * Audit snapshots are immutable and keep their original ciphertext.
 */
export async function rotateEncryptionKeys(
  prisma: EhrPrisma,
  cipher: FieldCipher,
  chainKey: Buffer,
  options: { dryRun?: boolean; log?: (msg: string) => void } = {},
): Promise<RotationReport> {
  const log = options.log ?? (() => {});
  const report: RotationReport = { keyId: cipher.keyId, tenants: {}, unreadable: [] };
  // Across tenants through the owner's function: row-level security shows the runtime role one tenant at a time.
  const tenants = (await prisma.$queryRaw<Array<{ tenantId: string }>>`SELECT t AS "tenantId" FROM ehr.tenants_with_records() AS t`).map((r) => r.tenantId);

  const rotate = (tenantId: string, table: string, key: string, value: string | null): string | null | undefined => {
    if (value === null || !cipher.needsRotation(value)) return undefined;
    try {
      return cipher.encrypt(cipher.decrypt(value));
    } catch {
      report.unreadable.push({ tenantId, table, key });
      return undefined;
    }
  };

  for (const tenantId of tenants) {
    const counts = { patients: 0, compositionVersions: 0 };
    let patientCursor: string | undefined;
    let versionCursor: { compositionId: string; version: number } | undefined;
    await prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
        for (;;) {
          const rows = await tx.patient.findMany({
            where: { tenantId, ...(patientCursor ? { id: { gt: patientCursor } } : {}) },
            orderBy: { id: 'asc' },
            take: BATCH,
          });
          if (rows.length === 0) break;
          for (const row of rows) {
            const phoneEnc = rotate(tenantId, 'Patient', row.id, row.phoneEnc);
            const emailEnc = rotate(tenantId, 'Patient', row.id, row.emailEnc);
            if (phoneEnc === undefined && emailEnc === undefined) continue;
            counts.patients++;
            if (!options.dryRun) {
              await tx.patient.updateMany({
                where: { tenantId, id: row.id },
                data: { ...(phoneEnc !== undefined ? { phoneEnc } : {}), ...(emailEnc !== undefined ? { emailEnc } : {}) },
              });
            }
          }
          patientCursor = rows[rows.length - 1].id;
        }
        for (;;) {
          const rows = await tx.compositionVersion.findMany({
            where: {
              tenantId,
              ...(versionCursor
                ? {
                    OR: [
                      { compositionId: { gt: versionCursor.compositionId } },
                      { compositionId: versionCursor.compositionId, version: { gt: versionCursor.version } },
                    ],
                  }
                : {}),
            },
            orderBy: [{ compositionId: 'asc' }, { version: 'asc' }],
            take: BATCH,
          });
          if (rows.length === 0) break;
          for (const row of rows) {
            const contentEnc = rotate(tenantId, 'CompositionVersion', row.uid, row.contentEnc);
            if (contentEnc === undefined) continue;
            counts.compositionVersions++;
            if (!options.dryRun)
              await tx.compositionVersion.updateMany({ where: { tenantId, compositionId: row.compositionId, version: row.version }, data: { contentEnc } });
          }
          const last = rows[rows.length - 1];
          versionCursor = { compositionId: last.compositionId, version: last.version };
        }
        if (!options.dryRun && counts.patients + counts.compositionVersions > 0) {
          const audit = new AuditWriter(tx, tenantId, ACTOR, 'encryption key rotation', chainKey);
          await audit.record({ action: 'rotate-keys', entityType: 'EncryptionKey', entityId: cipher.keyId, after: counts });
        }
      },
      { maxWait: 60_000, timeout: 600_000 },
    );
    report.tenants[tenantId] = counts;
    log(
      `${tenantId}: ${options.dryRun ? 'would re-encrypt' : 're-encrypted'} ${counts.patients} patient(s), ${counts.compositionVersions} composition version(s)`,
    );
  }
  return report;
}
