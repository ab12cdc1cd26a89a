-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "messaging";

-- CreateTable
CREATE TABLE "messaging"."CommunicationPreference" (
    "tenantId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "smsEnabled" BOOLEAN NOT NULL DEFAULT true,
    "emailEnabled" BOOLEAN NOT NULL DEFAULT true,
    "language" TEXT NOT NULL DEFAULT 'en',
    "quietStart" TEXT,
    "quietEnd" TEXT,
    "quietZone" TEXT,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CommunicationPreference_pkey" PRIMARY KEY ("tenantId","patientId")
);

-- CreateTable
CREATE TABLE "messaging"."MessageTemplate" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "name" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "language" TEXT NOT NULL DEFAULT 'en',
    "subject" TEXT,
    "body" TEXT NOT NULL,
    "variables" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MessageTemplate_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateTable
CREATE TABLE "messaging"."Message" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "templateId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "variables" JSONB NOT NULL,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messaging"."Event" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatchedAt" TIMESTAMP(3),

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Message_tenantId_patientId_createdAt_idx" ON "messaging"."Message"("tenantId", "patientId", "createdAt" DESC);

-- CreateIndex
CREATE INDEX "Message_tenantId_createdAt_idx" ON "messaging"."Message"("tenantId", "createdAt" DESC);

-- CreateIndex
CREATE INDEX "Event_dispatchedAt_createdAt_idx" ON "messaging"."Event"("dispatchedAt", "createdAt");

-- CreateIndex
CREATE INDEX "Event_tenantId_createdAt_idx" ON "messaging"."Event"("tenantId", "createdAt");
