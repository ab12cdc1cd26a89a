import type { FieldCipher } from '../../../common/crypto';
import type { EventBus } from '../../../common/events/bus';
import type { PlatformEvent, WebhookEventType } from '../../../common/events/types';
import { inTenant } from '../../../common/db/tenant-session';
import type { MessagingPrisma } from '../db/client';
import type { Tx } from '../delivery/transitions';
import { sealJson } from '../sealed';
import { publishCommitted } from './outbox';
import type PgBoss from 'pg-boss';
import { scheduleReminders } from '../reminders/schedule';
import type { Clock } from '../../../common/clock';

const RELAY_BATCH = 200;

interface ClinicalOutboxRow {
  tenantId: string;
  id: string;
  type: string;
  data: unknown;
  /** ISO 8601 text: the column is a UTC `timestamp(3)` and raw drivers may read it in the local zone. */
  createdAt: string;
}

/**
 * Moves the clinical record's outbox (`ehr.OutboxEvent`, written in the
 * transaction of each appointment change) into messaging's event table, from
 * where the dispatcher makes webhook deliveries. Copy and mark happen in one
 * transaction and the copy keeps the event's id, type, time and data, so a
 * relay that dies midway leaves either both or neither, and a repeated copy
 * is a no-op (the id is the key). SKIP LOCKED lets several workers relay side
 * by side. The data is sealed like every messaging event's. Appointment
 * events schedule, move or cancel the appointment's reminder in the same
 * transaction (reminders/schedule.ts). After the commit the events go out on the live bus
 * (subscriptions): a lost publish costs a live update, never a webhook.
 * Returns how many events were moved (at most one batch per tenant).
 */
export async function relayClinicalEvents(prisma: MessagingPrisma, cipher: FieldCipher, bus: EventBus, boss: PgBoss, clock: Clock): Promise<number> {
  // Row-level security: the runtime role sees no outbox row without a tenant. The
  // owner's function names the tenants with work (nothing new: one cheap query),
  // then each tenant's batch is copied and marked under that tenant.
  const tenants = await prisma.$queryRaw<{ t: string }[]>`SELECT t FROM ehr.tenants_with_unrelayed_events() AS t`;
  let moved = 0;
  for (const { t: tenantId } of tenants) moved += await relayTenant(prisma, cipher, bus, boss, clock, tenantId);
  return moved;
}

async function relayTenant(prisma: MessagingPrisma, cipher: FieldCipher, bus: EventBus, boss: PgBoss, clock: Clock, tenantId: string): Promise<number> {
  const events = await inTenant(prisma, tenantId, async (tx: Tx) => {
    const rows = await tx.$queryRaw<ClinicalOutboxRow[]>`
      SELECT "tenantId", id, type, data, to_char("createdAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt"
      FROM "ehr"."OutboxEvent" WHERE "tenantId" = ${tenantId} AND "relayedAt" IS NULL
      ORDER BY "createdAt" LIMIT ${RELAY_BATCH}::int FOR UPDATE SKIP LOCKED`;
    if (rows.length === 0) return [];
    const parsed = rows.map((row) => ({
      ...row,
      createdAt: new Date(row.createdAt),
      data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
    }));
    await tx.event.createMany({
      data: parsed.map((row) => ({ tenantId: row.tenantId, id: row.id, type: row.type, dataEnc: sealJson(cipher, row.data), createdAt: row.createdAt })),
      skipDuplicates: true,
    });
    const ids = rows.map((row) => row.id);
    await tx.$executeRaw`UPDATE "ehr"."OutboxEvent" SET "relayedAt" = now() WHERE id = ANY(${ids}::text[])`;
    await scheduleReminders(tx, boss, tenantId, parsed, clock);
    return parsed.map((row): PlatformEvent<Record<string, unknown>> => ({
      id: row.id,
      type: row.type as WebhookEventType,
      timestamp: row.createdAt.toISOString(),
      data: row.data,
      tenantId: row.tenantId,
    }));
  });
  await publishCommitted(bus, events);
  return events.length;
}
