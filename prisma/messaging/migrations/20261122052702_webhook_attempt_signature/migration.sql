-- AlterTable
ALTER TABLE "messaging"."WebhookAttempt" ADD COLUMN     "signature" TEXT;
