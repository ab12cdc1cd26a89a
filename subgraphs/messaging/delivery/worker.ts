import type PgBoss from 'pg-boss';
import { workQueue, type QueueWorker } from '../../../common/db/boss';
import type { Config } from '../../../common/config';
import type { FieldCipher } from '../../../common/crypto';
import type { EventBus } from '../../../common/events/bus';
import type { Logger } from '../../../common/logger';
import { tenantClient } from '../../../common/db/tenant-session';
import type { MessagingPrisma } from '../db/client';
import { staleSends } from '../db/cross-tenant';
import type { Message as MessageRow } from '../db/generated/client';
import type { ClinicalRecord } from '../clinical-record/client';
import { messagingConsentRefusal } from '../consent';
import { releaseTime } from '../preferences/quiet-hours';
import { toPreferencesView } from '../preferences/preference.service';
import { escapeValue } from '../templates/render';
import { DELIVER_QUEUE, SIMULATOR_REPORT_QUEUE, ensureQueues, enqueueInTransaction, type DeliverJob, type SimulatorReportJob } from './jobs';
import { ProviderError, type ChannelProvider } from './providers/provider';
import { createProviders, type Providers } from './providers';
import { advanceStatus } from './transitions';
import { openMessage } from '../sealed';
import { AppError } from '../../../common/errors';
import type { MessagingMetrics } from '../metrics';
import { contextFrom, inSpan, SpanKind } from '../../../common/telemetry/tracing';

export interface DeliveryWorkerOptions {
  prisma: MessagingPrisma;
  boss: PgBoss;
  events: EventBus;
  config: Config;
  cipher: FieldCipher;
  /** The clinical record, asked for the patient's messaging consent at send time. */
  clinical: ClinicalRecord;
  logger: Logger;
  providers?: Providers;
  /** Where Twilio posts status callbacks (omitted: Twilio sends none). */
  twilioStatusUrl?: string;
  metrics: MessagingMetrics;
}

export interface DeliveryWorker {
  close(): Promise<void>;
}

const MAX_ATTEMPTS = 5;
/** Delay before asking an unavailable clinical record again about a due message. */
const CLINICAL_RETRY_MS = 30_000;
const POLL_SECONDS = 0.5;

/** Delay before send attempt n+1 after a transient provider error: 5 s, 10 s, 20 s, 40 s. */
function retryDelayMs(attempts: number): number {
  return 5000 * 2 ** Math.max(0, attempts - 1);
}

/**
 * The delivery worker: takes `messaging-deliver` jobs, checks preferences,
 * quiet hours and the clinical record's messaging consent again at send time, claims the message (`sending`, with a
 * lease), hands it to the channel provider and records the outcome through the
 * state machine. A sweep re-enqueues `sending` messages whose lease ran out
 * (their worker died), so a crash anywhere ends, after restart, in exactly one
 * final status per message.
 */
