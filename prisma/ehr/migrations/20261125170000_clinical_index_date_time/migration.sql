-- Time windows on indexed dates (a composition's start time above all): an AQL population query narrows its candidates by them.
-- CreateIndex
CREATE INDEX "ClinicalIndexEntry_tenantId_entryArchetypeId_path_dateTime_idx" ON "ehr"."ClinicalIndexEntry"("tenantId", "entryArchetypeId", "path", "dateTime");
