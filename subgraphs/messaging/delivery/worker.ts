import type PgBoss from 'pg-boss';
import { workQueue, type QueueWorker } from '../../../common/db/boss';
import type { Config } from '../../../common/config';
import type { FieldCipher } from '../../../common/crypto';
import type { EventBus } from '../../../common/events/bus';
import type { Logger } from '../../../common/logger';
import { tenantClient } from '../../../common/db/tenant-session';
import type { MessagingPrisma } from '../db/client';
import { overdueHeldMessages, staleSends } from '../db/cross-tenant';
import type { Message as MessageRow } from '../db/generated/client';
import type { ClinicalPatient } from '../clinical-record/client';
import type { ClinicalRecord } from '../clinical-record/client';
import { messagingConsentRefusal } from '../consent';
import { releaseTime } from '../preferences/quiet-hours';
import { toPreferencesView } from '../preferences/preference.service';
import { escapeValue } from '../templates/render';
import { DELIVER_QUEUE, SIMULATOR_REPORT_QUEUE, ensureQueues, enqueueManyInTransaction, type DeliverJob, type SimulatorReportJob } from './jobs';
import { ProviderError, type ChannelProvider, type SendResult } from './providers/provider';
import type { CircuitState, ProviderObserver } from './providers/failover';
import { createProviders, type CallbackUrls, type Providers } from './providers';
import { advanceMany, type Move, type Tx } from './transitions';
import { openMessage } from '../sealed';
import { AppError } from '../../../common/errors';
import type { MessagingMetrics } from '../metrics';
import { systemClock, type Clock, type ClockTimer } from '../../../common/clock';
import { contextFrom, inSpan, SpanKind, startSpan, traceCarrier, type Context } from '../../../common/telemetry/tracing';

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
  /** Where Twilio and Vonage post delivery reports (omitted: they send none). */
  callbackUrls?: CallbackUrls;
  metrics: MessagingMetrics;
  /** The time of leases, retries, quiet hours and the sweep (default: the system clock). */
  clock?: Clock;
}

export interface DeliveryWorker {
  /** Each channel provider's circuit breaker in this process, in failover order. */
  circuits(): ProviderCircuit[];
  close(): Promise<void>;
}

interface ProviderCircuit {
  provider: string;
  channel: 'sms' | 'email';
  state: CircuitState;
}

const providerObserver = (metrics: MessagingMetrics): ProviderObserver => ({
  sendOutcome: (provider, channel, outcome) => metrics.providerSend(provider, channel, outcome),
  circuitState: (provider, channel, state) => metrics.circuitState(provider, channel, state),
});

const MAX_ATTEMPTS = 5;
/** Delay before asking an unavailable clinical record again about a due message. */
const CLINICAL_RETRY_MS = 30_000;
const POLL_SECONDS = 0.5;
/** Jobs fetched and handled together (one statement per kind for the lot). */
const BATCH = 100;

/** Delay before send attempt n+1 after a transient provider error: 5 s, 10 s, 20 s, 40 s. */
function retryDelayMs(attempts: number): number {
  return 5000 * 2 ** Math.max(0, attempts - 1);
}

/** A fetched job with the span it runs in: its calls run in `context`, and what it enqueues or records carries `traceparent`. */
interface RunningJob<T> {
  data: T;
  context: Context;
  traceparent?: string;
}

/** Jobs by tenant (row-level security: each statement runs under one tenant), one per message (a duplicate job changes nothing). */
function byTenant<T extends { tenantId: string; messageId: string }>(jobs: RunningJob<T>[]): Map<string, Map<string, RunningJob<T>>> {
  const tenants = new Map<string, Map<string, RunningJob<T>>>();
  for (const job of jobs) {
    const messages = tenants.get(job.data.tenantId) ?? new Map<string, RunningJob<T>>();
    tenants.set(job.data.tenantId, messages);
    if (!messages.has(job.data.messageId)) messages.set(job.data.messageId, job);
  }
  return tenants;
}

/** The deliver job that sends `message` again later, continuing the trace of `job`. */
const nextJob = (message: Pick<MessageRow, 'id' | 'tenantId'>, job: RunningJob<unknown>, startAfter?: Date) => ({
  data: { tenantId: message.tenantId, messageId: message.id, ...(job.traceparent ? { traceparent: job.traceparent } : {}) },
  startAfter,
});

