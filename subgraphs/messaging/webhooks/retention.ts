import type PgBoss from 'pg-boss';
import { systemClock, type Clock } from '../../../common/clock';
import { ensureQueue, workQueue, type QueueWorker } from '../../../common/db/boss';
import type { Logger } from '../../../common/logger';
import type { MessagingPrisma } from '../db/client';
import { purgeDispatchedEvents, purgeWebhookDeliveries } from '../db/cross-tenant';

/** Rows deleted per statement, so a first purge of a large backlog never holds long locks or one huge transaction. */
const PURGE_BATCH = 1000;
const DAY_MS = 86_400_000;
export const WEBHOOK_PURGE_QUEUE = 'webhook-retention-purge';
/** Hourly: a busy sender's finished deliveries pile up faster than the daily purges' data. */
const WEBHOOK_PURGE_CRON = '7 * * * *';

export interface PurgeReport {
  deliveries: number;
  events: number;
}

/**
 * Webhook retention: deliveries that are finished (succeeded, failed or
 * cancelled; their attempts go with them) and outbox events already fanned
 * out are deleted once older than the retention period. Pending deliveries
 * and undispatched events are never touched, whatever their age.
 */
export class WebhookRetention {
  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly retentionDays: number,
    private readonly clock: Clock = systemClock,
    private readonly batchSize = PURGE_BATCH,
  ) {}

  async purge(now = this.clock.now()): Promise<PurgeReport> {
    const before = new Date(now.getTime() - this.retentionDays * DAY_MS);
    // SKIP LOCKED: a worker attempting a delivery right now, or another purge, keeps its rows.
    // Across tenants, through the owner's functions (row-level security hides other tenants from the runtime role).
    const deliveries = await this.inBatches(() => purgeWebhookDeliveries(this.prisma, before, this.batchSize));
    const events = await this.inBatches(() => purgeDispatchedEvents(this.prisma, before, this.batchSize));
    return { deliveries, events };
  }

  private async inBatches(deleteBatch: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatch();
      total += deleted;
      if (deleted < this.batchSize) return total;
    }
  }
}

/**
 * Purges every hour through the job queue, as the other retention purges do: pg-boss's schedule
 * survives restarts and one worker takes each run, however many processes run workers.
 */
export async function scheduleWebhookPurge(boss: PgBoss, retention: WebhookRetention, logger: Logger): Promise<QueueWorker> {
  await ensureQueue(boss, { name: WEBHOOK_PURGE_QUEUE, retryLimit: 3, retryDelay: 60, expireInSeconds: 3600 });
  await boss.schedule(WEBHOOK_PURGE_QUEUE, WEBHOOK_PURGE_CRON, {}, { tz: 'UTC' });
  return workQueue(boss, WEBHOOK_PURGE_QUEUE, { pollingIntervalSeconds: 1 }, async () => {
    const report = await retention.purge();
    if (report.deliveries > 0 || report.events > 0) logger.info(report, 'webhook retention: old deliveries and events deleted');
  });
}
