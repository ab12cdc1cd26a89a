import type { FieldCipher } from '../../../common/crypto';
import type { EhrPrisma } from '../db/client';
import { AuditWriter } from '../db/store';

export interface RotationReport {
  keyId: string;
  /** Per tenant: how many rows of each table were re-encrypted. */
  tenants: Record<string, Record<EncryptedTable, number>>;
  /** Values no configured key can read (their key is missing from PREVIOUS_ENCRYPTION_KEYS). */
  unreadable: Array<{ tenantId: string; table: string; key: string }>;
}

const BATCH = 200;
const ACTOR = 'system:key-rotation';

/**
 * Every encrypted column of the clinical record, by table, with the unique
 * column a batch cursor walks in order. A new encrypted column belongs here
 * (test/ehr-keys.e2e.test.ts lists them all and checks each is rotated).
 */
const ENCRYPTED = {
  Patient: { model: 'patient', cursor: 'id', columns: ['phoneEnc', 'emailEnc'] },
  CompositionVersion: { model: 'compositionVersion', cursor: 'uid', columns: ['contentEnc'] },
  DirectoryVersion: { model: 'directoryVersion', cursor: 'uid', columns: ['contentEnc'] },
  EhrStatusVersion: { model: 'ehrStatusVersion', cursor: 'uid', columns: ['contentEnc'] },
  ItemTag: { model: 'itemTag', cursor: 'id', columns: ['valueEnc'] },
  XdsDocument: { model: 'xdsDocument', cursor: 'id', columns: ['metadataEnc', 'contentEnc'] },
  XdsSubmissionSet: { model: 'xdsSubmissionSet', cursor: 'id', columns: ['metadataEnc'] },
} as const;
type EncryptedTable = keyof typeof ENCRYPTED;

type Row = Record<string, string | null>;
/** The part of a Prisma model delegate the rotation uses, the same for every table above. */
interface Delegate {
  findMany(args: { where: Row | Record<string, unknown>; orderBy: Record<string, 'asc'>; take: number }): Promise<Row[]>;
  updateMany(args: { where: Record<string, unknown>; data: Row }): Promise<unknown>;
}

/**
 * Re-encrypts every encrypted column of the clinical record (contact details,
 * composition content, EHR_STATUS versions, directories, item tag values, XDS documents and their
 * metadata) that was written with another key than the cipher's current one.
 * Runs per tenant, in batches, in one transaction with `app.tenant_id` set;
 * each tenant's rotation leaves one audit record. Audit snapshots are
 * immutable and keep their original ciphertext.
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
    const counts = Object.fromEntries(Object.keys(ENCRYPTED).map((table) => [table, 0])) as Record<EncryptedTable, number>;
    await prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
        for (const [table, { model, cursor, columns }] of Object.entries(ENCRYPTED) as Array<[EncryptedTable, (typeof ENCRYPTED)[EncryptedTable]]>) {
          const delegate = tx[model] as unknown as Delegate;
          let after: string | undefined;
          for (;;) {
            const rows = await delegate.findMany({
              where: { tenantId, ...(after !== undefined ? { [cursor]: { gt: after } } : {}) },
              orderBy: { [cursor]: 'asc' },
              take: BATCH,
            });
            if (rows.length === 0) break;
            for (const row of rows) {
              const key = row[cursor]!;
              const data: Row = {};
              for (const column of columns) {
                const rotated = rotate(tenantId, table, key, row[column]);
                if (rotated !== undefined) data[column] = rotated;
              }
              if (Object.keys(data).length === 0) continue;
              counts[table]++;
              if (!options.dryRun) await delegate.updateMany({ where: { tenantId, [cursor]: key }, data });
            }
            after = rows[rows.length - 1][cursor]!;
          }
        }
        const total = Object.values(counts).reduce((a, b) => a + b, 0);
        if (!options.dryRun && total > 0) {
          const audit = new AuditWriter(tx, tenantId, ACTOR, 'encryption key rotation', chainKey);
          await audit.record({ action: 'rotate-keys', entityType: 'EncryptionKey', entityId: cipher.keyId, after: counts });
        }
      },
      { maxWait: 60_000, timeout: 600_000 },
    );
    report.tenants[tenantId] = counts;
    const summary = Object.entries(counts)
      .map(([table, n]) => `${n} ${table}`)
      .join(', ');
    log(`${tenantId}: ${options.dryRun ? 'would re-encrypt' : 're-encrypted'} rows: ${summary}`);
  }
  return report;
}
