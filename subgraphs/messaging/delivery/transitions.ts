import type { FieldCipher } from '../../../common/crypto';
import type { EventBus } from '../../../common/events/bus';
import { newEventId, type MessageEventData, type PlatformEvent, type WebhookEventType } from '../../../common/events/types';
import type { MessagingPrisma } from '../db/client';
import type { Message as MessageRow, Prisma } from '../db/generated/client';
import { publishCommitted, recordEvent } from '../events/outbox';
import { sealJson } from '../sealed';
import { tenantClient } from '../../../common/db/tenant-session';
import { traceCarrier } from '../../../common/telemetry/tracing';
import { isMessageStatus, planTransition, type MessageStatus } from './status';
import type { MessagingMetrics } from '../metrics';
import { systemClock, type Clock } from '../../../common/clock';

export type Tx = Prisma.TransactionClient;

const WEBHOOK_TYPE: Partial<Record<MessageStatus, WebhookEventType>> = {
  sent: 'message.sent',
  delivered: 'message.delivered',
  failed: 'message.failed',
  cancelled: 'message.cancelled',
};

/** The bus-only `message.status` event (every status, for GraphQL subscriptions). */
export function statusEvent(
  message: Pick<MessageRow, 'id' | 'tenantId' | 'patientId' | 'channel'>,
  status: MessageStatus,
  error: string | null | undefined,
  at: Date,
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
  at: Date,
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
/** What a status change needs: the database, the live bus, the cipher of the outbox, where transitions are counted, and the time they are recorded at (default: the system clock). */
export interface StatusDeps {
  prisma: MessagingPrisma;
  events: EventBus;
  cipher: FieldCipher;
  metrics: MessagingMetrics;
  clock?: Clock;
}

export async function advanceStatus(
  { prisma, events: bus, cipher, metrics, clock = systemClock }: StatusDeps,
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
    const at = clock.now();
    const result = await prisma.$transaction(async (tx) => {
      const updated = await tx.message.updateMany({
        where: { id: message.id, status: message.status },
        data: { ...options.set, status: target, error, updatedAt: at, ...(target === 'sending' ? {} : { leaseUntil: null }) },
      });
      if (updated.count === 0) return null;
      const events = await recordStatuses(tx, cipher, message, plan, error, at);
      await options.also?.(tx, message);
      return events;
    });
    if (result) {
      countTransitions(metrics, message, plan, at);
      await publishCommitted(bus, result);
      return { message: { ...message, status: target, error }, recorded: plan };
    }
  }
  throw new Error(`message ${'id' in where ? where.id : where.providerMessageId} kept changing; gave up`);
}

/** One message's move in `advanceMany`: the message as read, where it goes, and what goes with it. */
export interface Move {
  message: MessageRow;
  target: MessageStatus;
  error?: string | null;
  provider?: string;
  providerMessageId?: string;
  /** A claim into `sending`: the lease; the attempt is counted. */
  leaseUntil?: Date;
  /** The trace context its webhook events carry (the job's); default the active one. */
  traceparent?: string;
}

/** The columns a move sets besides status and error, as `advanceStatus` takes them. */
function moveSet(move: Move): Prisma.MessageUpdateManyMutationInput {
  return {
    ...(move.provider ? { provider: move.provider, providerMessageId: move.providerMessageId } : {}),
    ...(move.leaseUntil ? { leaseUntil: move.leaseUntil, attempts: { increment: 1 } } : {}),
  };
}

/**
 * `advanceStatus` for many messages of one tenant, set-based: one transaction with one compare-and-set
 * UPDATE for all of them (each on the status it was read with), one INSERT of their history rows and one of
 * their outbox events, then `also` with the moves that were applied; the bus events are published after the
 * commit, in each message's order. A message that changed since it was read goes through `advanceStatus`
 * alone (re-read and re-planned, as always). Returns the moves recorded.
 */
