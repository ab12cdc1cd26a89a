-- AlterTable
ALTER TABLE "messaging"."Message" ADD COLUMN     "appointmentId" TEXT,
ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "dueAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "idempotencyKey" TEXT,
ADD COLUMN     "language" TEXT NOT NULL DEFAULT 'en',
ADD COLUMN     "leaseUntil" TIMESTAMP(3),
ADD COLUMN     "provider" TEXT,
ADD COLUMN     "providerMessageId" TEXT,
ADD COLUMN     "recipientEnc" TEXT,
ADD COLUMN     "recipientHash" TEXT,
ADD COLUMN     "requestHash" TEXT,
ADD COLUMN     "subject" TEXT,
ADD COLUMN     "templateVersion" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "messaging"."MessageTemplate" DROP CONSTRAINT "MessageTemplate_pkey",
ADD CONSTRAINT "MessageTemplate_pkey" PRIMARY KEY ("tenantId", "id", "language");

-- CreateTable
CREATE TABLE "messaging"."MessageStatusChange" (
    "tenantId" TEXT NOT NULL,
    "messageId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "error" TEXT,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MessageStatusChange_pkey" PRIMARY KEY ("messageId","status")
);

-- CreateTable
CREATE TABLE "messaging"."MessageTemplateVersion" (
    "tenantId" TEXT NOT NULL,
    "templateId" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "subject" TEXT,
    "body" TEXT NOT NULL,
    "variables" JSONB NOT NULL,
    "createdBy" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MessageTemplateVersion_pkey" PRIMARY KEY ("tenantId","templateId","language","version")
);

-- CreateTable
CREATE TABLE "messaging"."PreferenceChange" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "before" JSONB NOT NULL,
    "after" JSONB NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PreferenceChange_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messaging"."InboundMessage" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "messageId" TEXT NOT NULL,
    "patientId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "keyword" TEXT,
    "action" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "providerMessageId" TEXT,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "InboundMessage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "MessageStatusChange_tenantId_messageId_idx" ON "messaging"."MessageStatusChange"("tenantId", "messageId");

-- CreateIndex
CREATE INDEX "PreferenceChange_tenantId_patientId_at_idx" ON "messaging"."PreferenceChange"("tenantId", "patientId", "at");

-- CreateIndex
CREATE INDEX "InboundMessage_tenantId_messageId_idx" ON "messaging"."InboundMessage"("tenantId", "messageId");

-- CreateIndex
CREATE UNIQUE INDEX "InboundMessage_provider_providerMessageId_key" ON "messaging"."InboundMessage"("provider", "providerMessageId");

-- CreateIndex
CREATE INDEX "Message_recipientHash_createdAt_idx" ON "messaging"."Message"("recipientHash", "createdAt" DESC);

-- CreateIndex
CREATE INDEX "Message_status_leaseUntil_idx" ON "messaging"."Message"("status", "leaseUntil");

-- CreateIndex
CREATE UNIQUE INDEX "Message_tenantId_idempotencyKey_key" ON "messaging"."Message"("tenantId", "idempotencyKey");

-- CreateIndex
CREATE UNIQUE INDEX "Message_provider_providerMessageId_key" ON "messaging"."Message"("provider", "providerMessageId");
