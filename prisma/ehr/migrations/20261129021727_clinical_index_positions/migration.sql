-- Index rows say where in the composition their object sits (one position per step of the path), so AQL can pair
-- the values of one instance of a repeated event or cluster (docs/security.md "Clinical index").
-- AlterTable
ALTER TABLE "ehr"."ClinicalIndexEntry" ADD COLUMN     "positions" INTEGER[];

-- Existing rows have none: the ehr subgraph's start-up backfill indexes again, composition by composition, every
-- composition whose row 0 lacks them, once the tenants' marks are cleared. The rows stay until then, so a process
-- of the previous release keeps answering from them.
DELETE FROM "ehr"."ClinicalIndexBackfill";