/**
 * The delivery worker: takes `messaging-deliver` jobs a batch at a time, checks preferences, quiet hours and the
 * clinical record's messaging consent again at send time, claims the messages (`sending`, with a lease), hands
 * them to the channel providers concurrently and records the outcomes through the state machine. Each step is
 * one statement per kind for the batch's messages of one tenant. A sweep re-enqueues `sending` messages whose
 * lease ran out (their worker died), so a crash anywhere ends, after restart, in exactly one final status per
 * message, and held messages whose due time has passed on the clock (see `sweep`).
 */
export async function startDeliveryWorker(options: DeliveryWorkerOptions): Promise<DeliveryWorker> {
  const { prisma, boss, events, config, cipher, clinical } = options;
  const logger = options.logger.child({ component: 'delivery-worker' });
  const leaseMs = config.DELIVERY_LEASE_MS;
  const clock = options.clock ?? systemClock;
  const providers = options.providers ?? (await createProviders(config, providerObserver(options.metrics), clock, options.callbackUrls));
  const statusDeps = { prisma, events, cipher, metrics: options.metrics, clock };
  await ensureQueues(boss, config.DELIVERY_JOB_EXPIRY_SECONDS);

  const failMove = (message: MessageRow, job: RunningJob<unknown>, error: string): Move => ({ message, target: 'failed', error, traceparent: job.traceparent });

  async function deliver(jobs: RunningJob<DeliverJob>[]): Promise<void> {
    // Tenants side by side; the first unexpected error (a database error) fails the batch's jobs, which pg-boss retries.
    const results = await Promise.allSettled([...byTenant(jobs)].map(([tenantId, tenantJobs]) => deliverTenant(tenantId, tenantJobs)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async function deliverTenant(tenantId: string, jobs: Map<string, RunningJob<DeliverJob>>): Promise<void> {
    const db = tenantClient(prisma, tenantId);
    const rows = await db.message.findMany({ where: { tenantId, id: { in: [...jobs.keys()] } } });
    const now = clock.now();
    const jobOf = (message: MessageRow) => jobs.get(message.id)!;
    // Resuming: a retry after a transient error (lease cleared) or a send whose worker died (lease expired).
    const resumable = rows.filter((row) => row.status === 'sending' && !(row.leaseUntil && row.leaseUntil.getTime() > now.getTime()));
    // A scheduled message whose time has come goes to `queued` first, then is checked as every queued one is
    // (consent, preferences, quiet hours as they are now). One whose time has not come on the clock is left to the sweep.
    const due = rows.filter((row) => row.status === 'scheduled' && row.dueAt.getTime() <= now.getTime() + 1000);
    const released = await advanceMany(
      statusDeps,
      tenantId,
      due.map((message) => ({ message, target: 'queued', traceparent: jobOf(message).traceparent })),
    );
    const queued = [...rows.filter((row) => row.status === 'queued'), ...released.map((move) => ({ ...move.message, status: 'queued' }))];
    const failures: Move[] = [];
    const held: { message: MessageRow; release: Date }[] = [];
    const checked: MessageRow[] = [...resumable];
    if (queued.length > 0) {
      const preferenceRows = await db.communicationPreference.findMany({
        where: { tenantId, patientId: { in: [...new Set(queued.map((m) => m.patientId))] } },
      });
      const preferencesOf = new Map(preferenceRows.map((row) => [row.patientId, row]));
      for (const message of queued) {
        const preferences = toPreferencesView(preferencesOf.get(message.patientId) ?? null);
        const release = releaseTime(preferences.quietHours, now);
        if (!preferences.channels[message.channel as 'sms' | 'email'])
          failures.push(failMove(message, jobOf(message), `The patient has opted out of ${message.channel}`));
        else if (release.getTime() > now.getTime() + 1000) held.push({ message, release });
        else checked.push(message);
      }
    }
    const claims: Move[] = [];
    const resumes: MessageRow[] = [];
    const patients = await consentOf(tenantId, checked, jobs);
    if (patients) {
      for (const message of checked) {
        const patient = patients.get(message.patientId);
        const refusal = patient ? messagingConsentRefusal(patient) : `Patient '${message.patientId}' is no longer in the clinical record`;
        if (refusal) failures.push(failMove(message, jobOf(message), refusal));
        else if (message.status === 'sending') resumes.push(message);
        else if (!message.recipientEnc)
          failures.push(failMove(message, jobOf(message), `The patient has no ${message.channel === 'sms' ? 'phone number' : 'email address'} on record`));
        else claims.push({ message, target: 'sending', leaseUntil: new Date(now.getTime() + leaseMs), traceparent: jobOf(message).traceparent });
      }
    }
    const [, , claimed, resumed] = await Promise.all([
      advanceMany(statusDeps, tenantId, failures),
      hold(tenantId, held, jobs),
      advanceMany(statusDeps, tenantId, claims),
      resume(tenantId, resumes, new Date(now.getTime() + leaseMs)),
    ]);
    if (held.length > 0) logger.debug({ count: held.length }, 'held for quiet hours');
    // As the claims left them: `sending`, the lease, one more attempt.
    const sending = [...claimed.map((move) => ({ ...move.message, status: 'sending', leaseUntil: move.leaseUntil ?? null })), ...resumed].map((row) => ({
      ...row,
      attempts: row.attempts + 1,
    }));
    await send(tenantId, sending, jobs);
  }

  /** Quiet hours: each message due again at its release, with a new job, if it is still queued. */
  async function hold(tenantId: string, held: { message: MessageRow; release: Date }[], jobs: Map<string, RunningJob<DeliverJob>>): Promise<void> {
    if (held.length === 0) return;
    await tenantClient(prisma, tenantId).$transaction(async (tx: Tx) => {
      const moved = await tx.$queryRaw<{ id: string }[]>`
        UPDATE messaging."Message" AS m SET "dueAt" = h.due, "updatedAt" = ${clock.now().toISOString()}::timestamp(3)
        FROM unnest(${held.map((h) => h.message.id)}::text[], ${held.map((h) => h.release.toISOString())}::timestamp(3)[]) AS h (id, due)
        WHERE m."id" = h.id AND m."status" = 'queued'
        RETURNING m."id"`;
      const ids = new Set(moved.map((row) => row.id));
      const due = held.filter((h) => ids.has(h.message.id));
      await enqueueManyInTransaction(
        boss,
        tx,
        DELIVER_QUEUE,
        due.map((h) => nextJob(h.message, jobs.get(h.message.id)!, h.release)),
        clock,
      );
    });
  }

  /** Takes over resumable sends: a new lease and attempt, each only if its lease is still the one read. */
  async function resume(tenantId: string, messages: MessageRow[], leaseUntil: Date): Promise<MessageRow[]> {
    if (messages.length === 0) return [];
    const taken = await tenantClient(prisma, tenantId).message.updateManyAndReturn({
      where: { OR: messages.map((m) => ({ id: m.id, status: 'sending', leaseUntil: m.leaseUntil })) },
      data: { leaseUntil, attempts: { increment: 1 } },
      select: { id: true },
    });
    const ids = new Set(taken.map((row) => row.id));
    return messages.filter((m) => ids.has(m.id)).map((m) => ({ ...m, leaseUntil }));
  }

  /**
   * The consent may have been withdrawn since the messages were accepted: asks the clinical record again, once
   * for all their patients. Undefined when it cannot answer now: each message whose status has not moved since
   * is then due again later.
   */
  async function consentOf(
    tenantId: string,
    messages: MessageRow[],
    jobs: Map<string, RunningJob<DeliverJob>>,
  ): Promise<Map<string, ClinicalPatient> | undefined> {
    if (messages.length === 0) return new Map();
    try {
      return await clinical.patients(tenantId, [...new Set(messages.map((m) => m.patientId))]);
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE')) throw err;
      logger.warn({ count: messages.length, err: err.message }, 'clinical record unavailable; consent check retried later');
      await tenantClient(prisma, tenantId).$transaction(async (tx: Tx) => {
        // A duplicate job is harmless: whoever claims the message first sends it.
        const unchanged = await tx.$queryRaw<{ id: string }[]>`
          SELECT m."id" FROM messaging."Message" AS m
          JOIN unnest(${messages.map((m) => m.id)}::text[], ${messages.map((m) => m.status)}::text[]) AS c (id, status) ON m."id" = c.id AND m."status" = c.status`;
        const ids = new Set(unchanged.map((row) => row.id));
        const later = new Date(clock.now().getTime() + CLINICAL_RETRY_MS);
        await enqueueManyInTransaction(
          boss,
          tx,
          DELIVER_QUEUE,
          messages.filter((m) => ids.has(m.id)).map((m) => nextJob(m, jobs.get(m.id)!, later)),
          clock,
        );
      });
      return undefined;
    }
  }

  /**
   * Hands the claimed messages to their providers at once, then records the outcomes: sent (or delivered), with
   * the simulator's report jobs, in one transaction; failures in another; transient errors released for a retry
   * with backoff. A provider that threw something else fails the batch's jobs once the rest is recorded (their
   * messages keep the lease and are resumed when it runs out).
   */
  async function send(tenantId: string, rows: MessageRow[], jobs: Map<string, RunningJob<DeliverJob>>): Promise<void> {
    type Outcome = { row: MessageRow; job: RunningJob<DeliverJob>; provider: string } & ({ result: SendResult } | { error: unknown });
    const outcomes = await Promise.all(
      rows.map(async (row): Promise<Outcome> => {
        const message = openMessage(cipher, row);
        const provider: ChannelProvider = message.channel === 'email' ? providers.email : providers.sms;
        const job = jobs.get(row.id)!;
        try {
          const result = await inSpan(
            `provider ${provider.name} send`,
            { kind: SpanKind.CLIENT, attributes: { 'caregraph.channel': message.channel }, parent: job.context },
            () =>
              provider.send({
                messageId: message.id,
                channel: message.channel as 'sms' | 'email',
                to: cipher.decrypt(message.recipientEnc!),
                subject: message.subject,
                body: message.body,
                ...(message.channel === 'email' ? { html: `<p>${escapeValue(message.body, 'html')}</p>` } : {}),
              }),
          );
          return { row, job, provider: result.provider ?? provider.name, result };
        } catch (error) {
          return { row, job, provider: provider.name, error };
        }
      }),
    );
    const sent: Move[] = [];
    const reports = new Map<string, NonNullable<SendResult['report']>>();
    const failures: Move[] = [];
    const retries: MessageRow[] = [];
    let unexpected: Error | undefined;
    for (const outcome of outcomes) {
      const { row, job } = outcome;
      if ('result' in outcome) {
        const { result } = outcome;
        sent.push({
          message: row,
          target: result.status,
          provider: outcome.provider,
          providerMessageId: result.providerMessageId,
          traceparent: job.traceparent,
        });
        if (result.report) reports.set(row.id, result.report);
      } else if (!(outcome.error instanceof ProviderError)) {
        unexpected ??= outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
      } else if (outcome.error.permanent || row.attempts >= MAX_ATTEMPTS) {
        logger.warn({ messageId: row.id, err: outcome.error.message }, 'delivery failed');
        failures.push(failMove(row, job, outcome.error.message));
      } else {
        logger.info({ messageId: row.id, attempt: row.attempts, err: outcome.error.message }, 'send failed; will retry');
        retries.push(row);
      }
    }
    const now = clock.now().getTime();
    await Promise.all([
      advanceMany(statusDeps, tenantId, sent, (tx, moved) =>
        enqueueManyInTransaction(
          boss,
          tx,
          SIMULATOR_REPORT_QUEUE,
          moved.flatMap((move) => {
            const report = reports.get(move.message.id);
            if (!report) return [];
            const data: SimulatorReportJob & { traceparent?: string } = {
              tenantId,
              messageId: move.message.id,
              status: report.status,
              error: report.error,
              ...(move.traceparent ? { traceparent: move.traceparent } : {}),
            };
            return [{ data, startAfter: new Date(now + report.afterMs) }];
          }),
          clock,
        ),
      ),
      advanceMany(statusDeps, tenantId, failures),
      retries.length > 0 &&
        tenantClient(prisma, tenantId).$transaction(async (tx: Tx) => {
          const released = await tx.$queryRaw<{ id: string }[]>`
            UPDATE messaging."Message" SET "leaseUntil" = NULL, "updatedAt" = ${new Date(now).toISOString()}::timestamp(3)
            WHERE "id" = ANY(${retries.map((m) => m.id)}::text[]) AND "status" = 'sending'
            RETURNING "id"`;
          const ids = new Set(released.map((row) => row.id));
          await enqueueManyInTransaction(
            boss,
            tx,
            DELIVER_QUEUE,
            retries.filter((m) => ids.has(m.id)).map((m) => nextJob(m, jobs.get(m.id)!, new Date(now + retryDelayMs(m.attempts)))),
            clock,
          );
        }),
    ]);
    if (unexpected) throw unexpected;
  }

  async function report(jobs: RunningJob<SimulatorReportJob>[]): Promise<void> {
    await Promise.all(
      [...byTenant(jobs)].map(async ([tenantId, tenantJobs]) => {
        const rows = await tenantClient(prisma, tenantId).message.findMany({ where: { tenantId, id: { in: [...tenantJobs.keys()] } } });
        const moves = rows.map((message): Move => {
          const job = tenantJobs.get(message.id)!;
          return { message, target: job.data.status, error: job.data.error, traceparent: job.traceparent };
        });
        await advanceMany(statusDeps, tenantId, moves);
      }),
    );
  }

  /**
   * Sends whose worker died: clear the lease and give them a new job. Held messages whose due time has passed
   * on the clock: a new job now. Their own job starts in database time (pg-boss), which an injected clock does
   * not move, so without this a test that moves the clock past quiet hours would still wait for the database.
   * In production the two agree and this at most duplicates a job that is starting anyway: harmless, as the
   * worker claims a message once (a compare-and-set on its status). A held message is one whose `dueAt` is
   * later than its last change (`updatedAt`, when its delayed job was issued); the re-issue sets `updatedAt`
   * to now, past `dueAt`, so each hold is re-issued at most once, by one instance.
   */
  async function sweep(): Promise<void> {
    const now = clock.now();
    const nowSql = now.toISOString();
    const [stale, overdue] = await Promise.all([staleSends(prisma, now, 200), overdueHeldMessages(prisma, now, 200)]);
    const tenants = new Map<string, { stale: string[]; overdue: string[] }>();
    const of = (tenantId: string) => tenants.get(tenantId) ?? tenants.set(tenantId, { stale: [], overdue: [] }).get(tenantId)!;
    for (const { id, tenantId } of stale) of(tenantId).stale.push(id);
    for (const { id, tenantId } of overdue) of(tenantId).overdue.push(id);
    for (const [tenantId, ids] of tenants) {
      await tenantClient(prisma, tenantId).$transaction(async (tx: Tx) => {
        const released = await tx.$queryRaw<{ id: string }[]>`
          UPDATE messaging."Message" SET "leaseUntil" = NULL, "updatedAt" = ${nowSql}::timestamp(3)
          WHERE "id" = ANY(${ids.stale}::text[]) AND "status" = 'sending' AND "leaseUntil" < ${nowSql}::timestamp(3)
          RETURNING "id"`;
        const due = await tx.$queryRaw<{ id: string }[]>`
          UPDATE messaging."Message" SET "updatedAt" = ${nowSql}::timestamp(3)
          WHERE "id" = ANY(${ids.overdue}::text[]) AND "status" IN ('queued', 'scheduled') AND "dueAt" <= ${nowSql}::timestamp(3) AND "dueAt" > "updatedAt"
          RETURNING "id"`;
        await enqueueManyInTransaction(
          boss,
          tx,
          DELIVER_QUEUE,
          [...released, ...due].map((row) => ({ data: { tenantId, messageId: row.id } satisfies DeliverJob })),
          clock,
        );
      });
    }
    if (stale.length > 0) logger.warn({ count: stale.length }, 'resumed sends whose worker stopped');
    if (overdue.length > 0) logger.debug({ count: overdue.length }, 'released held messages due on the clock');
  }

  // A full batch means more are waiting: fetch again at once instead of after the polling interval.
  const workOptions = { batchSize: BATCH, pollingIntervalSeconds: POLL_SECONDS };
  const workers: QueueWorker[] = [];
  const work = async <T extends object>(queue: string, handle: (jobs: RunningJob<T>[]) => Promise<void>) => {
    const worker: QueueWorker = await workQueue<T>(boss, queue, workOptions, async (jobs) => {
      // One span per job, joining the trace of whoever enqueued it, for as long as its batch runs.
      const spans = jobs.map((job) => startSpan(`job ${queue}`, { kind: SpanKind.CONSUMER, parent: contextFrom(job.data as Record<string, unknown>) }));
      try {
        await handle(jobs.map((job, i) => ({ data: job.data, context: spans[i].context, traceparent: traceCarrier(spans[i].context).traceparent })));
        for (const span of spans) span.end();
      } catch (err) {
        for (const span of spans) span.end(err);
        throw err;
      }
      if (jobs.length === BATCH) boss.notifyWorker(worker.id);
    });
    workers.push(worker);
  };
  await work<DeliverJob>(DELIVER_QUEUE, deliver);
  await work<SimulatorReportJob>(SIMULATOR_REPORT_QUEUE, report);
  // The sweep runs on the clock, re-armed once each run has finished (never two at once).
  const sweepEveryMs = Math.min(10_000, Math.max(1000, Math.floor(leaseMs / 2)));
  let stopped = false;
  let timer: ClockTimer | undefined;
  let sweeping: Promise<void> | undefined;
  const runSweep = () => {
    sweeping = sweep()
      .catch((err) => logger.error({ err }, 'delivery sweep failed'))
      .finally(() => {
        sweeping = undefined;
        if (!stopped) timer = clock.setTimeout(runSweep, sweepEveryMs);
      });
  };
  runSweep();
  logger.info({ sms: providers.sms.name, email: providers.email.name }, 'delivery worker started');

  return {
    circuits: () => [...providers.sms.circuits(), ...providers.email.circuits()],
    async close() {
      stopped = true;
      clock.clearTimeout(timer);
      await Promise.all(workers.map((worker) => worker.close()));
      await sweeping;
      await Promise.all([providers.sms.close(), providers.email.close()]);
    },
  };
}
