-- CreateTable
CREATE TABLE "ehr"."ClinicalIndexEntry" (
    "tenantId" TEXT NOT NULL,
    "compositionId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "ehrId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "templateId" TEXT NOT NULL,
    "area" TEXT NOT NULL,
    "entryArchetypeId" TEXT,
    "entryOrdinal" INTEGER,
    "effectiveAt" TIMESTAMP(3) NOT NULL,
    "archetypeId" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "rmType" TEXT NOT NULL,
    "code" TEXT,
    "terminology" TEXT,
    "magnitude" DOUBLE PRECISION,
    "unit" TEXT,
    "dateTime" TIMESTAMP(3),
    "boolean" BOOLEAN,

    CONSTRAINT "ClinicalIndexEntry_pkey" PRIMARY KEY ("tenantId","compositionId","seq")
);

-- CreateIndex
CREATE INDEX "ClinicalIndexEntry_tenantId_patientId_entryArchetypeId_effe_idx" ON "ehr"."ClinicalIndexEntry"("tenantId", "patientId", "entryArchetypeId", "effectiveAt");

-- CreateIndex
CREATE INDEX "ClinicalIndexEntry_tenantId_entryArchetypeId_path_code_idx" ON "ehr"."ClinicalIndexEntry"("tenantId", "entryArchetypeId", "path", "code");

-- CreateIndex
CREATE INDEX "ClinicalIndexEntry_tenantId_entryArchetypeId_path_magnitude_idx" ON "ehr"."ClinicalIndexEntry"("tenantId", "entryArchetypeId", "path", "magnitude");

-- AddForeignKey
ALTER TABLE "ehr"."ClinicalIndexEntry" ADD CONSTRAINT "ClinicalIndexEntry_tenantId_compositionId_fkey" FOREIGN KEY ("tenantId", "compositionId") REFERENCES "ehr"."Composition"("tenantId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Row-level security: the index holds clinical values, so it is confined to its tenant like the compositions it indexes.
ALTER TABLE "ehr"."ClinicalIndexEntry" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."ClinicalIndexEntry" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
