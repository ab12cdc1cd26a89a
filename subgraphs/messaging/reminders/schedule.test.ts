import { reminderDueAt } from './schedule';

const quiet = { start: '22:00', end: '07:00', timezone: 'Europe/Amsterdam' };
const now = new Date('2026-12-01T08:00:00Z');

describe('reminder due time', () => {
  it('is the lead time before the start, or at once when that has passed, and nothing once started', () => {
    expect(reminderDueAt(new Date('2026-12-03T10:00:00Z'), 1440, null, now)).toEqual(new Date('2026-12-02T10:00:00Z'));
    expect(reminderDueAt(new Date('2026-12-01T12:00:00Z'), 1440, null, now)).toEqual(now);
    expect(reminderDueAt(new Date('2026-12-01T07:00:00Z'), 1440, null, now)).toBeNull();
  });

  it('waits for the end of quiet hours when that is still before the appointment', () => {
    // 12 h before 14:00Z is 03:00 Amsterdam, inside 22:00–07:00: held to 07:00 Amsterdam (06:00Z), before the appointment.
    expect(reminderDueAt(new Date('2026-12-02T14:00:00Z'), 720, quiet, now)).toEqual(new Date('2026-12-02T06:00:00Z'));
  });

  it('goes out just before quiet hours begin when their end is too late', () => {
    // Appointment 07:30 Amsterdam, lead 4 h: 03:30 is quiet; 07:00 is still before the appointment, so it waits.
    expect(reminderDueAt(new Date('2026-12-03T06:30:00Z'), 240, quiet, now)).toEqual(new Date('2026-12-03T06:00:00Z'));
    // Appointment 06:30 Amsterdam: quiet hours end after it, so the reminder goes at 22:00 the evening before.
    expect(reminderDueAt(new Date('2026-12-03T05:30:00Z'), 240, quiet, now)).toEqual(new Date('2026-12-02T21:00:00Z'));
  });
});
