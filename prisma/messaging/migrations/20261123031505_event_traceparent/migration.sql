-- AlterTable
ALTER TABLE "messaging"."Event" ADD COLUMN     "traceparent" TEXT;

-- AlterTable
ALTER TABLE "messaging"."WebhookDelivery" ADD COLUMN     "traceparent" TEXT;
