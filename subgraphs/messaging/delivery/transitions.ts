import type { FieldCipher } from '../../../common/crypto';
import type { EventBus } from '../../../common/events/bus';
import { newEventId, type MessageEventData, type PlatformEvent, type WebhookEventType } from '../../../common/events/types';
import type { MessagingPrisma } from '../db/client';
import type { Message as MessageRow, Prisma } from '../db/generated/client';
import { publishCommitted, recordEvent } from '../events/outbox';
import { isMessageStatus, planTransition, type MessageStatus } from './status';
import type { MessagingMetrics } from '../metrics';

export type Tx = Prisma.TransactionClient;

const WEBHOOK_TYPE: Partial<Record<MessageStatus, WebhookEventType>> = {
  sent: 'message.sent',
  delivered: 'message.delivered',
  failed: 'message.failed',
};

/** The bus-only `message.status` event (every status, for GraphQL subscriptions). */
export function statusEvent(
  message: Pick<MessageRow, 'id' | 'tenantId' | 'patientId' | 'channel'>,
  status: MessageStatus,
  error?: string | null,
  at = new Date(),
): PlatformEvent<MessageEventData> {
  return {
    id: newEventId(),
    type: 'message.status',
    timestamp: at.toISOString(),
    tenantId: message.tenantId,
    data: { messageId: message.id, patientId: message.patientId, channel: message.channel, status, ...(error ? { error } : {}) },
  };
}

/**
 * Records `statuses` for a message inside `tx`: one history row per status
 * (the (messageId, status) key refuses a second one), the outbox events of
 * docs/api.md §6, and returns the bus events to publish after commit.
 */
async function recordStatuses(
  tx: Tx,
  cipher: FieldCipher,
  message: MessageRow,
  statuses: MessageStatus[],
  error: string | null,
  at = new Date(),
): Promise<PlatformEvent<any>[]> {
  const published: PlatformEvent<any>[] = [];
  for (const status of statuses) {
    const statusError = status === 'failed' ? error : null;
    await tx.messageStatusChange.create({ data: { tenantId: message.tenantId, messageId: message.id, status, error: statusError, at } });
    const data: MessageEventData = {
      messageId: message.id,
      patientId: message.patientId,
      channel: message.channel,
      status,
      ...(statusError ? { error: statusError } : {}),
    };
    const webhookType = WEBHOOK_TYPE[status];
    if (webhookType) published.push(await recordEvent(tx, cipher, message.tenantId, webhookType, data, at));
    published.push(statusEvent(message, status, statusError, at));
  }
  return published;
}

export interface AdvanceOptions {
  error?: string | null;
  /** Extra columns to set with the status (provider ids, lease). */
  set?: Prisma.MessageUpdateManyMutationInput;
  /** More work in the same transaction (e.g. the simulator's delivery report job). */
  also?: (tx: Tx, message: MessageRow) => Promise<void>;
}

/**
 * The one way a message's status changes after acceptance: plans the move
 * with the state machine, applies it with a compare-and-set on the current
 * status (a concurrent change makes it re-read and re-plan), and publishes
 * the events once committed. Returns the statuses recorded (empty: nothing to
 * do, e.g. a duplicate or late provider callback).
 */
/** What a status change needs: the database, the live bus, the cipher of the outbox, and where transitions are counted. */
export interface StatusDeps {
  prisma: MessagingPrisma;
  events: EventBus;
  cipher: FieldCipher;
  metrics: MessagingMetrics;
}

export async function advanceStatus(
  { prisma, events: bus, cipher, metrics }: StatusDeps,
  where: { id: string } | { provider: string; providerMessageId: string },
  target: MessageStatus,
  options: AdvanceOptions = {},
): Promise<{ message: MessageRow | null; recorded: MessageStatus[] }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const message =
      'id' in where
        ? await prisma.message.findUnique({ where: { id: where.id } })
        : await prisma.message.findUnique({ where: { provider_providerMessageId: where } });
    if (!message || !isMessageStatus(message.status)) return { message, recorded: [] };
    const plan = planTransition(message.status, target);
    if (plan.length === 0) return { message, recorded: [] };
    const error = target === 'failed' ? (options.error ?? 'delivery failed') : null;
    const result = await prisma.$transaction(async (tx) => {
      const updated = await tx.message.updateMany({
        where: { id: message.id, status: message.status },
        data: { ...options.set, status: target, error, ...(target === 'sending' ? {} : { leaseUntil: null }) },
      });
      if (updated.count === 0) return null;
      const events = await recordStatuses(tx, cipher, message, plan, error);
      await options.also?.(tx, message);
      return events;
    });
    if (result) {
      countTransitions(metrics, message, plan);
      await publishCommitted(bus, result);
      return { message: { ...message, status: target, error }, recorded: plan };
    }
  }
  throw new Error(`message ${'id' in where ? where.id : where.providerMessageId} kept changing; gave up`);
}

/** Counts each committed step of a move (queued → sent records sending and sent) and the queued → delivered time. */
function countTransitions(metrics: MessagingMetrics, message: MessageRow, plan: MessageStatus[]): void {
  let from: string = message.status;
  for (const to of plan) {
    metrics.statusChanged(from, to, message.channel);
    if (to === 'delivered') metrics.delivered(message.channel, Math.max(0, Date.now() - message.createdAt.getTime()) / 1000);
    from = to;
  }
}
