-- AlterTable
ALTER TABLE "ehr"."CompositionVersion" ADD COLUMN     "commitAudit" JSONB,
ADD COLUMN     "contributionId" TEXT;

-- AlterTable
ALTER TABLE "ehr"."Ehr" ADD COLUMN     "subjectId" TEXT,
ADD COLUMN     "subjectNamespace" TEXT;

-- CreateTable
CREATE TABLE "ehr"."Contribution" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "ehrId" TEXT NOT NULL,
    "versions" JSONB NOT NULL,
    "commitAudit" JSONB,
    "committer" TEXT NOT NULL,
    "committedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Contribution_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateIndex
CREATE INDEX "Contribution_tenantId_ehrId_idx" ON "ehr"."Contribution"("tenantId", "ehrId");

-- CreateIndex
CREATE UNIQUE INDEX "Ehr_tenantId_subjectNamespace_subjectId_key" ON "ehr"."Ehr"("tenantId", "subjectNamespace", "subjectId");

-- Row-level security like every tenant table of the clinical record.
ALTER TABLE "ehr"."Contribution" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."Contribution" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
