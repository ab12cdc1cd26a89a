-- CreateTable
CREATE TABLE "messaging"."Organization" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "settings" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Organization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messaging"."OrganizationChange" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,
    "reason" TEXT,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OrganizationChange_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "OrganizationChange_organizationId_at_idx" ON "messaging"."OrganizationChange"("organizationId", "at");

-- Hand-written: the organisation change log is append-only for every role, the owner included.
CREATE FUNCTION "messaging"."refuse_change_of_append_only"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER "OrganizationChange_append_only" BEFORE UPDATE OR DELETE ON "messaging"."OrganizationChange"
  FOR EACH ROW EXECUTE FUNCTION "messaging"."refuse_change_of_append_only"();
CREATE TRIGGER "OrganizationChange_no_truncate" BEFORE TRUNCATE ON "messaging"."OrganizationChange"
  FOR EACH STATEMENT EXECUTE FUNCTION "messaging"."refuse_change_of_append_only"();
