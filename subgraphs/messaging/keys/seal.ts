import type { FieldCipher } from '../../../common/crypto';
import type { MessagingPrisma } from '../db/client';
import { tenantsToSeal } from '../db/cross-tenant';

/** An encrypted column, and the legacy plaintext column it replaced (if any). */
interface SealedColumn {
  enc: string;
  plain?: string;
  /** The plaintext column is Json: sealed as its JSON text. */
  json?: boolean;
}

/**
 * Every encrypted column of the messaging schema (all tables are keyed by `id` and carry `tenantId`).
 * The SQL function `messaging.tenants_to_seal` (migration `cross_tenant_sealing`) lists the same tables and plaintext columns.
 */
const TABLES: Array<{ table: string; columns: SealedColumn[] }> = [
  {
    table: 'Message',
    columns: [
      { enc: 'recipientEnc' },
      { enc: 'bodyEnc', plain: 'body' },
      { enc: 'subjectEnc', plain: 'subject' },
      { enc: 'variablesEnc', plain: 'variables', json: true },
    ],
  },
  { table: 'InboundMessage', columns: [{ enc: 'bodyEnc', plain: 'body' }] },
  { table: 'Event', columns: [{ enc: 'dataEnc', plain: 'data', json: true }] },
  { table: 'WebhookDelivery', columns: [{ enc: 'payloadEnc', plain: 'payload' }] },
  { table: 'WebhookSubscription', columns: [{ enc: 'secret' }, { enc: 'previousSecret' }] },
];

const BATCH = 200;

export interface SealReport {
  keyId: string;
  /** Per tenant and table: legacy plaintext values encrypted, and ciphertexts re-encrypted with the current key. */
  tenants: Record<string, Record<string, { sealed: number; rotated: number }>>;
  /** Values no configured key can read (their key is missing from PREVIOUS_ENCRYPTION_KEYS). */
  unreadable: Array<{ tenantId: string; table: string; key: string }>;
}

const q = (name: string) => `"${name}"`;

/**
 * Brings the messaging schema's patient content to rest encrypted with the
 * current key:
 * - legacy rows (written before content was encrypted) have their plaintext
 *   moved into the `…Enc` column and the plaintext column cleared; this runs at
 *   every start-up (`rotate: false`), a no-op once nothing is left;
 * - with `rotate: true` (`npm run keys:rotate`), every value written with a
 *   previous key is re-encrypted with the current one.
 * Per tenant, in batches, each batch in its own transaction with `app.tenant_id`
 * set; each update only applies to the value it read, so two processes running
 * it at once do no harm.
 */
export async function sealMessagingContent(
  prisma: MessagingPrisma,
  cipher: FieldCipher,
  options: { rotate: boolean; dryRun?: boolean; log?: (msg: string) => void },
): Promise<SealReport> {
  const report: SealReport = { keyId: cipher.keyId, tenants: {}, unreadable: [] };
  // Which tenants have rows to look at, per table: the owner's function (row-level security shows the runtime role nothing without a tenant).
  const work = await tenantsToSeal(prisma, options.rotate);
  for (const { table, columns } of TABLES) {
    const legacy = columns.filter((c) => c.plain).map((c) => `${q(c.plain!)} IS NOT NULL`);
    // Without rotation only rows still holding plaintext need a look.
    const pending = options.rotate ? 'TRUE' : legacy.length > 0 ? `(${legacy.join(' OR ')})` : 'FALSE';
    if (pending === 'FALSE') continue;
    const tenants = work.filter((w) => w.table === table);
    const select = columns.flatMap((c) => [q(c.enc), ...(c.plain ? [c.json ? `${q(c.plain)}::text AS ${q(c.plain)}` : q(c.plain)] : [])]).join(', ');
    for (const { tenantId } of tenants) {
      const counts = ((report.tenants[tenantId] ??= {})[table] ??= { sealed: 0, rotated: 0 });
      let cursor = '';
      for (;;) {
        const done = await prisma.$transaction(
          async (tx) => {
            await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
            const rows = await tx.$queryRawUnsafe<Array<Record<string, string | null>>>(
              `SELECT id, ${select} FROM messaging.${q(table)} WHERE "tenantId" = $1 AND id > $2 AND ${pending} ORDER BY id LIMIT ${BATCH}`,
              tenantId,
              cursor,
            );
            for (const row of rows) {
              const sets: string[] = [];
              const guards: string[] = [];
              const values: unknown[] = [];
              for (const column of columns) {
                const stored = row[column.enc];
                const plain = column.plain ? row[column.plain] : null;
                let next: string | undefined;
                if (stored === null && plain !== null) {
                  next = cipher.encrypt(column.json ? JSON.stringify(JSON.parse(plain)) : plain);
                  counts.sealed++;
                } else if (stored !== null && options.rotate && cipher.needsRotation(stored)) {
                  try {
                    next = cipher.encrypt(cipher.decrypt(stored));
                    counts.rotated++;
                  } catch {
                    report.unreadable.push({ tenantId, table, key: row.id! });
                  }
                }
                if (next === undefined) continue;
                values.push(next);
                sets.push(`${q(column.enc)} = $${values.length}`);
                if (column.plain) sets.push(`${q(column.plain)} = NULL`);
                if (stored === null) guards.push(`${q(column.enc)} IS NULL`);
                else {
                  values.push(stored);
                  guards.push(`${q(column.enc)} = $${values.length}`);
                }
              }
              if (sets.length === 0 || options.dryRun) continue;
              values.push(row.id);
              await tx.$executeRawUnsafe(
                `UPDATE messaging.${q(table)} SET ${sets.join(', ')} WHERE id = $${values.length} AND ${guards.join(' AND ')}`,
                ...values,
              );
            }
            if (rows.length > 0) cursor = rows[rows.length - 1].id!;
            return rows.length < BATCH;
          },
          { maxWait: 60_000, timeout: 600_000 },
        );
        if (done) break;
      }
      if (counts.sealed + counts.rotated > 0) {
        options.log?.(
          `${tenantId}: ${table}: ${options.dryRun ? 'would encrypt' : 'encrypted'} ${counts.sealed} plaintext value(s), ${options.dryRun ? 'would re-encrypt' : 're-encrypted'} ${counts.rotated}`,
        );
      }
    }
  }
  await sealExportArchives(prisma, cipher, options, report);
  return report;
}

