-- AlterTable
ALTER TABLE "messaging"."Message" ADD COLUMN     "sendAt" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "Message_tenantId_status_createdAt_idx" ON "messaging"."Message"("tenantId", "status", "createdAt" DESC);

-- The delivery sweep also releases scheduled messages due on the worker's clock (their job's delay is counted in
-- database time): a scheduled message's `dueAt` is its `sendAt`, later than its last change until it is released.
CREATE OR REPLACE FUNCTION "messaging"."overdue_held_messages"(now_at timestamp, max_rows int)
RETURNS TABLE (id text, "tenantId" text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, messaging AS $$
  SELECT id, "tenantId" FROM "messaging"."Message"
  WHERE status IN ('queued', 'scheduled') AND "dueAt" <= now_at AND "dueAt" > "updatedAt"
  LIMIT max_rows
$$;
