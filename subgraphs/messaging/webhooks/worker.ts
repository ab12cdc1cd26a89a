import { readFileSync } from 'node:fs';
import { systemClock, type Clock, type ClockTimer } from '../../../common/clock';
import { FieldCipher } from '../../../common/crypto';
import type { Database } from '../../../common/db/database';
import { ensureMigrated } from '../../../common/db/migrate';
import { isWebhookEventType } from '../../../common/events/types';
import type { Runtime, Stoppable } from '../../../common/runtime';
import { createMessagingPrisma, type MessagingPrisma } from '../db/client';
import { DISPATCH_BATCH, WebhookEngine, type AttemptResult } from './engine';
import { relayClinicalEvents } from '../events/clinical-relay';
import { WebhookSender } from './sender';
import { scheduleWebhookPurge, WebhookRetention } from './retention';
import { messagingMetrics } from '../metrics';
import type PgBoss from 'pg-boss';
import { ensureQueues } from '../delivery/jobs';
import { startWebhookRecoveryWorker } from './recovery';

/** Longest idle wait between two looks at the database (new events from a process whose bus nudge was lost, expired claims). */
const IDLE_POLL_MS = 500;
/** Attempts in flight at once in one process, over all endpoints (each endpoint also has WEBHOOK_ENDPOINT_CONCURRENCY). */
const MAX_IN_FLIGHT = 128;

/** The engine and its HTTP sender for one process part (the worker, or the subgraph's test-event path). */
export function createWebhookEngine(
  runtime: Pick<Runtime, 'config' | 'secrets' | 'logger' | 'events' | 'metrics' | 'clock'>,
  prisma: MessagingPrisma,
): { engine: WebhookEngine; sender: WebhookSender } {
  const { config } = runtime;
  const sender = new WebhookSender({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowInsecure: config.WEBHOOK_ALLOW_INSECURE,
    extraCa: config.WEBHOOK_CA_FILE ? readFileSync(config.WEBHOOK_CA_FILE, 'utf8') : undefined,
  });
  const engine = new WebhookEngine({
    prisma,
    sender,
    cipher: new FieldCipher(runtime.secrets.encryptionKey, config.PREVIOUS_ENCRYPTION_KEYS),
    retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    events: runtime.events,
    logger: runtime.logger,
    metrics: messagingMetrics(runtime.metrics),
    clock: runtime.clock,
  });
  return { engine, sender };
}

/**
 * The loop of one worker: fan out new outbox events, claim due deliveries in
 * batches, attempt them (up to MAX_IN_FLIGHT at once, and no more per endpoint
 * than the claim allows), record finished attempts together, then sleep until
 * the next due time, a bus nudge (an event was committed somewhere) or the idle poll.
 */
class WebhookWorker {
  private timer: ClockTimer | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private dispatchWanted = true;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Finished attempts waiting to be recorded, and the write in progress. */
  private unrecorded: Array<{ result: AttemptResult; done: () => void }> = [];
  private recording: Promise<void> | undefined;

  constructor(
    private readonly engine: WebhookEngine,
    private readonly logger: Runtime['logger'],
    /** WEBHOOK_ENDPOINT_CONCURRENCY. */
    private readonly perEndpoint: number,
    /** Brings the clinical record's outbox events into the event table before each dispatch. */
    private readonly relay: () => Promise<unknown> = async () => undefined,
    /** The next due time is waited for on it. */
    private readonly clock: Clock = systemClock,
  ) {}

  start(): void {
    this.wake();
  }