/**
 * Subject access archives (PatientExportChunk, keyed by export and sequence, binary): the same two steps as
 * above. They live at most 7 days, but a rotation that dropped their key would make them undownloadable.
 */
async function sealExportArchives(
  prisma: MessagingPrisma,
  cipher: FieldCipher,
  options: { rotate: boolean; dryRun?: boolean; log?: (msg: string) => void },
  report: SealReport,
): Promise<void> {
  const table = 'PatientExportChunk';
  const tenants = await prisma.$queryRaw<Array<{ t: string }>>`SELECT t FROM messaging.tenants_with_retained_data() AS t`;
  for (const { t: tenantId } of tenants) {
    let counts: { sealed: number; rotated: number } | undefined;
    let cursor = { exportId: '', seq: -1 };
    for (;;) {
      const rows = await prisma.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
          // One chunk at a time is up to 256 KiB; a small batch keeps memory bounded.
          const batch = await tx.patientExportChunk.findMany({
            where: {
              OR: [{ exportId: { gt: cursor.exportId } }, { exportId: cursor.exportId, seq: { gt: cursor.seq } }],
              ...(options.rotate ? {} : { data: { not: null } }),
            },
            orderBy: [{ exportId: 'asc' }, { seq: 'asc' }],
            take: 10,
          });
          for (const chunk of batch) {
            let next: string | undefined;
            if (chunk.dataEnc === null && chunk.data !== null) {
              next = cipher.encryptBytes(Buffer.from(chunk.data));
              (counts ??= { sealed: 0, rotated: 0 }).sealed++;
            } else if (chunk.dataEnc !== null && options.rotate && cipher.needsRotation(chunk.dataEnc)) {
              try {
                next = cipher.encryptBytes(cipher.decryptBytes(chunk.dataEnc));
                (counts ??= { sealed: 0, rotated: 0 }).rotated++;
              } catch {
                report.unreadable.push({ tenantId, table, key: `${chunk.exportId}/${chunk.seq}` });
              }
            }
            if (next === undefined || options.dryRun) continue;
            // Applies only to the value read, so two runs at once do no harm.
            await tx.patientExportChunk.updateMany({
              where: { exportId: chunk.exportId, seq: chunk.seq, dataEnc: chunk.dataEnc },
              data: { dataEnc: next, data: null },
            });
          }
          return batch;
        },
        { maxWait: 60_000, timeout: 600_000 },
      );
      if (rows.length === 0) break;
      const last = rows[rows.length - 1];
      cursor = { exportId: last.exportId, seq: last.seq };
    }
    if (counts) {
      (report.tenants[tenantId] ??= {})[table] = counts;
      options.log?.(
        `${tenantId}: ${table}: ${options.dryRun ? 'would encrypt' : 'encrypted'} ${counts.sealed} plaintext chunk(s), ${options.dryRun ? 'would re-encrypt' : 're-encrypted'} ${counts.rotated}`,
      );
    }
  }
}
