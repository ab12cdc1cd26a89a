-- AlterTable
ALTER TABLE "messaging"."Event" ADD COLUMN     "dataEnc" TEXT,
ALTER COLUMN "data" DROP NOT NULL;

-- AlterTable
ALTER TABLE "messaging"."InboundMessage" ADD COLUMN     "bodyEnc" TEXT,
ALTER COLUMN "body" DROP NOT NULL;

-- AlterTable
ALTER TABLE "messaging"."Message" ADD COLUMN     "bodyEnc" TEXT,
ADD COLUMN     "subjectEnc" TEXT,
ADD COLUMN     "variablesEnc" TEXT,
ALTER COLUMN "variables" DROP NOT NULL,
ALTER COLUMN "body" DROP NOT NULL;

-- AlterTable
ALTER TABLE "messaging"."WebhookDelivery" ADD COLUMN     "payloadEnc" TEXT,
ALTER COLUMN "payload" DROP NOT NULL;
