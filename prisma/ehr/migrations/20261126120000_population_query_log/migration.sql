-- A population statistic (an AQL answer of aggregates only, over many patients) is logged as one entry for
-- its query, which names no patient, instead of an entry per composition (docs/security.md "Access log").
-- AlterTable
ALTER TABLE "ehr"."AccessLog" ADD COLUMN     "detail" JSONB,
ALTER COLUMN "patientId" DROP NOT NULL;
