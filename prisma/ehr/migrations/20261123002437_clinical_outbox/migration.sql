-- CreateTable
CREATE TABLE "ehr"."OutboxEvent" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "relayedAt" TIMESTAMP(3),
    "requestKey" TEXT,

    CONSTRAINT "OutboxEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "OutboxEvent_relayedAt_createdAt_idx" ON "ehr"."OutboxEvent"("relayedAt", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "OutboxEvent_tenantId_requestKey_key" ON "ehr"."OutboxEvent"("tenantId", "requestKey");

-- Row-level security like every tenant table of the clinical record.
ALTER TABLE "ehr"."OutboxEvent" ENABLE ROW LEVEL SECURITY;
CREATE POLICY "tenant_isolation" ON "ehr"."OutboxEvent" USING ("tenantId" = current_setting('app.tenant_id', true)) WITH CHECK ("tenantId" = current_setting('app.tenant_id', true));
