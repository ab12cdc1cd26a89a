import type { FieldCipher } from '../../../common/crypto';
import type { EventBus } from '../../../common/events/bus';
import { newEventId, type PlatformEvent, type WebhookEventType } from '../../../common/events/types';
import type { Prisma } from '../db/generated/client';
import { sealJson } from '../sealed';
import { traceCarrier } from '../../../common/telemetry/tracing';

/** A Prisma client or interactive transaction of the messaging schema. */
type Tx = Pick<Prisma.TransactionClient, 'event'>;

/**
 * Writes a webhook event into the outbox in the caller's transaction, so the
 * event exists exactly when the change it reports was committed. Publish the
 * returned event on the bus after the commit (`publishCommitted`). The data
 * is stored encrypted (a reply's text is patient content).
 */
export async function recordEvent<T extends object>(
  tx: Tx,
  cipher: FieldCipher,
  tenantId: string,
  type: WebhookEventType,
  data: T,
  at = new Date(),
): Promise<PlatformEvent<T>> {
  const id = newEventId();
  // The active trace (none without tracing) is kept with the event, for the webhook attempts it leads to.
  await tx.event.create({ data: { tenantId, id, type, dataEnc: sealJson(cipher, data), createdAt: at, traceparent: traceCarrier().traceparent ?? null } });
  return { id, type, timestamp: at.toISOString(), data, tenantId };
}

/** Live fan-out of committed events; a lost publish costs a live update, never a webhook. */
export async function publishCommitted(bus: EventBus, events: PlatformEvent<any>[]): Promise<void> {
  for (const event of events) await bus.publish(event);
}
