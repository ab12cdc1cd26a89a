import { isTimeZone, releaseTime } from './quiet-hours';

describe('quiet hours', () => {
  const amsterdam = { start: '22:00', end: '07:00', timezone: 'Europe/Amsterdam' };

  it('lets a message go at once outside the window', () => {
    const at = new Date('2026-11-22T12:00:00Z'); // 13:00 in Amsterdam
    expect(releaseTime(amsterdam, at)).toBe(at);
    expect(releaseTime(null, at)).toBe(at);
  });

  it("holds a message inside a window that wraps midnight until it ends, in the patient's zone", () => {
    // 23:30 in Amsterdam (UTC+1 in November) → released 07:00 local = 06:00 UTC.
    expect(releaseTime(amsterdam, new Date('2026-11-22T22:30:15Z')).toISOString()).toBe('2026-11-23T06:00:00.000Z');
    // 05:10 local, after midnight, same release.
    expect(releaseTime(amsterdam, new Date('2026-11-23T04:10:00Z')).toISOString()).toBe('2026-11-23T06:00:00.000Z');
  });

  it('handles a daytime window and its end boundary', () => {
    const lunch = { start: '12:00', end: '13:00', timezone: 'UTC' };
    expect(releaseTime(lunch, new Date('2026-11-22T12:59:59Z')).toISOString()).toBe('2026-11-22T13:00:00.000Z');
    const end = new Date('2026-11-22T13:00:00Z');
    expect(releaseTime(lunch, end)).toBe(end);
    const same = { start: '08:00', end: '08:00', timezone: 'UTC' };
    const at = new Date('2026-11-22T08:00:00Z');
    expect(releaseTime(same, at)).toBe(at);
  });

  it('knows IANA zones', () => {
    expect(isTimeZone('America/New_York')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
