-- CreateTable
CREATE TABLE "ehr"."ClinicalValueCount" (
    "tenantId" TEXT NOT NULL,
    "entryArchetypeId" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "rmType" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "magnitude" DOUBLE PRECISION NOT NULL,
    "templateId" TEXT NOT NULL,
    "area" TEXT NOT NULL,
    "entriesAtMax" INTEGER NOT NULL DEFAULT 0,
    "entriesAtMin" INTEGER NOT NULL DEFAULT 0,
    "compositionsAtMax" INTEGER NOT NULL DEFAULT 0,
    "compositionsAtMin" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "ClinicalValueCount_pkey" PRIMARY KEY ("tenantId","entryArchetypeId","path","rmType","day","magnitude","templateId","area")
);

-- CreateTable
CREATE TABLE "ehr"."ClinicalValueCountChange" (
    "id" BIGSERIAL NOT NULL,
    "tenantId" TEXT NOT NULL,
    "txid" BIGINT NOT NULL,
    "changes" JSONB NOT NULL,

    CONSTRAINT "ClinicalValueCountChange_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ehr"."ClinicalValueCountPending" (
    "tenantId" TEXT NOT NULL,
    "txid" BIGINT NOT NULL,

    CONSTRAINT "ClinicalValueCountPending_pkey" PRIMARY KEY ("tenantId","txid")
);

-- CreateIndex
CREATE INDEX "ClinicalValueCountChange_tenantId_txid_idx" ON "ehr"."ClinicalValueCountChange"("tenantId", "txid");

-- The counts are kept by the database, whatever writes the index rows (a commit, the start-up backfill, a
-- cascade from a deleted composition, a bulk load): each statement on ClinicalIndexEntry stages the change it
-- makes, and the transaction applies its staged changes once, at commit, in one statement in key order, so
-- commits that share counts lock them in the same order and cannot deadlock on them (docs/exchange.md
-- "Evaluation and its limits"). A statement writes or removes every row of a composition at once (its index
-- is replaced whole), which is what lets an entry's highest and lowest values be taken from one statement's rows.

-- The counts a set of index rows (`source`, a table or transition table) adds, times `sign`: an entry (composition,
-- archetype, ordinal) and a composition count once per path, at their highest and at their lowest value, on the
-- day of the composition's start time, or on '-infinity' when it has none (a persistent composition has no context),
-- which no start-time window takes.
CREATE FUNCTION "ehr"."value_count_deltas_sql"(source text, sign integer) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
SELECT format($q$
  WITH v AS (
    SELECT "tenantId", "compositionId", "entryArchetypeId", "entryOrdinal", "path", "rmType", coalesce("startTime"::date, '-infinity') AS "day",
      "templateId", "area", "magnitude"
    FROM %1$s WHERE "magnitude" IS NOT NULL AND "entryArchetypeId" IS NOT NULL),
  e AS (
    SELECT "tenantId", "entryArchetypeId", "path", "rmType", "day", "templateId", "area", max("magnitude") AS hi, min("magnitude") AS lo
    FROM v GROUP BY "tenantId", "compositionId", "entryArchetypeId", "entryOrdinal", "path", "rmType", "day", "templateId", "area"),
  c AS (
    SELECT "tenantId", "entryArchetypeId", "path", "rmType", "day", "templateId", "area", max("magnitude") AS hi, min("magnitude") AS lo
    FROM v GROUP BY "tenantId", "compositionId", "entryArchetypeId", "path", "rmType", "day", "templateId", "area"),
  marks AS (
    SELECT "tenantId", "entryArchetypeId", "path", "rmType", "day", hi AS "magnitude", "templateId", "area", 1 AS em, 0 AS en, 0 AS cm, 0 AS cn FROM e
    UNION ALL SELECT "tenantId", "entryArchetypeId", "path", "rmType", "day", lo, "templateId", "area", 0, 1, 0, 0 FROM e
    UNION ALL SELECT "tenantId", "entryArchetypeId", "path", "rmType", "day", hi, "templateId", "area", 0, 0, 1, 0 FROM c
    UNION ALL SELECT "tenantId", "entryArchetypeId", "path", "rmType", "day", lo, "templateId", "area", 0, 0, 0, 1 FROM c)
  SELECT "tenantId", "entryArchetypeId", "path", "rmType", "day", "magnitude", "templateId", "area",
    (%2$s * sum(em))::int AS "entriesAtMax", (%2$s * sum(en))::int AS "entriesAtMin",
    (%2$s * sum(cm))::int AS "compositionsAtMax", (%2$s * sum(cn))::int AS "compositionsAtMin"
  FROM marks GROUP BY "tenantId", "entryArchetypeId", "path", "rmType", "day", "magnitude", "templateId", "area"$q$, source, sign)
$fn$;

-- The staging of those counts: one row per statement and tenant, the counts as JSON.
CREATE FUNCTION "ehr"."stage_value_counts_sql"(source text, sign integer) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
SELECT 'INSERT INTO "ehr"."ClinicalValueCountChange" ("tenantId", "txid", "changes")
  SELECT d."tenantId", txid_current(), jsonb_agg(to_jsonb(d) - ''tenantId'') FROM (' || "ehr"."value_count_deltas_sql"(source, sign) || ') d
  GROUP BY d."tenantId"'
$fn$;

-- Statement triggers on the index rows: stage what the statement changed, and mark the transaction for the apply.
CREATE FUNCTION "ehr"."stage_value_counts"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  -- Nested: a condition naming a transition table the trigger lacks fails to plan.
  IF TG_OP <> 'INSERT' THEN
    IF EXISTS (SELECT 1 FROM old_rows WHERE "magnitude" IS NOT NULL AND "entryArchetypeId" IS NOT NULL) THEN
      EXECUTE "ehr"."stage_value_counts_sql"('old_rows', -1);
      INSERT INTO "ehr"."ClinicalValueCountPending" ("tenantId", "txid") SELECT DISTINCT "tenantId", txid_current() FROM old_rows ON CONFLICT DO NOTHING;
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    IF EXISTS (SELECT 1 FROM new_rows WHERE "magnitude" IS NOT NULL AND "entryArchetypeId" IS NOT NULL) THEN
      EXECUTE "ehr"."stage_value_counts_sql"('new_rows', 1);
      INSERT INTO "ehr"."ClinicalValueCountPending" ("tenantId", "txid") SELECT DISTINCT "tenantId", txid_current() FROM new_rows ON CONFLICT DO NOTHING;
    END IF;
  END IF;
  RETURN NULL;
END
$fn$;

-- At commit (deferred), once per tenant and transaction: the staged changes summed, added in key order.
CREATE FUNCTION "ehr"."apply_value_counts"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  WITH moved AS (
    DELETE FROM "ehr"."ClinicalValueCountChange" s WHERE s."tenantId" = NEW."tenantId" AND s."txid" = NEW."txid" RETURNING s."changes"),
  summed AS (
    SELECT NEW."tenantId" AS "tenantId", c."entryArchetypeId", c."path", c."rmType", c."day", c."magnitude", c."templateId", c."area",
      sum(c."entriesAtMax")::int AS em, sum(c."entriesAtMin")::int AS en, sum(c."compositionsAtMax")::int AS cm, sum(c."compositionsAtMin")::int AS cn
    FROM moved, jsonb_to_recordset(moved."changes") AS c("entryArchetypeId" text, "path" text, "rmType" text, "day" date, "magnitude" float8,
      "templateId" text, "area" text, "entriesAtMax" int, "entriesAtMin" int, "compositionsAtMax" int, "compositionsAtMin" int)
    GROUP BY c."entryArchetypeId", c."path", c."rmType", c."day", c."magnitude", c."templateId", c."area")
  INSERT INTO "ehr"."ClinicalValueCount" AS k ("tenantId", "entryArchetypeId", "path", "rmType", "day", "magnitude", "templateId", "area",
    "entriesAtMax", "entriesAtMin", "compositionsAtMax", "compositionsAtMin")
  SELECT * FROM summed WHERE em <> 0 OR en <> 0 OR cm <> 0 OR cn <> 0
  ORDER BY "tenantId", "entryArchetypeId", "path", "rmType", "day", "magnitude", "templateId", "area"
  ON CONFLICT ("tenantId", "entryArchetypeId", "path", "rmType", "day", "magnitude", "templateId", "area") DO UPDATE SET
    "entriesAtMax" = k."entriesAtMax" + EXCLUDED."entriesAtMax", "entriesAtMin" = k."entriesAtMin" + EXCLUDED."entriesAtMin",
    "compositionsAtMax" = k."compositionsAtMax" + EXCLUDED."compositionsAtMax", "compositionsAtMin" = k."compositionsAtMin" + EXCLUDED."compositionsAtMin";
  DELETE FROM "ehr"."ClinicalValueCountPending" WHERE "tenantId" = NEW."tenantId" AND "txid" = NEW."txid";
  RETURN NULL;
END
$fn$;

CREATE TRIGGER "value_counts_insert" AFTER INSERT ON "ehr"."ClinicalIndexEntry"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "ehr"."stage_value_counts"();
CREATE TRIGGER "value_counts_update" AFTER UPDATE ON "ehr"."ClinicalIndexEntry"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "ehr"."stage_value_counts"();
CREATE TRIGGER "value_counts_delete" AFTER DELETE ON "ehr"."ClinicalIndexEntry"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "ehr"."stage_value_counts"();
CREATE CONSTRAINT TRIGGER "apply_value_counts" AFTER INSERT ON "ehr"."ClinicalValueCountPending"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "ehr"."apply_value_counts"();

-- The counts of the rows already indexed, in one pass over them.
DO $$
BEGIN
  EXECUTE 'INSERT INTO "ehr"."ClinicalValueCount" SELECT * FROM (' || "ehr"."value_count_deltas_sql"('"ehr"."ClinicalIndexEntry"', 1) || ') d';
END
$$;
