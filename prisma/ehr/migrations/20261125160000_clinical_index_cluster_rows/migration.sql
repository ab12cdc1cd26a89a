-- Archetyped clusters in entries get a row of their own, numbered per path, so the index can tell how many analytes a lab result has.
ALTER TABLE "ehr"."ClinicalIndexEntry" ADD COLUMN "ordinal" INTEGER;

-- The rows of existing compositions lack them: the ehr subgraph's start-up backfill indexes again every composition without rows.
DELETE FROM "ehr"."ClinicalIndexEntry";
