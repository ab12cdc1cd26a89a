import type { FieldCipher } from '../../../common/crypto';
import type { EhrPrisma } from '../db/client';
import { indexRows, insertIndexRows, type IndexRow } from './clinical-index';

const BATCH = 200;
/** How often (in compositions indexed) a long backfill says how far it is. */
const PROGRESS_EVERY = 10_000;

export interface BackfillReport {
  indexed: number;
  /**
   * Compositions whose content no configured key can read: one never indexed stays out of the index (and out of
   * indexed searches); one indexed before keeps its rows, without positions. The next start tries again.
   */
  unreadable: Array<{ tenantId: string; compositionId: string }>;
}

/**
 * Indexes every live composition that has no clinical-index rows (those
 * committed before the index existed) or rows without positions (indexed
 * before rows said where they sit), replacing its rows. Run at every start of
 * the ehr subgraph; idempotent (an indexed composition always has its row 0,
 * with positions, so a second run finds nothing), and safe beside writers and
 * other instances: each batch locks its compositions' rows (a commit takes the
 * same row lock) and checks again under the lock before writing. A tenant found fully indexed is marked
 * (ClinicalIndexBackfill) and not scanned again: every commit indexes itself,
 * and the scan reads every composition of the tenant.
 */
export async function backfillClinicalIndex(
  prisma: EhrPrisma,
  cipher: FieldCipher,
  onProgress: (progress: { tenantId: string; indexed: number }) => void = () => {},
): Promise<BackfillReport> {
  const report: BackfillReport = { indexed: 0, unreadable: [] };
  let reported = 0;
  // Across tenants through the owner's function: row-level security shows the runtime role one tenant at a time.
  const tenants = (await prisma.$queryRaw<Array<{ tenantId: string }>>`SELECT t AS "tenantId" FROM ehr.tenants_with_records() AS t`).map((r) => r.tenantId);
  for (const tenantId of tenants) {
    const marked = await prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
      return (await tx.clinicalIndexBackfill.count({ where: { tenantId } })) > 0;
    });
    if (marked) continue;
    const unreadable = report.unreadable.length;
    let cursor = '';
    for (;;) {
      const last = await prisma.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
          const batch = await tx.$queryRaw<Array<{ id: string }>>`
            SELECT c."id" FROM "ehr"."Composition" c
            WHERE c."tenantId" = ${tenantId} AND c."deletedAt" IS NULL AND c."id" > ${cursor}
              AND NOT EXISTS (SELECT 1 FROM "ehr"."ClinicalIndexEntry" i WHERE i."tenantId" = c."tenantId" AND i."compositionId" = c."id"
                                AND i."seq" = 0 AND i."positions" IS NOT NULL)
            ORDER BY c."id" LIMIT ${BATCH} FOR UPDATE`;
          if (batch.length === 0) return null;
          const ids = batch.map((r) => r.id);
          // Under the lock, the latest version of each composition a commit has not indexed meanwhile.
          const pending = await tx.$queryRaw<
            Array<{ id: string; ehrId: string; patientId: string; templateId: string; area: string; contentEnc: string | null; committedAt: Date }>
          >`
            SELECT c."id", c."ehrId", c."patientId", c."templateId", c."area", v."contentEnc", v."committedAt"
            FROM "ehr"."Composition" c
            JOIN "ehr"."CompositionVersion" v ON v."tenantId" = c."tenantId" AND v."compositionId" = c."id" AND v."version" = c."latestVersion"
            WHERE c."tenantId" = ${tenantId} AND c."id" = ANY(${ids}::text[]) AND c."deletedAt" IS NULL
              AND NOT EXISTS (SELECT 1 FROM "ehr"."ClinicalIndexEntry" i WHERE i."tenantId" = c."tenantId" AND i."compositionId" = c."id"
                                AND i."seq" = 0 AND i."positions" IS NOT NULL)`;
          const rows: IndexRow[] = [];
          const indexed: string[] = [];
          for (const c of pending) {
            if (!c.contentEnc) continue;
            let content: unknown;
            try {
              content = JSON.parse(cipher.decrypt(c.contentEnc));
            } catch {
              report.unreadable.push({ tenantId, compositionId: c.id });
              continue;
            }
            const meta = { compositionId: c.id, ehrId: c.ehrId, patientId: c.patientId, templateId: c.templateId, area: c.area, committedAt: c.committedAt };
            rows.push(...indexRows(meta, content));
            indexed.push(c.id);
            report.indexed++;
          }
          // Rows from before positions are replaced whole; those of a composition no key reads stay as they were.
          if (indexed.length)
            await tx.$executeRaw`DELETE FROM "ehr"."ClinicalIndexEntry" WHERE "tenantId" = ${tenantId} AND "compositionId" = ANY(${indexed}::text[])`;
          await insertIndexRows(tx, tenantId, rows);
          return ids[ids.length - 1];
        },
        { maxWait: 20_000, timeout: 120_000 },
      );
      if (last === null) break;
      cursor = last;
      if (report.indexed - reported >= PROGRESS_EVERY) {
        reported = report.indexed;
        onProgress({ tenantId, indexed: report.indexed });
      }
    }
    // A composition no key reads stays unindexed: the next start tries again (with the key configured by then).
    if (report.unreadable.length === unreadable)
      await prisma.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
        await tx.clinicalIndexBackfill.createMany({ data: [{ tenantId }], skipDuplicates: true });
      });
  }
  return report;
}
