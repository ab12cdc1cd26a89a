-- AlterTable
ALTER TABLE "ehr"."ClinicalTemplate" ADD COLUMN     "opt" TEXT;