export async function advanceMany(deps: StatusDeps, tenantId: string, moves: Move[], also?: (tx: Tx, moved: Move[]) => Promise<void>): Promise<Move[]> {
  const planned = moves
    .map((move) => ({
      move,
      plan: isMessageStatus(move.message.status) ? planTransition(move.message.status, move.target) : [],
      error: move.target === 'failed' ? (move.error ?? 'delivery failed') : null,
    }))
    .filter((p) => p.plan.length > 0);
  if (planned.length === 0) return [];
  const at = (deps.clock ?? systemClock).now();
  const atSql = at.toISOString();
  const activeTrace = traceCarrier().traceparent ?? null;
  const col = <T>(pick: (p: (typeof planned)[number]) => T) => planned.map(pick);
  const committed = await tenantClient(deps.prisma, tenantId).$transaction(async (tx: Tx) => {
    // Timestamps go as ISO strings cast to the columns' zoneless UTC `timestamp(3)`, as Prisma writes them.
    const updated = await tx.$queryRaw<{ id: string }[]>`
      UPDATE messaging."Message" AS m SET "status" = u.target, "error" = u.error, "leaseUntil" = u.lease,
        "attempts" = m."attempts" + CASE WHEN u.lease IS NULL THEN 0 ELSE 1 END,
        "provider" = COALESCE(u.provider, m."provider"), "providerMessageId" = COALESCE(u.pid, m."providerMessageId"),
        "updatedAt" = ${atSql}::timestamp(3)
      FROM unnest(${col((p) => p.move.message.id)}::text[], ${col((p) => p.move.message.status)}::text[], ${col((p) => p.move.target)}::text[],
        ${col((p) => p.error)}::text[], ${col((p) => (p.move.target === 'sending' ? (p.move.leaseUntil?.toISOString() ?? null) : null))}::timestamp(3)[],
        ${col((p) => p.move.provider ?? null)}::text[], ${col((p) => p.move.providerMessageId ?? null)}::text[]
      ) AS u (id, "from", target, error, lease, provider, pid)
      WHERE m."id" = u.id AND m."status" = u."from"
      RETURNING m."id"`;
    const ids = new Set(updated.map((row) => row.id));
    const done = planned.filter((p) => ids.has(p.move.message.id));
    const steps = done.flatMap((p) => p.plan.map((status) => ({ p, status, error: status === 'failed' ? p.error : null })));
    await tx.$executeRaw`
      INSERT INTO messaging."MessageStatusChange" ("tenantId", "messageId", "status", "error", "at")
      SELECT ${tenantId}, s.id, s.status, s.error, ${atSql}::timestamp(3)
      FROM unnest(${steps.map((s) => s.p.move.message.id)}::text[], ${steps.map((s) => s.status)}::text[], ${steps.map((s) => s.error)}::text[]) AS s (id, status, error)`;
    const published = new Map<string, PlatformEvent<any>[]>(done.map((p) => [p.move.message.id, []]));
    const outbox: { id: string; type: string; dataEnc: string; traceparent: string | null }[] = [];
    for (const { p, status, error } of steps) {
      const { message } = p.move;
      const data: MessageEventData = { messageId: message.id, patientId: message.patientId, channel: message.channel, status, ...(error ? { error } : {}) };
      const webhookType = WEBHOOK_TYPE[status];
      const events = published.get(message.id)!;
      if (webhookType) {
        const id = newEventId();
        outbox.push({ id, type: webhookType, dataEnc: sealJson(deps.cipher, data), traceparent: p.move.traceparent ?? activeTrace });
        events.push({ id, type: webhookType, timestamp: atSql, data, tenantId });
      }
      events.push(statusEvent(message, status, error, at));
    }
    if (outbox.length > 0) {
      await tx.$executeRaw`
        INSERT INTO messaging."Event" ("tenantId", "id", "type", "dataEnc", "createdAt", "traceparent")
        SELECT ${tenantId}, e.id, e.type, e.data, ${atSql}::timestamp(3), e.tp
        FROM unnest(${outbox.map((e) => e.id)}::text[], ${outbox.map((e) => e.type)}::text[], ${outbox.map((e) => e.dataEnc)}::text[],
          ${outbox.map((e) => e.traceparent)}::text[]) AS e (id, type, data, tp)`;
    }
    if (also && done.length > 0)
      await also(
        tx,
        done.map((p) => p.move),
      );
    return { done, published };
  });
  for (const p of committed.done) countTransitions(deps.metrics, p.move.message, p.plan, at);
  await Promise.all([...committed.published.values()].map((events) => publishCommitted(deps.events, events)));
  const recorded = committed.done.map((p) => p.move);
  // Changed since read (a concurrent worker or callback): alone, re-read and re-planned.
  for (const { move } of planned.filter((p) => !committed.done.includes(p))) {
    const { recorded: steps } = await advanceStatus({ ...deps, prisma: tenantClient(deps.prisma, tenantId) }, { id: move.message.id }, move.target, {
      error: move.error,
      set: moveSet(move),
      also: also ? (tx) => also(tx, [move]) : undefined,
    });
    if (steps.length > 0) recorded.push(move);
  }
  return recorded;
}

/** Counts each committed step of a move (queued → sent records sending and sent) and the queued → delivered time. */
function countTransitions(metrics: MessagingMetrics, message: MessageRow, plan: MessageStatus[], at: Date): void {
  let from: string = message.status;
  for (const to of plan) {
    metrics.statusChanged(from, to, message.channel);
    if (to === 'delivered') metrics.delivered(message.channel, Math.max(0, at.getTime() - message.createdAt.getTime()) / 1000);
    from = to;
  }
}
