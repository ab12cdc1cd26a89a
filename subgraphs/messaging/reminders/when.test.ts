import { renderTemplate } from '../templates/render';
import { REMINDER_BODY } from '../seed';
import { howFarAhead } from './when';

const now = new Date('2026-12-01T08:00:00Z');
const ahead = (minutes: number) => new Date(now.getTime() + minutes * 60_000);

describe('how far ahead a reminder says the appointment is', () => {
  it('in minutes under an hour, in hours under twelve, else by calendar days', () => {
    expect(howFarAhead(ahead(45), now, 'UTC', 'en')).toBe('in 45 minutes');
    expect(howFarAhead(ahead(120), now, 'UTC', 'en')).toBe('in 2 hours');
    expect(howFarAhead(ahead(14 * 60), now, 'UTC', 'en')).toBe('today');
    expect(howFarAhead(ahead(24 * 60), now, 'UTC', 'en')).toBe('tomorrow');
    expect(howFarAhead(ahead(7 * 24 * 60), now, 'UTC', 'en')).toBe('in 7 days');
  });

  it("counts days on the appointment zone's calendar", () => {
    // 20 h ahead is 04:00 the next day in UTC, but still today in New York (03:00 → 23:00).
    expect(howFarAhead(ahead(20 * 60), now, 'UTC', 'en')).toBe('tomorrow');
    expect(howFarAhead(ahead(20 * 60), now, 'America/New_York', 'en')).toBe('today');
  });

  it("speaks the patient's language, English when the runtime does not know it", () => {
    expect(howFarAhead(ahead(24 * 60), now, 'UTC', 'nl')).toBe('morgen');
    expect(howFarAhead(ahead(120), now, 'UTC', 'de')).toBe('in 2 Stunden');
    expect(howFarAhead(ahead(24 * 60), now, 'UTC', 'xx')).toBe('tomorrow');
  });

  it('fills the seeded reminder, which reads as before without it', () => {
    const values = { date: '2026-12-08', time: '08:00', location: 'Room 2' };
    expect(renderTemplate(REMINDER_BODY, { ...values, when: 'in 7 days' })).toBe(
      'Reminder: your appointment is in 7 days, on 2026-12-08 at 08:00 at Room 2. Reply C to confirm or X to cancel.',
    );
    expect(renderTemplate(REMINDER_BODY, values)).toBe('Reminder: your appointment is on 2026-12-08 at 08:00 at Room 2. Reply C to confirm or X to cancel.');
  });
});
