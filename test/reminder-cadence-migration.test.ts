import { testBackends } from '../common/db/test-backends';
import { databaseBefore } from './support/migrations-before';

/** The migration to one reminder row per lead time, run on a database holding reminders of before it. */
describe.each(testBackends())('reminder cadence migration on $name', (backend) => {
  const before = databaseBefore(backend, 'messaging', '_reminder_cadences');

  it("gives each existing reminder its tenant's lead time (else a day), then takes a row per lead time", async () => {
    const db = before.db();
    await db.exec(`
      INSERT INTO messaging."Organization" (id, name, settings, "updatedAt") VALUES ('a', 'A', '{"reminderLeadMinutes":90}', now()), ('b', 'B', '{}', now());
      INSERT INTO messaging."AppointmentReminder" ("tenantId", "appointmentId", "patientId", start, "dueAt", status, "updatedAt") VALUES
        ('a', 'appt-1', 'p-1', '2026-12-10T10:00:00Z', '2026-12-10T08:30:00Z', 'scheduled', now()),
        ('b', 'appt-2', 'p-2', '2026-12-10T10:00:00Z', '2026-12-09T10:00:00Z', 'sent', now()),
        ('c', 'appt-3', 'p-3', '2026-12-10T10:00:00Z', '2026-12-09T10:00:00Z', 'scheduled', now());`);
    await before.migrateRest();
    const { rows } = await db.query<{ tenantId: string; leadMinutes: number; status: string }>(
      `SELECT "tenantId", "leadMinutes", status FROM messaging."AppointmentReminder" ORDER BY "tenantId"`,
    );
    expect(rows).toEqual([
      { tenantId: 'a', leadMinutes: 90, status: 'scheduled' },
      { tenantId: 'b', leadMinutes: 1440, status: 'sent' },
      { tenantId: 'c', leadMinutes: 1440, status: 'scheduled' },
    ]);
    await db.exec(`INSERT INTO messaging."AppointmentReminder" ("tenantId", "appointmentId", "leadMinutes", "patientId", start, "dueAt", status, "updatedAt")
      VALUES ('a', 'appt-1', 120, 'p-1', '2026-12-10T10:00:00Z', '2026-12-10T08:00:00Z', 'scheduled', now())`);
    await expect(
      db.exec(`INSERT INTO messaging."AppointmentReminder" ("tenantId", "appointmentId", "leadMinutes", "patientId", start, "dueAt", status, "updatedAt")
        VALUES ('a', 'appt-1', 120, 'p-1', '2026-12-10T10:00:00Z', '2026-12-10T08:00:00Z', 'scheduled', now())`),
    ).rejects.toThrow(/duplicate key|unique/i);
  });
});
