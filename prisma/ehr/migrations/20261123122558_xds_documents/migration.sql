-- CreateTable
CREATE TABLE "ehr"."XdsDocument" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "uniqueId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "submissionSetId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "objectType" TEXT NOT NULL,
    "mimeType" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "repositoryUniqueId" TEXT NOT NULL,
    "creationTime" TEXT,
    "serviceStartTime" TEXT,
    "serviceStopTime" TEXT,
    "classCode" JSONB NOT NULL,
    "typeCode" JSONB NOT NULL,
    "formatCode" JSONB NOT NULL,
    "confidentialityCodes" JSONB NOT NULL,
    "healthcareFacilityTypeCode" JSONB,
    "practiceSettingCode" JSONB,
    "eventCodes" JSONB,
    "metadataEnc" TEXT NOT NULL,
    "contentEnc" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT NOT NULL,

    CONSTRAINT "XdsDocument_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateTable
CREATE TABLE "ehr"."XdsSubmissionSet" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "uniqueId" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "submissionTime" TEXT NOT NULL,
    "contentTypeCode" JSONB,
    "metadataEnc" TEXT NOT NULL,
    "transaction" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT NOT NULL,

    CONSTRAINT "XdsSubmissionSet_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateTable
CREATE TABLE "ehr"."XdsAssociation" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "associationType" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "targetId" TEXT NOT NULL,
    "submissionSetStatus" TEXT,
    "submissionSetId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "XdsAssociation_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateIndex
CREATE INDEX "XdsDocument_tenantId_patientId_idx" ON "ehr"."XdsDocument"("tenantId", "patientId");

-- CreateIndex
CREATE UNIQUE INDEX "XdsDocument_tenantId_uniqueId_key" ON "ehr"."XdsDocument"("tenantId", "uniqueId");

-- CreateIndex
CREATE INDEX "XdsSubmissionSet_tenantId_patientId_idx" ON "ehr"."XdsSubmissionSet"("tenantId", "patientId");

-- CreateIndex
CREATE UNIQUE INDEX "XdsSubmissionSet_tenantId_uniqueId_key" ON "ehr"."XdsSubmissionSet"("tenantId", "uniqueId");

-- CreateIndex
CREATE INDEX "XdsAssociation_tenantId_sourceId_idx" ON "ehr"."XdsAssociation"("tenantId", "sourceId");

-- CreateIndex
CREATE INDEX "XdsAssociation_tenantId_targetId_idx" ON "ehr"."XdsAssociation"("tenantId", "targetId");

-- Row-level security like every tenant table of the clinical record.
ALTER TABLE "ehr"."XdsDocument" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."XdsDocument" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
ALTER TABLE "ehr"."XdsSubmissionSet" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."XdsSubmissionSet" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
ALTER TABLE "ehr"."XdsAssociation" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."XdsAssociation" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
