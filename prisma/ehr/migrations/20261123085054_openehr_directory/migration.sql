-- AlterTable
ALTER TABLE "ehr"."Ehr" ADD COLUMN     "subjectUnnamed" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "ehr"."Directory" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "ehrId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "latestVersion" INTEGER NOT NULL,
    "deletedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Directory_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateTable
CREATE TABLE "ehr"."DirectoryVersion" (
    "tenantId" TEXT NOT NULL,
    "directoryId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "uid" TEXT NOT NULL,
    "changeType" TEXT NOT NULL,
    "contentEnc" TEXT,
    "committedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "committer" TEXT NOT NULL,
    "commitAudit" JSONB,
    "contributionId" TEXT NOT NULL,

    CONSTRAINT "DirectoryVersion_pkey" PRIMARY KEY ("tenantId","directoryId","version")
);

-- CreateIndex
CREATE UNIQUE INDEX "Directory_tenantId_ehrId_key" ON "ehr"."Directory"("tenantId", "ehrId");

-- CreateIndex
CREATE UNIQUE INDEX "DirectoryVersion_tenantId_uid_key" ON "ehr"."DirectoryVersion"("tenantId", "uid");

-- Row-level security like every tenant table of the clinical record.
ALTER TABLE "ehr"."Directory" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."Directory" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
ALTER TABLE "ehr"."DirectoryVersion" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."DirectoryVersion" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));

-- EHRs created through openEHR without a subject: their creation audit record names the subject as null.
UPDATE "ehr"."Ehr" e SET "subjectUnnamed" = true
WHERE e."subjectId" IS NULL AND EXISTS (
  SELECT 1 FROM "ehr"."AuditRecord" a
  WHERE a."tenantId" = e."tenantId" AND a."entityType" = 'Ehr' AND a."entityId" = e.id AND a.action = 'create' AND a.after -> 'subject' = 'null'::jsonb
);
