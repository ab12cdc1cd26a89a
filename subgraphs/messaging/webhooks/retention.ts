import { systemClock, type Clock, type ClockTimer } from '../../../common/clock';
import type { Logger } from '../../../common/logger';
import type { MessagingPrisma } from '../db/client';
import { purgeDispatchedEvents, purgeWebhookDeliveries } from '../db/cross-tenant';

/** Rows deleted per statement, so a first purge of a large backlog never holds long locks or one huge transaction. */
const PURGE_BATCH = 1000;
const DAY_MS = 86_400_000;
/** How often a worker purges; every worker may, and concurrent purges skip each other's rows. */
const PURGE_INTERVAL_MS = 3_600_000;

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

/** Purges now and then every PURGE_INTERVAL_MS; failures are logged and retried at the next interval. */
export function schedulePurge(retention: WebhookRetention, logger: Logger, clock: Clock = systemClock): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let timer: ClockTimer | undefined;
  let stopped = false;
  const run = () => {
    running = retention.purge().then(
      (report) => {
        if (report.deliveries > 0 || report.events > 0) logger.info(report, 'webhook retention: old deliveries and events deleted');
      },
      (err) => logger.error({ err }, 'webhook retention purge failed'),
    );
    if (!stopped) timer = clock.setTimeout(run, PURGE_INTERVAL_MS);
  };
  run();
  return {
    async stop() {
      stopped = true;
      clock.clearTimeout(timer);
      await running;
    },
  };
}