  /**
   * Runs a pass now (or right after the one in progress). `dispatch` also
   * looks for new outbox events (bus nudge, idle poll); a finished attempt
   * only frees a slot for the next due delivery.
   */
  wake(dispatch = true): void {
    if (this.stopped) return;
    if (dispatch) this.dispatchWanted = true;
    if (this.running) {
      this.again = true;
      return;
    }
    this.clock.clearTimeout(this.timer);
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake(false);
      }
    });
  }

  private async pass(): Promise<void> {
    let wait = IDLE_POLL_MS;
    try {
      if (this.dispatchWanted) {
        this.dispatchWanted = false;
        try {
          await this.relay();
        } catch (err) {
          if (this.stopped) return;
          this.logger.error({ err }, 'relaying clinical record events failed');
        }
        while ((await this.engine.dispatchPending()).events === DISPATCH_BATCH && !this.stopped);
      }
      const wanted = MAX_IN_FLIGHT - this.inFlight.size;
      const claimed = await this.engine.claimDue(wanted, this.perEndpoint);
      for (const delivery of claimed) {
        // The slot stays taken until the outcome is recorded: the lease must not outlive a stop.
        const job: Promise<void> = this.engine
          .send(delivery)
          .then((result) => this.recordSoon(result))
          .catch((err) => this.logger.error({ err, deliveryId: delivery.id }, 'webhook attempt failed'))
          .finally(() => {
            this.inFlight.delete(job);
            this.wake(false);
          });
        this.inFlight.add(job);
      }
      // A full claim means more may be due: look again as soon as a slot frees. A short one leaves only
      // deliveries not yet due, or due ones whose endpoint is at its limit, which a finished attempt wakes for.
      if (claimed.length < wanted) {
        const next = await this.engine.nextDueAt();
        const ahead = next ? next.getTime() - this.clock.now().getTime() : wait;
        if (ahead > 0) wait = Math.min(wait, ahead);
      }
    } catch (err) {
      if (this.stopped) return;
      this.logger.error({ err }, 'webhook worker pass failed');
    }
    if (!this.stopped) this.timer = this.clock.setTimeout(() => this.wake(), wait);
  }

  /** Records an outcome together with the others finished meanwhile; resolves once it is written. */
  private recordSoon(result: AttemptResult): Promise<void> {
    return new Promise<void>((done) => {
      this.unrecorded.push({ result, done });
      this.recording ??= this.recordAll().finally(() => (this.recording = undefined));
    });
  }

  /** Writes the waiting outcomes in batches until none is left. A failed write leaves those deliveries to their lease. */
  private async recordAll(): Promise<void> {
    // Let the attempts finishing in this turn of the event loop join the batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.unrecorded.length > 0) {
      const batch = this.unrecorded;
      this.unrecorded = [];
      try {
        await this.engine.record(batch.map((b) => b.result));
      } catch (err) {
        this.logger.error({ err, deliveries: batch.map((b) => b.result.delivery.id) }, 'webhook attempts could not be recorded');
      }
      for (const b of batch) b.done();
    }
  }

  /** Stops claiming; waits for attempts in flight (each bounded by the timeout) so their outcome is recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    await this.running;
    await Promise.allSettled([...this.inFlight]);
  }
}

export interface WebhookWorkerOptions extends Runtime {
  db: Database;
  /** The job queue the relay schedules appointment reminders on. */
  boss: PgBoss;
}

/**
 * Starts the webhook dispatcher and delivery worker of a process (roles
 * 'all' and 'worker'). Safe to run in many processes at once.
 */
export async function startWebhookWorker(options: WebhookWorkerOptions): Promise<Stoppable> {
  const logger = options.logger.child({ component: 'webhooks' });
  // The worker role may start before the subgraphs have migrated their schemas (the relay reads the clinical record's outbox).
  await ensureMigrated(options.db, 'messaging', (msg) => logger.info(msg));
  await ensureMigrated(options.db, 'ehr', (msg) => logger.info(msg));
  // The relay schedules reminder jobs: their queue must exist before its first pass.
  await ensureQueues(options.boss, options.config.DELIVERY_JOB_EXPIRY_SECONDS);
  const prisma = createMessagingPrisma(options.db);
  const { engine, sender } = createWebhookEngine({ ...options, logger }, prisma);
  const relayCipher = new FieldCipher(options.secrets.encryptionKey, options.config.PREVIOUS_ENCRYPTION_KEYS);
  const worker = new WebhookWorker(
    engine,
    logger,
    options.config.WEBHOOK_ENDPOINT_CONCURRENCY,
    () => relayClinicalEvents(prisma, relayCipher, options.events, options.boss, options.clock),
    options.clock,
  );
  const unsubscribe = options.events.subscribe((event) => {
    if (isWebhookEventType(event.type)) worker.wake();
  });
  worker.start();
  const recoveries = await startWebhookRecoveryWorker(options.boss, {
    prisma,
    cipher: relayCipher,
    clock: options.clock,
    logger: logger.child({ component: 'recovery' }),
  });
  const purge = await scheduleWebhookPurge(options.boss, new WebhookRetention(prisma, options.config.WEBHOOK_RETENTION_DAYS, options.clock), logger);
  logger.info(
    {
      retrySchedule: options.config.WEBHOOK_RETRY_SCHEDULE,
      timeoutMs: options.config.WEBHOOK_TIMEOUT_MS,
      endpointConcurrency: options.config.WEBHOOK_ENDPOINT_CONCURRENCY,
      retentionDays: options.config.WEBHOOK_RETENTION_DAYS,
    },
    'webhook worker started',
  );
  return {
    name: 'webhook worker',
    close: async () => {
      unsubscribe();
      await recoveries.close();
      await purge.close();
      await worker.stop();
      await sender.close();
      await prisma.$disconnect();
    },
  };
}
