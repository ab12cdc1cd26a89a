import type PgBoss from 'pg-boss';
import { workQueue } from '../../../common/db/boss';
import { SYSTEM_SUBJECTS } from '../../../common/auth/system-identities';
import { AppError } from '../../../common/errors';
import type { Logger } from '../../../common/logger';
import { tenantClient } from '../../../common/db/tenant-session';
import { REMINDER_QUEUE, type ReminderJob } from '../delivery/jobs';
import { MessageService, type MessageServiceDeps } from '../messages/message.service';

/** Outcomes that end a reminder without a message: the appointment is gone or cancelled, the patient cannot be messaged. */
const FINAL = new Set(['NOT_FOUND', 'CONFLICT', 'PATIENT_OPTED_OUT', 'VALIDATION_ERROR']);

/**
 * Sends one due reminder, unless its row has moved on (rescheduled to
 * another start, cancelled, skipped, already sent). The send is the same as
 * `remindAppointment` (template, channel choice, consent,
 * quiet hours held by the delivery worker), made as the reminder scheduler of
 * the job's tenant, with an idempotency key per appointment, start and lead
 * time, so a job run twice sends one message. Returns the reminder's status.
 */
export async function sendDueReminder(deps: MessageServiceDeps, job: ReminderJob, logger?: Logger): Promise<string> {
  const prisma = tenantClient(deps.prisma, job.tenantId);
  // A job of before cadences names no lead time: its appointment's row for that start.
  const reminder = await prisma.appointmentReminder.findFirst({
    where: {
      tenantId: job.tenantId,
      appointmentId: job.appointmentId,
      start: new Date(job.start),
      ...(job.leadMinutes === undefined ? {} : { leadMinutes: job.leadMinutes }),
    },
  });
  if (!reminder || reminder.status !== 'scheduled') return reminder?.status ?? 'gone';
  const row = { tenantId: job.tenantId, appointmentId: job.appointmentId, leadMinutes: reminder.leadMinutes, start: reminder.start };
  const key = `reminder:${job.appointmentId}:${job.start}${job.leadMinutes === undefined ? '' : `:${job.leadMinutes}`}`;
  const messages = new MessageService({ ...deps, prisma }, { sub: SYSTEM_SUBJECTS.reminderScheduler, tenantId: job.tenantId, roles: [] });
  try {
    const message = await messages.remind(job.appointmentId, null, null, key);
    await prisma.appointmentReminder.updateMany({ where: row, data: { status: 'sent', messageId: message.id } });
    return 'sent';
  } catch (err) {
    if (!(err instanceof AppError && FINAL.has(err.code))) throw err;
    logger?.info({ appointmentId: job.appointmentId, code: err.code }, 'appointment reminder skipped');
    await prisma.appointmentReminder.updateMany({
      where: { ...row, status: 'scheduled' },
      data: { status: 'skipped', note: err.message.slice(0, 500) },
    });
    return 'skipped';
  }
}

/** Works the reminder jobs as they fall due (a throw, e.g. the clinical record down, is retried by pg-boss with backoff). */
export async function startReminderWorker(boss: PgBoss, deps: MessageServiceDeps, logger: Logger): Promise<{ close(): Promise<void> }> {
  return workQueue<ReminderJob>(boss, REMINDER_QUEUE, { batchSize: 10, pollingIntervalSeconds: 1 }, async (jobs) => {
    for (const job of jobs) await sendDueReminder(deps, job.data, logger);
  });
}
