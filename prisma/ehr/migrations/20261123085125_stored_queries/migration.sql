-- CreateTable
CREATE TABLE "ehr"."StoredQuery" (
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "major" INTEGER NOT NULL,
    "minor" INTEGER NOT NULL,
    "patch" INTEGER NOT NULL,
    "type" TEXT NOT NULL DEFAULT 'AQL',
    "q" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT NOT NULL,

    CONSTRAINT "StoredQuery_pkey" PRIMARY KEY ("tenantId","name","version")
);

-- Row-level security like every tenant table of the clinical record.
ALTER TABLE "ehr"."StoredQuery" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."StoredQuery" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
