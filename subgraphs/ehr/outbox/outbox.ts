import { newEventId } from '../../../common/events/types';
import type { Prisma } from '../db/generated/client';
import type { TenantTx } from '../db/tenant';

/** Event types the clinical record emits (the webhook event names). */
export type ClinicalEventType = 'appointment.booked' | 'appointment.rescheduled' | 'appointment.confirmed' | 'appointment.cancelled';

/**
 * Writes an event into the clinical record's outbox in the transaction of the
 * change it reports: the change and its event commit together or not at all.
 * The worker's relay moves it into messaging's event pipeline (webhooks,
 * subscriptions) with this id, so a repeated relay cannot duplicate it.
 */
export async function recordClinicalEvent(
  tx: Pick<TenantTx, 'outboxEvent'>,
  tenantId: string,
  type: ClinicalEventType,
  data: Record<string, unknown>,
  requestKey: string | null,
): Promise<string> {
  const id = newEventId();
  await tx.outboxEvent.create({ data: { tenantId, id, type, data: data as Prisma.InputJsonValue, requestKey } });
  return id;
}
