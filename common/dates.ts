/** YYYY-MM-DD, the shape only; `calendarDay` checks that the day exists. */
export const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** An ISO 8601 timestamp with a zone (seconds and fractions optional). */
export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The UTC midnight of a YYYY-MM-DD that names a real day (not 2025-02-30); undefined otherwise. */
export function calendarDay(value: string): Date | undefined {
  if (!DATE_ONLY.test(value)) return undefined;
  const day = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value ? day : undefined;
}

export const isCalendarDate = (value: string): boolean => calendarDay(value) !== undefined;

/** Whether `zone` is an IANA time zone this runtime knows (Europe/Amsterdam, UTC…). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A wall-clock time without a zone: YYYY-MM-DDTHH:MM, seconds optional. */
export const LOCAL_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** The wall clock of `zone` at `at`, as if it were UTC (milliseconds since the epoch). */
export function wallClockMs(at: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
}

/**
 * The instant a wall-clock time (LOCAL_TIMESTAMP) names in `zone`; undefined
 * when that time does not exist there (a daylight-saving gap) or is no
 * calendar time. In the repeated hour of a change back, the earlier instant.
 */
export function zonedTimeToInstant(local: string, zone: string): Date | undefined {
  const m = LOCAL_TIMESTAMP.exec(local);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map((v) => Number(v ?? 0));
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  if (new Date(wall).getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return undefined;
  // Try the offsets in force just before and just after: one of them reproduces the wall clock unless it is in a gap.
  const candidates = [wall - 86_400_000, wall + 86_400_000].map((probe) => wall - (wallClockMs(probe, zone) - probe));
  const found = candidates.sort((a, b) => a - b).find((t) => wallClockMs(t, zone) === wall);
  return found === undefined ? undefined : new Date(found);
}
