-- CreateTable
CREATE TABLE "ehr"."ClinicalIndexBackfill" (
    "tenantId" TEXT NOT NULL,
    "completedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ClinicalIndexBackfill_pkey" PRIMARY KEY ("tenantId")
);

-- Row-level security: the rule every table with a "tenantId" gets at start-up (common/db/roles.ts).

-- Hand-written: the tenants with records, found by walking the two indexes from one tenant to the next (a
-- handful of index probes per tenant) instead of reading every row of both tables at every start.
CREATE OR REPLACE FUNCTION "ehr"."tenants_with_records"() RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, ehr AS $$
  WITH RECURSIVE
    patients(t) AS (
      (SELECT "tenantId" FROM "ehr"."Patient" ORDER BY 1 LIMIT 1)
      UNION ALL
      SELECT (SELECT "tenantId" FROM "ehr"."Patient" WHERE "tenantId" > patients.t ORDER BY 1 LIMIT 1) FROM patients WHERE patients.t IS NOT NULL),
    versions(t) AS (
      (SELECT "tenantId" FROM "ehr"."CompositionVersion" ORDER BY 1 LIMIT 1)
      UNION ALL
      SELECT (SELECT "tenantId" FROM "ehr"."CompositionVersion" WHERE "tenantId" > versions.t ORDER BY 1 LIMIT 1) FROM versions WHERE versions.t IS NOT NULL)
  SELECT t FROM patients WHERE t IS NOT NULL UNION SELECT t FROM versions WHERE t IS NOT NULL ORDER BY 1
$$;
