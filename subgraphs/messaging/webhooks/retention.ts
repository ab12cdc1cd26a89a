import type { Logger } from '../../../common/logger';
import type { MessagingPrisma } from '../db/client';

/** Rows deleted per statement, so a first purge of a large backlog never holds long locks or one huge transaction. */
const PURGE_BATCH = 1000;
const DAY_MS = 86_400_000;
/** How often a worker purges; every worker may, and concurrent purges skip each other's rows. */
export const PURGE_INTERVAL_MS = 3_600_000;

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
  ) {}

  async purge(now = new Date()): Promise<PurgeReport> {
    const before = new Date(now.getTime() - this.retentionDays * DAY_MS);
    // SKIP LOCKED: a worker attempting a delivery right now, or another purge, keeps its rows.
    const deliveries = await this.inBatches(
      () => this.prisma.$executeRaw`
        DELETE FROM "messaging"."WebhookDelivery" WHERE "id" IN (
          SELECT "id" FROM "messaging"."WebhookDelivery"
          WHERE "status" <> 'pending' AND "createdAt" < ${before}
          LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`,
    );
    const events = await this.inBatches(
      () => this.prisma.$executeRaw`
        DELETE FROM "messaging"."Event" WHERE "id" IN (
          SELECT "id" FROM "messaging"."Event"
          WHERE "dispatchedAt" IS NOT NULL AND "createdAt" < ${before}
          LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`,
    );
    return { deliveries, events };
  }

  private async inBatches(deleteBatch: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatch();
      total += deleted;
      if (deleted < PURGE_BATCH) return total;
    }
  }
}

/** Purges now and then every PURGE_INTERVAL_MS; failures are logged and retried at the next interval. */
export function schedulePurge(retention: WebhookRetention, logger: Logger): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = retention.purge().then(
      (report) => {
        if (report.deliveries > 0 || report.events > 0) logger.info(report, 'webhook retention: old deliveries and events deleted');
      },
      (err) => logger.error({ err }, 'webhook retention purge failed'),
    );
  };
  run();
  const timer = setInterval(run, PURGE_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
