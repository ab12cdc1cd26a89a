-- CreateIndex
CREATE INDEX "Ehr_tenantId_isQueryable_idx" ON "ehr"."Ehr"("tenantId", "isQueryable");

-- CreateIndex
CREATE INDEX "Patient_tenantId_restrictedAt_idx" ON "ehr"."Patient"("tenantId", "restrictedAt");
