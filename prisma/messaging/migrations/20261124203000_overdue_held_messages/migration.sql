-- Held messages due on the worker's clock (delivery worker sweep): still queued, `dueAt` passed, and due later
-- than their last change, i.e. their job was issued with a delay that pg-boss counts in database time.
CREATE FUNCTION "messaging"."overdue_held_messages"(now_at timestamp, max_rows int)
RETURNS TABLE (id text, "tenantId" text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, messaging AS $$
  SELECT id, "tenantId" FROM "messaging"."Message"
  WHERE status = 'queued' AND "dueAt" <= now_at AND "dueAt" > "updatedAt"
  LIMIT max_rows
$$;
REVOKE ALL ON FUNCTION "messaging"."overdue_held_messages"(timestamp, int) FROM PUBLIC;
