-- DropIndex
DROP INDEX "messaging"."InboundMessage_provider_providerMessageId_key";

-- CreateIndex
CREATE UNIQUE INDEX "InboundMessage_tenantId_provider_providerMessageId_key" ON "messaging"."InboundMessage"("tenantId", "provider", "providerMessageId");
