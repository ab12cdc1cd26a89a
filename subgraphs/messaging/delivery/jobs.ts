import type PgBoss from 'pg-boss';
import type { Prisma } from '../db/generated/client';
import { ensureQueue } from '../../../common/db/boss';
import { traceCarrier } from '../../../common/telemetry/tracing';
import type { Clock } from '../../../common/clock';

/** Sends one message (or re-checks a held one); data {tenantId, messageId}. */
export const DELIVER_QUEUE = 'messaging-deliver';
/** The SMS/email simulator's delivery report; data {tenantId, messageId, status, error?}. */
export const SIMULATOR_REPORT_QUEUE = 'messaging-simulator-report';

/** Applies a recorded C/X reply to its appointment in the clinical record until the record answers; data {tenantId, replyId, appointmentId, status}. */
export const APPOINTMENT_REPLY_QUEUE = 'messaging-appointment-reply';

/** Sends an appointment's automatic reminder when due, unless it has moved on; data {tenantId, appointmentId, start}. */
export const REMINDER_QUEUE = 'messaging-appointment-reminder';

export interface ReminderJob {
  tenantId: string;
  appointmentId: string;
  /** The appointment start the reminder was scheduled for (ISO 8601): a job for an older start is stale. */
  start: string;
  /** The reminder's lead time (its row); absent on jobs queued before cadences, whose appointment had one row. */
  leadMinutes?: number;
}

export interface DeliverJob {
  tenantId: string;
  messageId: string;
}

export interface SimulatorReportJob {
  tenantId: string;
  messageId: string;
  status: 'delivered' | 'failed';
  error?: string;
}

export interface AppointmentReplyJob {
  tenantId: string;
  replyId: string;
  appointmentId: string;
  status: 'confirmed' | 'cancelled';
}

/**
 * Creates the queues and applies their policy (idempotent); every process that sends or works jobs calls it at start.
 * `jobExpirySeconds` (DELIVERY_JOB_EXPIRY_SECONDS): how long a fetched send job may stay active before pg-boss hands it out again.
 */
export async function ensureQueues(boss: PgBoss, jobExpirySeconds: number): Promise<void> {
  // Our handlers settle every outcome themselves; pg-boss retries only cover a
  // handler that crashed or threw on a database error.
  // A job fetched by a worker that then died stays active until it expires: keep that short, so a crash
  // delays the messages of the fetched batch by seconds, not minutes. A job that expires while its handler
  // is merely slow is harmless: the handler claims the message first, so the retry finds it taken.
  for (const name of [DELIVER_QUEUE, SIMULATOR_REPORT_QUEUE]) {
    const policy = { name, retryLimit: 5, retryDelay: 2, retryBackoff: true, expireInSeconds: jobExpirySeconds };
    await ensureQueue(boss, policy);
  }
  // The clinical record may be down for a while: retries back off (2 s doubling, capped by pg-boss at 2^16 × 2 s) over about two days.
  const replyPolicy = { name: APPOINTMENT_REPLY_QUEUE, retryLimit: 15, retryDelay: 2, retryBackoff: true, expireInSeconds: 60 };
  await ensureQueue(boss, replyPolicy);
  // A reminder whose send hit the clinical record while it was down is tried again, backing off.
  const reminderPolicy = { name: REMINDER_QUEUE, retryLimit: 10, retryDelay: 5, retryBackoff: true, expireInSeconds: 60 };
  await ensureQueue(boss, reminderPolicy);
}

/**
 * When a job due at `due` (an instant of `clock`) starts, as pg-boss takes it: seconds from the database's
 * `now()`, since pg-boss starts jobs in database time, which does not follow an injected clock
 * (common/clock.ts). Undefined when already due.
 */
function delaySeconds(due: Date | undefined, clock: Clock): number | undefined {
  if (!due) return undefined;
  const seconds = (due.getTime() - clock.now().getTime()) / 1000;
  return seconds > 0 ? seconds : undefined;
}

type RawTx = Pick<Prisma.TransactionClient, '$queryRawUnsafe' | '$executeRawUnsafe'>;

/** pg-boss's parameters as the Prisma driver takes them (objects as JSON text). */
const sqlArgs = (values: unknown[]) =>
  values.map((v) => (v === undefined ? null : v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v));

/**
 * pg-boss's `send` run on a Prisma interactive transaction: the job row is
 * written in the same transaction as the message change that needs it, so a
 * committed message always has its job and a rolled-back one never does. This
 * is what makes an accepted message survive a crash at any point.
 */
export async function enqueueInTransaction(boss: PgBoss, tx: RawTx, queue: string, data: object, startAfter: Date | undefined, clock: Clock): Promise<void> {
  const db = {
    executeSql: async (text: string, values: unknown[] = []) => ({ rows: await tx.$queryRawUnsafe<unknown[]>(text, ...sqlArgs(values)) }),
  };
  // The sender's trace context travels with the job: the worker's run of it joins the same trace.
  const delay = delaySeconds(startAfter, clock);
  const id = await boss.send(queue, { ...data, ...traceCarrier() }, { db, ...(delay ? { startAfter: delay } : {}) } as PgBoss.SendOptions);
  if (!id) throw new Error(`job queue '${queue}' does not exist`);
}

/**
 * Many jobs of one queue in one statement (pg-boss's `insert`), on the
 * caller's transaction, with the same guarantee as `enqueueInTransaction`.
 * pg-boss's insert answers no ids: the statement's row count proves every
 * job was written (none is when the queue does not exist).
 */
export async function enqueueManyInTransaction(
  boss: PgBoss,
  tx: RawTx,
  queue: string,
  jobs: { data: object; startAfter?: Date }[],
  clock: Clock,
): Promise<void> {
  if (jobs.length === 0) return;
  let written = 0;
  const db = {
    executeSql: async (text: string, values: unknown[] = []) => {
      written += await tx.$executeRawUnsafe(text, ...sqlArgs(values));
      return { rows: [] };
    },
  };
  const trace = traceCarrier();
  await boss.insert(
    jobs.map((job) => {
      const delay = delaySeconds(job.startAfter, clock);
      return {
        name: queue,
        // A job that names its own trace context (the job it continues) keeps it.
        data: { ...trace, ...job.data },
        // A number of seconds as text: pg-boss's insert adds it to the database's now() as an interval.
        ...(delay ? { startAfter: String(delay) } : {}),
      };
    }),
    { db } as PgBoss.InsertOptions,
  );
  if (written !== jobs.length) throw new Error(`job queue '${queue}' took ${written} of ${jobs.length} jobs`);
}
