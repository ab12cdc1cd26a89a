-- The commit time of each indexed composition's latest version, so FHIR _lastUpdated searches and sorts run in SQL.
ALTER TABLE "ehr"."ClinicalIndexEntry" ADD COLUMN "committedAt" TIMESTAMP(3);

-- Existing rows: their composition's latest version's commit time.
UPDATE "ehr"."ClinicalIndexEntry" i SET "committedAt" = v."committedAt"
FROM "ehr"."Composition" c
JOIN "ehr"."CompositionVersion" v ON v."tenantId" = c."tenantId" AND v."compositionId" = c."id" AND v."version" = c."latestVersion"
WHERE c."tenantId" = i."tenantId" AND c."id" = i."compositionId";

-- A row whose composition has no such version cannot exist (rows are written with the version); the effective time keeps the column total regardless.
UPDATE "ehr"."ClinicalIndexEntry" SET "committedAt" = "effectiveAt" WHERE "committedAt" IS NULL;

ALTER TABLE "ehr"."ClinicalIndexEntry" ALTER COLUMN "committedAt" SET NOT NULL;

-- CreateIndex
CREATE INDEX "ClinicalIndexEntry_tenantId_entryArchetypeId_committedAt_idx" ON "ehr"."ClinicalIndexEntry"("tenantId", "entryArchetypeId", "committedAt");
