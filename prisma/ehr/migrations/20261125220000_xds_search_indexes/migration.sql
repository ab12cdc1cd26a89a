-- DropIndex
DROP INDEX "ehr"."XdsDocument_tenantId_patientId_idx";

-- CreateIndex
CREATE INDEX "XdsDocument_tenantId_patientId_createdAt_idx" ON "ehr"."XdsDocument"("tenantId", "patientId", "createdAt");

-- CreateIndex
CREATE INDEX "XdsDocument_tenantId_createdAt_idx" ON "ehr"."XdsDocument"("tenantId", "createdAt");
