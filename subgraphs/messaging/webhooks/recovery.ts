import type PgBoss from 'pg-boss';
import type { Clock } from '../../../common/clock';
import type { FieldCipher } from '../../../common/crypto';
import { ensureQueue, workQueue, type QueueWorker } from '../../../common/db/boss';
import { tenantClient } from '../../../common/db/tenant-session';
import type { Logger } from '../../../common/logger';
import type { MessagingPrisma } from '../db/client';
import type { WebhookRecovery } from '../db/generated/client';
import { newId, sealedDeliveryBody } from './engine';

/** Works one recovery; data {tenantId, recoveryId}. */
export const WEBHOOK_RECOVERY_QUEUE = 'webhook-recover';
/** Events handled per transaction: the job's progress (`events`) moves on after each batch. */
const RECOVERY_BATCH = 500;

export interface WebhookRecoveryJob {
  tenantId: string;
  recoveryId: string;
}

export interface WebhookRecoveryView {
  id: string;
  webhookId: string;
  since: Date;
  until: Date;
  all: boolean;
  status: string;
  events: number;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export function recoveryView(row: WebhookRecovery): WebhookRecoveryView {
  return {
    id: row.id,
    webhookId: row.subscriptionId,
    since: row.since,
    until: row.until,
    all: row.all,
    status: row.status,
    events: row.events,
    error: row.error,
    createdAt: row.createdAt,
    finishedAt: row.finishedAt,
  };
}

/** Creates the queue (idempotent): the subgraph sends to it, the webhook worker works it. */
export function ensureRecoveryQueue(boss: PgBoss): Promise<void> {
  return ensureQueue(boss, { name: WEBHOOK_RECOVERY_QUEUE, retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 600 });
}

export interface RecoveryDeps {
  prisma: MessagingPrisma;
  cipher: FieldCipher;
  clock: Clock;
  logger: Logger;
}

/**
 * Re-sends the events of a recovery's window: each becomes a pending delivery again with its original event
 * id (a failed or cancelled delivery is reset, with a fresh retry schedule; an event raised while the
 * subscription was disabled gets the delivery it never had), unless its delivery already succeeded or is
 * still pending; with `all`, a succeeded one is sent again too. Events from before the subscription existed
 * are not its events and are left out. Batches commit with the cursor, so a run again after a crash goes on
 * where the last one stopped and sends nothing twice.
 */
async function runWebhookRecovery(deps: RecoveryDeps, tenantId: string, recoveryId: string): Promise<void> {
  const prisma = tenantClient(deps.prisma, tenantId);
  for (;;) {
    const step = await prisma.$transaction(async (tx) => {
      const job = await tx.webhookRecovery.findUnique({ where: { id: recoveryId }, include: { subscription: true } });
      if (!job || job.status !== 'running') return 'finished';
      const sub = job.subscription;
      const now = deps.clock.now();
      if (sub.status !== 'active') {
        await tx.webhookRecovery.update({
          where: { id: job.id },
          data: { status: 'failed', error: `the subscription was disabled while the recovery ran`, finishedAt: now },
        });
        return 'finished';
      }
      const from = sub.createdAt > job.since ? sub.createdAt : job.since;
      const after = job.cursorAt && job.cursorId ? { OR: [{ createdAt: { gt: job.cursorAt } }, { createdAt: job.cursorAt, id: { gt: job.cursorId } }] } : {};
      const events = await tx.event.findMany({
        where: { type: { in: sub.events }, createdAt: { gte: from, lte: job.until }, ...after },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: RECOVERY_BATCH,
      });
      if (events.length === 0) {
        await tx.webhookRecovery.update({ where: { id: job.id }, data: { status: 'done', finishedAt: now } });
        return 'finished';
      }
      const existing = await tx.webhookDelivery.findMany({
        where: { subscriptionId: sub.id, eventId: { in: events.map((e) => e.id) } },
        select: { id: true, eventId: true, status: true },
      });
      const byEvent = new Map(existing.map((d) => [d.eventId, d]));
      const resend = events.filter((e) => {
        const status = byEvent.get(e.id)?.status;
        return status === undefined || status === 'failed' || status === 'cancelled' || (job.all && status === 'succeeded');
      });
      const reset = resend.map((e) => byEvent.get(e.id)?.id).filter((id): id is string => id !== undefined);
      if (reset.length > 0) {
        await tx.webhookDelivery.updateMany({
          where: { id: { in: reset }, status: { not: 'pending' } },
          data: { status: 'pending', attempts: 0, nextAttemptAt: now, leaseToken: null, leaseUntil: null },
        });
      }
      const fresh = resend.filter((e) => !byEvent.has(e.id));
      if (fresh.length > 0) {
        await tx.webhookDelivery.createMany({
          data: fresh.map((event) => ({
            tenantId,
            id: newId('dlv'),
            subscriptionId: sub.id,
            eventId: event.id,
            eventType: event.type,
            payloadEnc: sealedDeliveryBody(deps.cipher, event),
            status: 'pending',
            nextAttemptAt: now,
            eventAt: event.createdAt,
            eventSeq: event.seq,
            traceparent: event.traceparent,
          })),
          // The dispatcher may fan out an event of the window at the same moment: its delivery stands.
          skipDuplicates: true,
        });
      }
      const last = events[events.length - 1];
      await tx.webhookRecovery.update({
        where: { id: job.id },
        data: { events: { increment: resend.length }, cursorAt: last.createdAt, cursorId: last.id },
      });
      return 'more';
    });
    if (step === 'finished') return;
  }
}

/** The recovery worker of the webhook worker role: jobs survive restarts on the queue; a run after a crash resumes. */
export async function startWebhookRecoveryWorker(boss: PgBoss, deps: RecoveryDeps): Promise<QueueWorker> {
  await ensureRecoveryQueue(boss);
  return workQueue<WebhookRecoveryJob>(boss, WEBHOOK_RECOVERY_QUEUE, { pollingIntervalSeconds: 1 }, async ([job]) => {
    await runWebhookRecovery(deps, job.data.tenantId, job.data.recoveryId);
    deps.logger.info({ tenantId: job.data.tenantId, recoveryId: job.data.recoveryId }, 'webhook recovery finished');
  });
}
