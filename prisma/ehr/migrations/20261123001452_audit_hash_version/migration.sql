-- AlterTable
ALTER TABLE "ehr"."AuditRecord" ADD COLUMN     "hashVersion" INTEGER NOT NULL DEFAULT 1;
