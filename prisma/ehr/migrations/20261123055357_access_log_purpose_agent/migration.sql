-- AlterTable
ALTER TABLE "ehr"."AccessLog" ADD COLUMN     "client" TEXT,
ADD COLUMN     "purpose" TEXT,
ADD COLUMN     "tool" TEXT;
