-- AlterTable
ALTER TABLE "messaging"."WebhookSubscription" ADD COLUMN     "previousSecret" TEXT,
ADD COLUMN     "previousUntil" TIMESTAMP(3);
