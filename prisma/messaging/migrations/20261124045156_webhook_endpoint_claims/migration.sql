-- CreateIndex
CREATE INDEX "WebhookDelivery_subscriptionId_status_nextAttemptAt_idx" ON "messaging"."WebhookDelivery"("subscriptionId", "status", "nextAttemptAt");

-- Claims are bounded per endpoint: a subscription gets at most `per_endpoint` deliveries in flight at once,
-- counted over every worker (a pending row with a live lease is in flight), so a slow endpoint cannot take
-- every slot. Each active subscription with room contributes its oldest due deliveries, up to `max_rows` in all.
DROP FUNCTION "messaging"."claim_due_webhook_deliveries"(text, timestamp, timestamp, int);
CREATE FUNCTION "messaging"."claim_due_webhook_deliveries"(lease_token text, lease_until timestamp, now_at timestamp, max_rows int, per_endpoint int)
RETURNS TABLE (id text, "tenantId" text)
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, messaging AS $$
  WITH busy AS (
    SELECT "subscriptionId", count(*)::int AS n FROM "messaging"."WebhookDelivery"
    WHERE status = 'pending' AND "leaseUntil" >= now_at
    GROUP BY "subscriptionId"
  ), room AS (
    SELECT s.id, per_endpoint - coalesce(b.n, 0) AS free
    FROM "messaging"."WebhookSubscription" s LEFT JOIN busy b ON b."subscriptionId" = s.id
    WHERE s.status = 'active' AND per_endpoint - coalesce(b.n, 0) > 0
    -- A different order on every claim, so no endpoint is always served last when max_rows runs out.
    ORDER BY random()
  ), picked AS (
    SELECT x.id FROM room, LATERAL (
      SELECT d.id FROM "messaging"."WebhookDelivery" d
      WHERE d."subscriptionId" = room.id AND d.status = 'pending' AND d."nextAttemptAt" <= now_at
        AND (d."leaseUntil" IS NULL OR d."leaseUntil" < now_at)
      ORDER BY d."nextAttemptAt" LIMIT room.free
      FOR UPDATE SKIP LOCKED) x
    LIMIT max_rows
  )
  UPDATE "messaging"."WebhookDelivery" d SET "leaseToken" = lease_token, "leaseUntil" = lease_until
  WHERE d.id IN (SELECT id FROM picked)
  RETURNING d.id, d."tenantId"
$$;
REVOKE ALL ON FUNCTION "messaging"."claim_due_webhook_deliveries"(text, timestamp, timestamp, int, int) FROM PUBLIC;
