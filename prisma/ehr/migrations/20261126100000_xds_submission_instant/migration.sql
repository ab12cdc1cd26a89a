-- The instant each submission set's submissionTime (a DTM of any precision) begins, so MHD's List `date` compares
-- and sorts on an indexed column: a page sorted by date stops at its last row.
ALTER TABLE "ehr"."XdsSubmissionSet" ADD COLUMN "submissionInstant" TEXT;

-- Existing rows: the DTM with month and day 01 and time 00 where it stops (the service writes the same, dtmStart).
UPDATE "ehr"."XdsSubmissionSet" SET "submissionInstant" = rpad(CASE length("submissionTime") WHEN 4 THEN "submissionTime" || '0101' WHEN 6 THEN "submissionTime" || '01' ELSE "submissionTime" END, 14, '0');

ALTER TABLE "ehr"."XdsSubmissionSet" ALTER COLUMN "submissionInstant" SET NOT NULL;

-- The new indexes begin with (tenantId, patientId): the old one is redundant.
DROP INDEX "ehr"."XdsSubmissionSet_tenantId_patientId_idx";

-- CreateIndex
CREATE INDEX "XdsSubmissionSet_tenantId_patientId_submissionInstant_idx" ON "ehr"."XdsSubmissionSet"("tenantId", "patientId", "submissionInstant");

-- CreateIndex
CREATE INDEX "XdsSubmissionSet_tenantId_submissionInstant_idx" ON "ehr"."XdsSubmissionSet"("tenantId", "submissionInstant");
