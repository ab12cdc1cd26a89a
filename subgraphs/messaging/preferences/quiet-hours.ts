export interface QuietHoursSetting {
  start: string; // HH:MM
  end: string; // HH:MM
  timezone: string; // IANA
}

export { isTimeZone } from '../../../common/dates';

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

/** One formatter per time zone: building one costs far more than using it (a batch asks per item). */
const clockFormats = new Map<string, Intl.DateTimeFormat>();

/** Minutes since local midnight (and seconds into the minute) at `at` in `zone`. */
function localClock(at: Date, zone: string): { minute: number; second: number } {
  let format = clockFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    clockFormats.set(zone, format);
  }
  const parts = format.formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { minute: get('hour') * 60 + get('minute'), second: get('second') };
}

/**
 * When a message due at `at` may go out: `at` itself outside quiet hours,
 * otherwise the moment they end in the patient's time zone. The window is
 * [start, end) and may wrap midnight (22:00–07:00); start = end means no
 * quiet hours. Around a DST change the end can be off by the shift; the
 * worker checks again when the held message comes due, so it never goes out
 * inside the window.
 */
export function releaseTime(quiet: QuietHoursSetting | null, at: Date): Date {
  if (!quiet) return at;
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  if (start === end) return at;
  const { minute, second } = localClock(at, quiet.timezone);
  const inside = start < end ? minute >= start && minute < end : minute >= start || minute < end;
  if (!inside) return at;
  const minutesLeft = (end - minute + 1440) % 1440;
  const release = new Date(at.getTime() + minutesLeft * 60_000 - second * 1000);
  release.setUTCMilliseconds(0);
  return release;
}

/**
 * When the quiet hours that hold `at` began (`at` itself outside them): the
 * last moment before them a message can still go out unheld.
 */
export function quietStartBefore(quiet: QuietHoursSetting | null, at: Date): Date {
  if (!quiet || releaseTime(quiet, at).getTime() === at.getTime()) return at;
  const { minute, second } = localClock(at, quiet.timezone);
  const sinceStart = (minute - minutesOf(quiet.start) + 1440) % 1440;
  const begin = new Date(at.getTime() - sinceStart * 60_000 - second * 1000);
  begin.setUTCMilliseconds(0);
  return begin;
}
