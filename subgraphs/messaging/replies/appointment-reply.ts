import type PgBoss from 'pg-boss';
import { workQueue } from '../../../common/db/boss';
import { AppError } from '../../../common/errors';
import type { Logger } from '../../../common/logger';
import { tenantClient } from '../../../common/db/tenant-session';
import type { ClinicalRecord } from '../clinical-record/client';
import type { MessagingPrisma } from '../db/client';
import type { InboundMessage } from '../db/generated/client';
import { APPOINTMENT_REPLY_QUEUE, type AppointmentReplyJob } from '../delivery/jobs';

export interface AppointmentReplyDeps {
  /** For `applyAppointmentReply`, bound to the job's tenant (`tenantClient`); the worker binds it per job. */
  prisma: MessagingPrisma;
  clinical: ClinicalRecord;
  /** Moves the clinical record's new events into messaging's pipeline now, rather than at the worker's next look. */
  relay: () => Promise<unknown>;
  logger?: Logger;
}

/**
 * Applies a recorded C/X reply (action `pending`) to its appointment: asks
 * the clinical record with the reply's id as request key, so a repeat after a
 * crash or a lost answer changes nothing twice, then settles the reply's
 * action (`confirmed`/`cancelled`, or `ignored` when the appointment was
 * already in that status, cancelled or gone). A clinical record that does not
 * answer throws (SERVICE_UNAVAILABLE) and the reply stays pending for the job
 * to retry. The `appointment.*` event comes from the clinical record's own
 * outbox, committed with the change.
 */
export async function applyAppointmentReply(deps: AppointmentReplyDeps, job: AppointmentReplyJob): Promise<InboundMessage | null> {
  const { prisma } = deps;
  const reply = await prisma.inboundMessage.findFirst({ where: { tenantId: job.tenantId, id: job.replyId } });
  if (!reply || reply.action !== 'pending') return reply;
  let action: string;
  try {
    await deps.clinical.updateAppointmentStatus(job.tenantId, job.appointmentId, job.status, `reply:${job.replyId}`);
    action = job.status;
  } catch (err) {
    if (!(err instanceof AppError && (err.code === 'CONFLICT' || err.code === 'NOT_FOUND'))) throw err;
    action = 'ignored';
  }
  await prisma.inboundMessage.updateMany({ where: { tenantId: job.tenantId, id: job.replyId, action: 'pending' }, data: { action } });
  // Not awaited: the reply's answer does not wait for the event; the worker relays whatever this misses.
  if (action !== 'ignored') void deps.relay().catch((err) => deps.logger?.warn({ err }, 'relaying clinical events failed; the worker will'));
  return prisma.inboundMessage.findFirst({ where: { tenantId: job.tenantId, id: job.replyId } });
}

/** Works the reply jobs of replies whose first attempt did not settle (clinical record down, process died). */
export async function startAppointmentReplyWorker(boss: PgBoss, deps: AppointmentReplyDeps): Promise<{ close(): Promise<void> }> {
  return workQueue<AppointmentReplyJob>(boss, APPOINTMENT_REPLY_QUEUE, { batchSize: 10, pollingIntervalSeconds: 1 }, async (jobs) => {
    // A throw (the clinical record still unreachable) fails the batch's jobs, which pg-boss retries with backoff.
    // Each job names its tenant and runs under it (row-level security).
    for (const job of jobs) await applyAppointmentReply({ ...deps, prisma: tenantClient(deps.prisma, job.data.tenantId) }, job.data);
  });
}
