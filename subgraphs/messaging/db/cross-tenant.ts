import type { MessagingPrisma } from './client';

/**
 * The messaging workers' look-ups across tenants: SECURITY DEFINER functions
 * of the `messaging` schema (migration `cross_tenant_work`), the only way the
 * runtime role sees past the tenant in `app.tenant_id`. They answer ids and
 * tenant ids; the work on each row then runs under its tenant
 * (`tenantClient`, common/db/tenant-session.ts).
 */

/** Prisma keeps DateTime as UTC `timestamp(3)`; a zone in a `::timestamp` literal is ignored. */
const sqlTime = (date: Date) => date.toISOString();

export interface TenantRow {
  id: string;
  tenantId: string;
}

export async function tenantsWithUndispatchedEvents(prisma: MessagingPrisma): Promise<string[]> {
  const rows = await prisma.$queryRaw<{ t: string }[]>`SELECT t FROM messaging.tenants_with_undispatched_events() AS t`;
  return rows.map((r) => r.t);
}

/** Up to `limit` due deliveries, no subscription getting more than `perEndpoint` in flight (over every worker). */
export function claimDueWebhookDeliveries(
  prisma: MessagingPrisma,
  token: string,
  leaseUntil: Date,
  now: Date,
  limit: number,
  perEndpoint: number,
): Promise<TenantRow[]> {
  return prisma.$queryRaw<TenantRow[]>`
    SELECT id, "tenantId" FROM messaging.claim_due_webhook_deliveries(${token}, ${sqlTime(leaseUntil)}::timestamp, ${sqlTime(now)}::timestamp, ${limit}::int, ${perEndpoint}::int)`;
}

export async function nextWebhookDeliveryDue(prisma: MessagingPrisma, now: Date): Promise<Date | null> {
  const rows = await prisma.$queryRaw<{ due: Date | null }[]>`SELECT messaging.next_webhook_delivery_due(${sqlTime(now)}::timestamp) AS due`;
  return rows[0]?.due ?? null;
}

export async function purgeWebhookDeliveries(prisma: MessagingPrisma, olderThan: Date, limit: number): Promise<number> {
  const rows = await prisma.$queryRaw<{ n: number }[]>`SELECT messaging.purge_webhook_deliveries(${sqlTime(olderThan)}::timestamp, ${limit}::int) AS n`;
  return rows[0]?.n ?? 0;
}

export async function purgeDispatchedEvents(prisma: MessagingPrisma, olderThan: Date, limit: number): Promise<number> {
  const rows = await prisma.$queryRaw<{ n: number }[]>`SELECT messaging.purge_dispatched_events(${sqlTime(olderThan)}::timestamp, ${limit}::int) AS n`;
  return rows[0]?.n ?? 0;
}

export function staleSends(prisma: MessagingPrisma, now: Date, limit: number): Promise<TenantRow[]> {
  return prisma.$queryRaw<TenantRow[]>`SELECT id, "tenantId" FROM messaging.stale_sends(${sqlTime(now)}::timestamp, ${limit}::int)`;
}

/** Held messages (their `dueAt` set after their last change) that are still queued and due at `now`. */
export function overdueHeldMessages(prisma: MessagingPrisma, now: Date, limit: number): Promise<TenantRow[]> {
  return prisma.$queryRaw<TenantRow[]>`SELECT id, "tenantId" FROM messaging.overdue_held_messages(${sqlTime(now)}::timestamp, ${limit}::int)`;
}

export async function latestSmsTo(prisma: MessagingPrisma, recipientHash: string): Promise<TenantRow | null> {
  const rows = await prisma.$queryRaw<TenantRow[]>`SELECT id, "tenantId" FROM messaging.latest_sms_to(${recipientHash})`;
  return rows[0] ?? null;
}

export async function messageByProviderId(prisma: MessagingPrisma, provider: string, providerMessageId: string): Promise<TenantRow | null> {
  const rows = await prisma.$queryRaw<TenantRow[]>`SELECT id, "tenantId" FROM messaging.message_by_provider_id(${provider}, ${providerMessageId})`;
  return rows[0] ?? null;
}

/** Tables of keys/seal.ts with rows to seal (legacy plaintext) or, with `everyRow`, any rows, and their tenants. */
export function tenantsToSeal(prisma: MessagingPrisma, everyRow: boolean): Promise<Array<{ table: string; tenantId: string }>> {
  return prisma.$queryRaw`SELECT "table", "tenantId" FROM messaging.tenants_to_seal(${everyRow}::boolean)`;
}
