-- A clinical note's document type gets a row of its own, at the AQL path of the context element named
-- "Document type" (the title shares its node id), so DocumentReference search by type runs in SQL.
-- The rows of existing compositions lack it: those of the document area (every note a search reads), and any
-- other composition with a coded leaf at that element's node path, are deleted, and so are the tenants' marks,
-- so the ehr subgraph's start-up backfill indexes them again (it indexes the compositions without rows).
DELETE FROM "ehr"."ClinicalIndexEntry"
WHERE ("tenantId", "compositionId") IN (
  SELECT "tenantId", "id" FROM "ehr"."Composition" WHERE "area" = 'document'
  UNION
  SELECT "tenantId", "compositionId" FROM "ehr"."ClinicalIndexEntry"
  WHERE "entryArchetypeId" IS NULL AND "path" = '/context/other_context[at0001]/items[at0007]/value' AND "rmType" = 'DV_CODED_TEXT'
);

DELETE FROM "ehr"."ClinicalIndexBackfill";
