-- AlterTable
ALTER TABLE "ehr"."Patient" ALTER COLUMN "family" DROP NOT NULL;
