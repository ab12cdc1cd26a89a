import { wallClockMs } from '../../../common/dates';

const DAY_MS = 86_400_000;

/**
 * How far ahead an appointment is, as a reminder says it (the `when` variable of the reminder template): "in 45
 * minutes" under an hour, "in 2 hours" under 12 hours, else by calendar days in the appointment's zone, "today",
 * "tomorrow", "in 7 days". In the patient's language where the runtime knows it (Intl), else English.
 */
export function howFarAhead(start: Date, now: Date, zone: string, language: string | null | undefined): string {
  const locale = language && Intl.RelativeTimeFormat.supportedLocalesOf([language]).length > 0 ? language : 'en';
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  const minutes = Math.max(1, Math.round((start.getTime() - now.getTime()) / 60_000));
  if (minutes < 60) return format.format(minutes, 'minute');
  if (minutes < 12 * 60) return format.format(Math.round(minutes / 60), 'hour');
  const day = (at: Date) => Math.floor(wallClockMs(at.getTime(), zone) / DAY_MS);
  return format.format(day(start) - day(now), 'day');
}
