import type PgBoss from 'pg-boss';
import { enqueueInTransaction, REMINDER_QUEUE, type ReminderJob } from '../delivery/jobs';
import type { Tx } from '../delivery/transitions';
import { toPreferencesView } from '../preferences/preference.service';
import { quietStartBefore, releaseTime, type QuietHoursSetting } from '../preferences/quiet-hours';
import { reminderLeadMinutes } from './settings';
import type { Clock } from '../../../common/clock';

/**
 * When an appointment's reminder goes out: `leadMinutes` before its start,
 * at once when that has passed, and never inside the patient's quiet hours:
 * held until they end when that is still before the appointment, otherwise
 * sent just before they begin. Null when the appointment has started.
 */
export function reminderDueAt(start: Date, leadMinutes: number, quiet: QuietHoursSetting | null, now: Date): Date | null {
  if (start <= now) return null;
  const wanted = new Date(Math.max(start.getTime() - leadMinutes * 60_000, now.getTime()));
  const release = releaseTime(quiet, wanted);
  if (release.getTime() === wanted.getTime() || release < start) return release;
  const before = quietStartBefore(quiet, wanted);
  return before > now ? before : release;
}

interface RelayedEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * Keeps each appointment's reminder in step with the clinical record's
 * events, in the relay's transaction (so an event is acted on exactly when it
 * is relayed): booked or rescheduled (re)schedules it with a job at its due
 * time, cancelled cancels it. A job finds out on its own whether its row has
 * moved on since (another start, cancelled), so a moved reminder's old job
 * sends nothing.
 */
export async function scheduleReminders(tx: Tx, boss: PgBoss, tenantId: string, events: RelayedEvent[], clock: Clock): Promise<void> {
  const now = clock.now();
  let leadMinutes: number | undefined;
  for (const { type, data } of events) {
    const appointmentId = String(data.appointmentId);
    if (type === 'appointment.cancelled') {
      await tx.appointmentReminder.updateMany({ where: { tenantId, appointmentId, status: 'scheduled' }, data: { status: 'cancelled' } });
      continue;
    }
    if (type !== 'appointment.booked' && type !== 'appointment.rescheduled') continue;
    const patientId = String(data.patientId);
    const start = new Date(String(data.start));
    leadMinutes ??= await reminderLeadMinutes(tx, tenantId);
    const preferences = toPreferencesView(await tx.communicationPreference.findUnique({ where: { tenantId_patientId: { tenantId, patientId } } }));
    const dueAt = reminderDueAt(start, leadMinutes, preferences.quietHours, now);
    if (!dueAt) continue;
    const row = { patientId, start, dueAt, status: 'scheduled', note: null, messageId: null };
    await tx.appointmentReminder.upsert({
      where: { tenantId_appointmentId: { tenantId, appointmentId } },
      create: { tenantId, appointmentId, ...row },
      update: row,
    });
    const job: ReminderJob = { tenantId, appointmentId, start: start.toISOString() };
    await enqueueInTransaction(boss, tx, REMINDER_QUEUE, job, dueAt, clock);
  }
}
