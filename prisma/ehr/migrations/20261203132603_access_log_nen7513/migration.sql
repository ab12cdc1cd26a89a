-- AlterTable
ALTER TABLE "ehr"."AccessLog" ADD COLUMN     "dataCategory" TEXT,
ADD COLUMN     "grounds" TEXT,
ADD COLUMN     "responsibleUser" TEXT,
ALTER COLUMN "hashVersion" SET DEFAULT 3;
