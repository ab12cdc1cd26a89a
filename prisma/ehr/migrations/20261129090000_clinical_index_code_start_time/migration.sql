-- The row of an entry's code also carries its composition's context start time, so an AQL population query that
-- counts a code in a time window tests the window on the row it counts (docs/exchange.md "Evaluation and its limits").
-- Existing rows take it from their composition's own start-time row, as for numeric values: set-based, nothing decrypted.
UPDATE "ehr"."ClinicalIndexEntry" e
SET "startTime" = s."dateTime"
FROM "ehr"."ClinicalIndexEntry" s
WHERE s."tenantId" = e."tenantId" AND s."compositionId" = e."compositionId"
  AND s."entryArchetypeId" IS NULL AND s."path" = '/context/start_time' AND s."rmType" = 'DV_DATE_TIME'
  AND e."code" IS NOT NULL AND e."entryArchetypeId" IS NOT NULL AND e."startTime" IS NULL;

-- Entries' codes by path and start time, covering what a population COUNT reads (as the numeric values' index).
CREATE INDEX "ClinicalIndexEntry_codes_by_start_time_idx" ON "ehr"."ClinicalIndexEntry"
  ("tenantId", "entryArchetypeId", "path", "startTime")
  INCLUDE ("code", "compositionId", "entryOrdinal", "patientId", "ehrId", "templateId", "area", "rmType")
  WHERE "code" IS NOT NULL AND "startTime" IS NOT NULL;
