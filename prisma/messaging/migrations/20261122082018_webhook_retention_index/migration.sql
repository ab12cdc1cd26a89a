-- CreateIndex
CREATE INDEX "WebhookDelivery_createdAt_idx" ON "messaging"."WebhookDelivery"("createdAt");
