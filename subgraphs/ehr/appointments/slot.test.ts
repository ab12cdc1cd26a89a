import { zonedTimeToInstant } from '../../../common/dates';
import { AppError } from '../../../common/errors';
import { parseSlot } from './slot';

const now = new Date('2026-06-01T00:00:00Z');

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return (err.details ?? []).map((d) => String(d.path));
    throw err;
  }
  return [];
}

describe('appointment slots', () => {
  it('reads a wall-clock time in the appointment time zone, across summer and winter time', () => {
    expect(zonedTimeToInstant('2026-07-01T09:00', 'Europe/Amsterdam')?.toISOString()).toBe('2026-07-01T07:00:00.000Z');
    expect(zonedTimeToInstant('2026-12-01T09:00', 'Europe/Amsterdam')?.toISOString()).toBe('2026-12-01T08:00:00.000Z');
    expect(zonedTimeToInstant('2026-12-01T09:00', 'America/New_York')?.toISOString()).toBe('2026-12-01T14:00:00.000Z');
  });

  it('refuses a time inside a daylight-saving gap and takes the earlier of a repeated hour', () => {
    expect(zonedTimeToInstant('2026-03-29T02:30', 'Europe/Amsterdam')).toBeUndefined();
    expect(zonedTimeToInstant('2026-10-25T02:30', 'Europe/Amsterdam')?.toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(zonedTimeToInstant('2026-02-30T10:00', 'UTC')).toBeUndefined();
  });

  it('takes times with offsets as they stand and keeps the zone', () => {
    const slot = parseSlot({ start: '2026-07-01T09:00+02:00', end: '2026-07-01T09:30:00Z', timeZone: 'Europe/Amsterdam' }, now);
    expect(slot).toEqual({ start: new Date('2026-07-01T07:00:00Z'), end: new Date('2026-07-01T09:30:00Z'), timeZone: 'Europe/Amsterdam' });
  });

  it('names every problem: local time without a zone, end before start, past, too long, unknown zone', () => {
    expect(problems(() => parseSlot({ start: '2026-07-01T09:00', end: '2026-07-01T09:30Z' }, now))).toEqual(['start']);
    expect(problems(() => parseSlot({ start: '2026-07-01T10:00Z', end: '2026-07-01T09:30Z' }, now))).toEqual(['end']);
    expect(problems(() => parseSlot({ start: '2026-05-01T10:00Z', end: '2026-05-01T10:30Z' }, now))).toEqual(['start']);
    expect(problems(() => parseSlot({ start: '2026-07-01T10:00Z', end: '2026-07-02T10:30Z' }, now))).toEqual(['end']);
    expect(problems(() => parseSlot({ start: '2026-07-01T10:00', end: '2026-07-01T10:30', timeZone: 'Mars/Olympus' }, now))).toEqual([
      'timeZone',
      'start',
      'end',
    ]);
    expect(problems(() => parseSlot({ end: 'tomorrow' }, now))).toEqual(['start', 'end']);
  });
});
