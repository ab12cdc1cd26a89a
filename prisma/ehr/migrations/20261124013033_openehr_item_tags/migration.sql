-- CreateTable
CREATE TABLE "ehr"."ItemTag" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "ehrId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "targetType" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "area" TEXT,
    "key" TEXT NOT NULL,
    "valueEnc" TEXT,
    "targetPath" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT NOT NULL,

    CONSTRAINT "ItemTag_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateIndex
CREATE INDEX "ItemTag_tenantId_ehrId_idx" ON "ehr"."ItemTag"("tenantId", "ehrId");

-- CreateIndex
CREATE UNIQUE INDEX "ItemTag_tenantId_targetType_target_key_targetPath_key" ON "ehr"."ItemTag"("tenantId", "targetType", "target", "key", "targetPath");

-- Row-level security like every tenant table of the clinical record.
ALTER TABLE "ehr"."ItemTag" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."ItemTag" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
