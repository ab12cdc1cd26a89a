import { reminderDueAt, reminderPlan } from './schedule';

const quiet = { start: '22:00', end: '07:00', timezone: 'Europe/Amsterdam' };
const now = new Date('2026-12-01T08:00:00Z');
const DAY = 1440;

describe('reminder due time', () => {
  it('is the lead time before the start, or at once when that has passed, and nothing once started', () => {
    expect(reminderDueAt(new Date('2026-12-03T10:00:00Z'), 1440, null, now)).toEqual(new Date('2026-12-02T10:00:00Z'));
    expect(reminderDueAt(new Date('2026-12-01T12:00:00Z'), 1440, null, now)).toEqual(now);
    expect(reminderDueAt(new Date('2026-12-01T07:00:00Z'), 1440, null, now)).toBeNull();
  });

  it('moves out of quiet hours to five minutes before they begin', () => {
    // 12 h before 14:00Z is 03:00 Amsterdam, inside 22:00–07:00: due at 21:55 Amsterdam the evening before.
    expect(reminderDueAt(new Date('2026-12-02T14:00:00Z'), 720, quiet, now)).toEqual(new Date('2026-12-01T20:55:00Z'));
    // Appointment 07:30 Amsterdam, lead 4 h: 03:30 is quiet, so 21:55 the evening before, not 07:00.
    expect(reminderDueAt(new Date('2026-12-03T06:30:00Z'), 240, quiet, now)).toEqual(new Date('2026-12-02T20:55:00Z'));
  });

  it('goes at once when that moment has passed but it is not quiet yet, and when quiet hours end once they hold', () => {
    const late = new Date('2026-12-01T20:57:00Z'); // 21:57 Amsterdam
    expect(reminderDueAt(new Date('2026-12-02T06:00:00Z'), 480, quiet, late)).toEqual(late);
    const night = new Date('2026-12-01T22:00:00Z'); // 23:00 Amsterdam
    expect(reminderDueAt(new Date('2026-12-02T10:00:00Z'), 720, quiet, night)).toEqual(new Date('2026-12-02T06:00:00Z'));
  });
});

describe('reminder plan of a cadence', () => {
  const start = new Date('2026-12-10T10:00:00Z');

  it('has one reminder per lead time still ahead, longest first', () => {
    expect(reminderPlan(start, [7 * DAY, DAY, 120], null, now)).toEqual([
      { leadMinutes: 7 * DAY, dueAt: new Date('2026-12-03T10:00:00Z') },
      { leadMinutes: DAY, dueAt: new Date('2026-12-09T10:00:00Z') },
      { leadMinutes: 120, dueAt: new Date('2026-12-10T08:00:00Z') },
    ]);
    // Booked three days ahead: the week's reminder has passed and is left out.
    expect(reminderPlan(new Date('2026-12-04T08:00:00Z'), [7 * DAY, DAY, 120], null, now).map((p) => p.leadMinutes)).toEqual([DAY, 120]);
  });

  it('sends the shortest at once when every lead time has passed, and nothing once started', () => {
    expect(reminderPlan(new Date('2026-12-01T09:00:00Z'), [7 * DAY, DAY, 120], null, now)).toEqual([{ leadMinutes: 120, dueAt: now }]);
    expect(reminderPlan(new Date('2026-12-01T07:00:00Z'), [DAY], null, now)).toEqual([]);
  });

  it('keeps every reminder out of quiet hours and drops one that would go at the same moment as a longer one', () => {
    // 07:30 Amsterdam: 3 h and 4 h before are both quiet, both move to 21:55 the evening before: one reminder.
    expect(reminderPlan(new Date('2026-12-03T06:30:00Z'), [DAY, 240, 180], quiet, now)).toEqual([
      { leadMinutes: DAY, dueAt: new Date('2026-12-02T06:30:00Z') },
      { leadMinutes: 240, dueAt: new Date('2026-12-02T20:55:00Z') },
    ]);
  });
});
