import type PgBoss from 'pg-boss';
import type { Prisma } from '../db/generated/client';

/** Sends one message (or re-checks a held one); data {tenantId, messageId}. */
export const DELIVER_QUEUE = 'messaging-deliver';
/** The SMS/email simulator's delivery report; data {tenantId, messageId, status, error?}. */
export const SIMULATOR_REPORT_QUEUE = 'messaging-simulator-report';

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

/** How long a fetched job may stay active before pg-boss hands it out again. */
export const JOB_EXPIRY_SECONDS = 30;

/** Creates the queues and applies their policy (idempotent); every process that sends or works jobs calls it at start. */
export async function ensureQueues(boss: PgBoss): Promise<void> {
  // Our handlers settle every outcome themselves; pg-boss retries only cover a
  // handler that crashed or threw on a database error.
  // A job fetched by a worker that then died stays active until it expires: keep that short, so a crash
  // delays the messages of the fetched batch by seconds, not minutes. A job that expires while its handler
  // is merely slow is harmless: the handler claims the message first, so the retry finds it taken.
  for (const name of [DELIVER_QUEUE, SIMULATOR_REPORT_QUEUE]) {
    const policy = { name, retryLimit: 5, retryDelay: 2, retryBackoff: true, expireInSeconds: JOB_EXPIRY_SECONDS };
    await boss.createQueue(name, policy);
    await boss.updateQueue(name, policy);
  }
}

type RawTx = Pick<Prisma.TransactionClient, '$queryRawUnsafe'>;

/**
 * pg-boss's `send` run on a Prisma interactive transaction: the job row is
 * written in the same transaction as the message change that needs it, so a
 * committed message always has its job and a rolled-back one never does. This
 * is what makes an accepted message survive a crash at any point.
 */
export async function enqueueInTransaction(boss: PgBoss, tx: RawTx, queue: string, data: object, startAfter?: Date): Promise<void> {
  const db = {
    executeSql: async (text: string, values: unknown[] = []) => {
      const args = values.map((v) => (v === undefined ? null : v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v));
      return { rows: (await tx.$queryRawUnsafe(text, ...args)) as unknown[] };
    },
  };
  const id = await boss.send(queue, data, { db, ...(startAfter && startAfter.getTime() > Date.now() ? { startAfter } : {}) } as PgBoss.SendOptions);
  if (!id) throw new Error(`job queue '${queue}' does not exist`);
}