export async function startDeliveryWorker(options: DeliveryWorkerOptions): Promise<DeliveryWorker> {
  const { prisma, boss, events, config, cipher, clinical } = options;
  const logger = options.logger.child({ component: 'delivery-worker' });
  const providers = options.providers ?? createProviders(config, { twilioStatusUrl: options.twilioStatusUrl });
  const leaseMs = config.DELIVERY_LEASE_MS;
  const statusDeps = { prisma, events, cipher, metrics: options.metrics };
  await ensureQueues(boss, config.DELIVERY_JOB_EXPIRY_SECONDS);

  /** The status changes of one tenant's message (row-level security: the tenant is set on each statement). */
  const statusDepsOf = (tenantId: string) => ({ ...statusDeps, prisma: tenantClient(prisma, tenantId) });
  const fail = (message: { id: string; tenantId: string }, error: string) =>
    advanceStatus(statusDepsOf(message.tenantId), { id: message.id }, 'failed', { error });

  async function deliver(job: DeliverJob): Promise<void> {
    // A job names its tenant: everything below runs under it (row-level security).
    const db = tenantClient(prisma, job.tenantId);
    const message = await db.message.findFirst({ where: { id: job.messageId, tenantId: job.tenantId } });
    if (!message) return;
    const now = new Date();
    if (message.status === 'queued') {
      const row = await db.communicationPreference.findUnique({ where: { tenantId_patientId: { tenantId: message.tenantId, patientId: message.patientId } } });
      const preferences = toPreferencesView(row);
      if (!preferences.channels[message.channel as 'sms' | 'email']) {
        await fail(message, `The patient has opted out of ${message.channel}`);
        return;
      }
      const release = releaseTime(preferences.quietHours, now);
      if (release.getTime() > now.getTime() + 1000) {
        await db.$transaction(async (tx) => {
          const held = await tx.message.updateMany({ where: { id: message.id, status: 'queued' }, data: { dueAt: release } });
          if (held.count === 1) await enqueueInTransaction(boss, tx, DELIVER_QUEUE, job, release);
        });
        logger.debug({ messageId: message.id, release }, 'held for quiet hours');
        return;
      }
      const refusal = await consentRefusal(message, job);
      if (refusal === undefined) return;
      if (refusal) {
        await fail(message, refusal);
        return;
      }
      if (!message.recipientEnc) {
        await fail(message, `The patient has no ${message.channel === 'sms' ? 'phone number' : 'email address'} on record`);
        return;
      }
      const claimed = await advanceStatus({ ...statusDeps, prisma: db }, { id: message.id }, 'sending', {
        set: { leaseUntil: new Date(now.getTime() + leaseMs), attempts: { increment: 1 } },
      });
      if (claimed.recorded.length === 0) return;
    } else if (message.status === 'sending') {
      // Resuming: a retry after a transient error (lease cleared) or a send whose worker died (lease expired).
      if (message.leaseUntil && message.leaseUntil.getTime() > now.getTime()) return;
      const refusal = await consentRefusal(message, job);
      if (refusal === undefined) return;
      if (refusal) {
        await fail(message, refusal);
        return;
      }
      const claimed = await db.message.updateMany({
        where: { id: message.id, status: 'sending', leaseUntil: message.leaseUntil },
        data: { leaseUntil: new Date(now.getTime() + leaseMs), attempts: { increment: 1 } },
      });
      if (claimed.count === 0) return;
    } else {
      return;
    }
    await send({ ...message, attempts: message.attempts + 1 });
  }

  /**
   * The consent may have been withdrawn since the message was accepted: asks the
   * clinical record again. Returns why the message must not go out, null when
   * it may, or undefined when the clinical record cannot answer now (the job is
   * then due again later and the message keeps its status).
   */
  async function consentRefusal(message: MessageRow, job: DeliverJob): Promise<string | null | undefined> {
    try {
      const patient = (await clinical.patients(message.tenantId, [message.patientId])).get(message.patientId);
      return patient ? messagingConsentRefusal(patient) : `Patient '${message.patientId}' is no longer in the clinical record`;
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE')) throw err;
      logger.warn({ messageId: message.id, err: err.message }, 'clinical record unavailable; consent check retried later');
      await tenantClient(prisma, message.tenantId).$transaction(async (tx) => {
        // A duplicate job is harmless: whoever claims the message first sends it.
        if ((await tx.message.count({ where: { id: message.id, status: message.status } })) === 1) {
          await enqueueInTransaction(boss, tx, DELIVER_QUEUE, job, new Date(Date.now() + CLINICAL_RETRY_MS));
        }
      });
      return undefined;
    }
  }

  async function send(row: MessageRow): Promise<void> {
    const message = openMessage(cipher, row);
    const db = tenantClient(prisma, message.tenantId);
    const provider: ChannelProvider = message.channel === 'email' ? providers.email : providers.sms;
    const to = cipher.decrypt(message.recipientEnc!);
    try {
      const result = await inSpan(`provider ${provider.name} send`, { kind: SpanKind.CLIENT, attributes: { 'caregraph.channel': message.channel } }, () =>
        provider.send({
          messageId: message.id,
          channel: message.channel as 'sms' | 'email',
          to,
          subject: message.subject,
          body: message.body,
          ...(message.channel === 'email' ? { html: `<p>${escapeValue(message.body, 'html')}</p>` } : {}),
        }),
      );
      await advanceStatus({ ...statusDeps, prisma: db }, { id: message.id }, result.status, {
        set: { provider: provider.name, providerMessageId: result.providerMessageId },
        also: async (tx) => {
          if (result.report) {
            const report: SimulatorReportJob = { tenantId: message.tenantId, messageId: message.id, status: result.report.status, error: result.report.error };
            await enqueueInTransaction(boss, tx, SIMULATOR_REPORT_QUEUE, report, new Date(Date.now() + result.report.afterMs));
          }
        },
      });
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      if (err.permanent || message.attempts >= MAX_ATTEMPTS) {
        logger.warn({ messageId: message.id, err: err.message }, 'delivery failed');
        await fail(message, err.message);
        return;
      }
      logger.info({ messageId: message.id, attempt: message.attempts, err: err.message }, 'send failed; will retry');
      await db.$transaction(async (tx) => {
        const released = await tx.message.updateMany({ where: { id: message.id, status: 'sending' }, data: { leaseUntil: null } });
        if (released.count === 1) {
          await enqueueInTransaction(
            boss,
            tx,
            DELIVER_QUEUE,
            { tenantId: message.tenantId, messageId: message.id },
            new Date(Date.now() + retryDelayMs(message.attempts)),
          );
        }
      });
    }
  }

  async function report(job: SimulatorReportJob): Promise<void> {
    await advanceStatus(statusDepsOf(job.tenantId), { id: job.messageId }, job.status, { error: job.error });
  }

  /** Sends whose worker died: clear the lease and give them a new job. */
  async function sweep(): Promise<void> {
    const now = new Date();
    const stale = await staleSends(prisma, now, 200);
    for (const message of stale) {
      await tenantClient(prisma, message.tenantId).$transaction(async (tx) => {
        const released = await tx.message.updateMany({ where: { id: message.id, status: 'sending', leaseUntil: { lt: now } }, data: { leaseUntil: null } });
        if (released.count === 1) await enqueueInTransaction(boss, tx, DELIVER_QUEUE, { tenantId: message.tenantId, messageId: message.id });
      });
    }
    if (stale.length > 0) logger.warn({ count: stale.length }, 'resumed sends whose worker stopped');
  }

  // A full batch means more are waiting: fetch again at once instead of after the polling interval.
  const BATCH = 25;
  const workOptions = { batchSize: BATCH, pollingIntervalSeconds: POLL_SECONDS };
  const workers: QueueWorker[] = [];
  const work = async <T extends object>(queue: string, handle: (data: T) => Promise<void>) => {
    const worker: QueueWorker = await workQueue<T>(boss, queue, workOptions, async (jobs) => {
      await Promise.all(
        jobs.map((job) =>
          inSpan(`job ${queue}`, { kind: SpanKind.CONSUMER, parent: contextFrom(job.data as Record<string, unknown>) }, () => handle(job.data)),
        ),
      );
      if (jobs.length === BATCH) boss.notifyWorker(worker.id);
    });
    workers.push(worker);
  };
  await work<DeliverJob>(DELIVER_QUEUE, deliver);
  await work<SimulatorReportJob>(SIMULATOR_REPORT_QUEUE, report);
  let sweeping: Promise<void> | undefined;
  const runSweep = () => {
    sweeping ??= sweep()
      .catch((err) => logger.error({ err }, 'delivery sweep failed'))
      .finally(() => (sweeping = undefined));
  };
  runSweep();
  const timer = setInterval(runSweep, Math.min(10_000, Math.max(1000, Math.floor(leaseMs / 2))));
  timer.unref();
  logger.info({ sms: providers.sms.name, email: providers.email.name }, 'delivery worker started');

  return {
    async close() {
      clearInterval(timer);
      await Promise.all(workers.map((worker) => worker.close()));
      await sweeping;
      await providers.sms.close?.();
      if (providers.email !== providers.sms) await providers.email.close?.();
    },
  };
}
