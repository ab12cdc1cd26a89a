-- The row of each numeric value carries its composition's context start time, so an AQL population query tests
-- its time window on the row of the value it counts (docs/exchange.md "Evaluation and its limits").
-- AlterTable
ALTER TABLE "ehr"."ClinicalIndexEntry" ADD COLUMN     "startTime" TIMESTAMP(3);

-- Existing rows take it from their composition's own start-time row, which the index has always held
-- (the same value indexRows derives from /context/start_time): set-based, nothing decrypted.
UPDATE "ehr"."ClinicalIndexEntry" e
SET "startTime" = s."dateTime"
FROM "ehr"."ClinicalIndexEntry" s
WHERE s."tenantId" = e."tenantId" AND s."compositionId" = e."compositionId"
  AND s."entryArchetypeId" IS NULL AND s."path" = '/context/start_time' AND s."rmType" = 'DV_DATE_TIME'
  AND e."magnitude" IS NOT NULL;

-- Numeric values by path and start time, covering what a population COUNT reads (the binding, its patient and the
-- access scope's columns), so it is answered from this index alone. Raw SQL: Prisma's schema has no INCLUDE or
-- partial index; the schema engine keeps a partial index it did not create.
CREATE INDEX "ClinicalIndexEntry_values_by_start_time_idx" ON "ehr"."ClinicalIndexEntry"
  ("tenantId", "entryArchetypeId", "path", "startTime")
  INCLUDE ("magnitude", "compositionId", "entryOrdinal", "patientId", "ehrId", "templateId", "area", "rmType")
  WHERE "magnitude" IS NOT NULL AND "startTime" IS NOT NULL;
