import { randomUUID } from 'node:crypto';
import type { EventBus } from '../../../common/events/bus';
import type { PlatformEvent, WebhookEventType } from '../../../common/events/types';
import type { Prisma } from '../db/generated/client';

/** A Prisma client or interactive transaction of the messaging schema. */
type Tx = Pick<Prisma.TransactionClient, 'event'>;

/**
 * Writes a webhook event into the outbox in the caller's transaction, so the
 * event exists exactly when the change it reports was committed. Publish the
 * returned event on the bus after the commit (`publishCommitted`).
 */
export async function recordEvent<T extends object>(tx: Tx, tenantId: string, type: WebhookEventType, data: T, at = new Date()): Promise<PlatformEvent<T>> {
  const id = `evt_${randomUUID()}`;
  await tx.event.create({ data: { tenantId, id, type, data: data as Prisma.InputJsonValue, createdAt: at } });
  return { id, type, timestamp: at.toISOString(), data, tenantId };
}

/** Live fan-out of committed events; a lost publish costs a live update, never a webhook. */
export async function publishCommitted(bus: EventBus, events: PlatformEvent<any>[]): Promise<void> {
  for (const event of events) await bus.publish(event);
}
