import type PgBoss from 'pg-boss';
import { enqueueInTransaction, REMINDER_QUEUE, type ReminderJob } from '../delivery/jobs';
import type { Tx } from '../delivery/transitions';
import { toPreferencesView } from '../preferences/preference.service';
import { quietStartBefore, releaseTime, type QuietHoursSetting } from '../preferences/quiet-hours';
import { reminderLeadTimes } from './settings';
import type { Clock } from '../../../common/clock';

/**
 * How long before the patient's quiet hours begin a reminder moved out of them is due: time for its job to be
 * picked up and its message created outside them (the delivery worker holds a message created inside them).
 */
const QUIET_MARGIN_MS = 5 * 60_000;

/**
 * When an appointment's reminder goes out: `leadMinutes` before its start,
 * at once when that has passed, and never inside the patient's quiet hours:
 * then at the last moment before they begin (less `QUIET_MARGIN_MS`), or at
 * once when that has passed and it is not quiet yet, else when they end
 * (a reminder due while they already hold is held by them anyway).
 * Null when the appointment has started.
 */
export function reminderDueAt(start: Date, leadMinutes: number, quiet: QuietHoursSetting | null, now: Date): Date | null {
  if (start <= now) return null;
  const wanted = new Date(Math.max(start.getTime() - leadMinutes * 60_000, now.getTime()));
  const release = releaseTime(quiet, wanted);
  if (release.getTime() === wanted.getTime()) return wanted;
  const before = new Date(quietStartBefore(quiet, wanted).getTime() - QUIET_MARGIN_MS);
  if (before > now) return before;
  return releaseTime(quiet, now).getTime() === now.getTime() ? now : release;
}

/**
 * The reminders of one appointment under a cadence (lead times in minutes, longest first): one per lead
 * time still ahead, each at its `reminderDueAt`. When none is ahead (booked late) the shortest lead time's
 * reminder goes at once, as a single lead time does. A lead time whose quiet-hours move lands on the due time
 * of a longer one is left out: the patient would get the same reminder twice at once.
 */
export function reminderPlan(start: Date, leadTimes: number[], quiet: QuietHoursSetting | null, now: Date): Array<{ leadMinutes: number; dueAt: Date }> {
  if (start <= now || leadTimes.length === 0) return [];
  const ahead = leadTimes.filter((lead) => start.getTime() - lead * 60_000 > now.getTime());
  const plan: Array<{ leadMinutes: number; dueAt: Date }> = [];
  for (const leadMinutes of ahead.length > 0 ? ahead : [Math.min(...leadTimes)]) {
    const dueAt = reminderDueAt(start, leadMinutes, quiet, now);
    if (dueAt && !plan.some((p) => p.dueAt.getTime() === dueAt.getTime())) plan.push({ leadMinutes, dueAt });
  }
  return plan;
}

interface RelayedEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * Keeps each appointment's reminders in step with the clinical record's
 * events, in the relay's transaction (so an event is acted on exactly when it
 * is relayed): booked or rescheduled (re)schedules one row per lead time of
 * the tenant's cadence (`reminderPlan`), each with a job at its due time, and
 * cancels the appointment's other scheduled rows; cancelled cancels its
 * scheduled rows, confirmed skips them (the patient needs no more reminding).
 * A job finds out on its own whether its row has moved on since (another
 * start, cancelled, skipped), so a moved reminder's old job sends nothing.
 */
export async function scheduleReminders(tx: Tx, boss: PgBoss, tenantId: string, events: RelayedEvent[], clock: Clock): Promise<void> {
  const now = clock.now();
  let leadTimes: number[] | undefined;
  for (const { type, data } of events) {
    const appointmentId = String(data.appointmentId);
    if (type === 'appointment.cancelled') {
      await tx.appointmentReminder.updateMany({ where: { tenantId, appointmentId, status: 'scheduled' }, data: { status: 'cancelled' } });
      continue;
    }
    if (type === 'appointment.confirmed') {
      await tx.appointmentReminder.updateMany({
        where: { tenantId, appointmentId, status: 'scheduled' },
        data: { status: 'skipped', note: 'appointment confirmed' },
      });
      continue;
    }
    if (type !== 'appointment.booked' && type !== 'appointment.rescheduled') continue;
    const patientId = String(data.patientId);
    const start = new Date(String(data.start));
    leadTimes ??= await reminderLeadTimes(tx, tenantId);
    const preferences = toPreferencesView(await tx.communicationPreference.findUnique({ where: { tenantId_patientId: { tenantId, patientId } } }));
    const plan = reminderPlan(start, leadTimes, preferences.quietHours, now);
    // Reminders of the old start that the new plan has no place for (a lead time now passed or no longer in the cadence).
    await tx.appointmentReminder.updateMany({
      where: { tenantId, appointmentId, status: 'scheduled', leadMinutes: { notIn: plan.map((p) => p.leadMinutes) } },
      data: { status: 'cancelled', note: 'rescheduled' },
    });
    for (const { leadMinutes, dueAt } of plan) {
      const row = { patientId, start, dueAt, status: 'scheduled', note: null, messageId: null };
      await tx.appointmentReminder.upsert({
        where: { tenantId_appointmentId_leadMinutes: { tenantId, appointmentId, leadMinutes } },
        create: { tenantId, appointmentId, leadMinutes, ...row },
        update: row,
      });
      const job: ReminderJob = { tenantId, appointmentId, start: start.toISOString(), leadMinutes };
      await enqueueInTransaction(boss, tx, REMINDER_QUEUE, job, dueAt, clock);
    }
  }
}
