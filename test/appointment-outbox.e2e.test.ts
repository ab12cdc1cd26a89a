import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FieldCipher } from '../common/crypto';
import { openDatabase } from '../common/db/database';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { eventually, finalMessage } from './messaging-helpers';
import { processDatabase, type ProcessDatabase } from './support/process-database';

/**
 * A patient's C confirms an appointment in the clinical record and must
 * produce exactly one `appointment.confirmed`, whatever fails on the way.
 * Fault injection: a trigger makes one write fail at exactly the point under
 * test, the platform is stopped, the fault removed, and the platform started
 * again on the same database (file-backed PGlite in DATA_DIR, or one
 * PostgreSQL database), as after a crash at that point.
 */
describe(`appointment events across a failure between the clinical record and messaging (${backendName})`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-outbox-'));
  let database: ProcessDatabase;
  let env: Record<string, string>;
  let t: TestPlatform | undefined;

  beforeAll(async () => {
    // A copy of the run's seeded database that outlives a stop: PGlite files in DATA_DIR, or a PostgreSQL database.
    database = await processDatabase(dataDir);
    env = { ...database.env, DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await t?.platform.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** SQL on the platform's database while it is stopped (PGlite allows one process in its directory). */
  async function offline(sql: string): Promise<void> {
    const db = await openDatabase({ databaseUrl: env.DATABASE_URL || undefined, dataDir });
    try {
      await db.exec(sql);
    } finally {
      await db.close();
    }
  }

  const fault = (name: string, table: string, when: string) => `
    CREATE OR REPLACE FUNCTION public.${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault ${name}'; END $$;
    CREATE TRIGGER ${name} BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION public.${name}();`;
  const clear = (name: string, table: string) => `DROP TRIGGER ${name} ON ${table}; DROP FUNCTION public.${name}();`;

  async function restart(sqlWhileStopped: string): Promise<TestPlatform> {
    await t!.platform.stop();
    await offline(sqlWhileStopped);
    t = await startTestPlatform(env);
    return t;
  }

  // Event data is sealed at rest: decrypt it to find the appointment's events.
  const appointmentEvents = async (platform: TestPlatform, appointmentId: string) => {
    const cipher = new FieldCipher(platform.platform.runtime.secrets.encryptionKey);
    const rows = (
      await platform.platform.db!.query<{ id: string; type: string; dataEnc: string }>(
        `SELECT id, type, "dataEnc" FROM messaging."Event" WHERE type LIKE 'appointment.%' ORDER BY "createdAt"`,
      )
    ).rows;
    return rows.map((r) => ({ id: r.id, type: r.type, data: JSON.parse(cipher.decrypt(r.dataEnc)) })).filter((e) => e.data.appointmentId === appointmentId);
  };
  const appointmentStatus = async (platform: TestPlatform, id: string) =>
    (
      await platform.platform.db!.query<{ status: string; start: string }>(
        `SELECT status, to_char(start, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS start FROM ehr."Appointment" WHERE id = $1`,
        [id],
      )
    ).rows[0];

  // Run while the platform is down: the reply's job (due 10 s after the reply, in database time) is made due now.
  // The wait is not what is under test, and no test clock moves the database's.
  const replyJobDueNow = `UPDATE pgboss.job SET start_after = now() WHERE name = 'messaging-appointment-reply' AND state < 'active';`;

  async function remind(platform: TestPlatform, appointmentId: string): Promise<string> {
    const reminder = await platform.request('POST', `/v1/appointments/${appointmentId}/remind`);
    expect(reminder.status).toBe(201);
    expect((await finalMessage(platform, reminder.body.id)).status).toBe('delivered');
    return reminder.body.id;
  }

  it('keeps appointment.confirmed when the event could not be written after the clinical record committed', async () => {
    t = await startTestPlatform(env);
    const messageId = await remind(t, 'appt-1001');
    // The fault: no appointment event can enter messaging's event table.
    await t.platform.db!.exec(fault('fault_appointment_event', 'messaging."Event"', `NEW.type LIKE 'appointment.%'`));
    await t.request('POST', '/v1/simulator/replies', { body: { messageId, body: 'C' } });
    const committed = await eventually(async () => {
      const appointment = await appointmentStatus(t!, 'appt-1001');
      return appointment.status === 'confirmed' ? appointment : undefined;
    }, 'the clinical record to commit the confirmation');

    const after = await restart(`${clear('fault_appointment_event', 'messaging."Event"')} ${replyJobDueNow}`);
    const events = await eventually(async () => {
      const found = await appointmentEvents(after, 'appt-1001');
      return found.length > 0 ? found : undefined;
    }, 'appointment.confirmed after the restart');
    expect(events).toEqual([
      {
        id: expect.any(String),
        type: 'appointment.confirmed',
        data: { appointmentId: 'appt-1001', patientId: 'p-1001', status: 'confirmed', start: committed.start },
      },
    ]);
    const replies = (
      await after.platform.db!.query<{ keyword: string; action: string }>(`SELECT keyword, action FROM messaging."InboundMessage" WHERE "messageId" = $1`, [
        messageId,
      ])
    ).rows;
    expect(replies).toEqual([{ keyword: 'C', action: 'confirmed' }]);
  }, 120_000);

  it('confirms the appointment of a recorded reply after the clinical record failed to take it', async () => {
    // A second appointment of p-1001, booked, for this test.
    await t!.platform.db!.query(
      `INSERT INTO ehr."Appointment" ("tenantId", id, "patientId", start, "end", status, "updatedAt") VALUES ('demo', 'appt-crash-2', 'p-1001', now() + interval '3 days', now() + interval '3 days 30 minutes', 'booked', now())`,
    );
    const messageId = await remind(t!, 'appt-crash-2');
    // The fault: the clinical record cannot change the appointment.
    await t!.platform.db!.exec(fault('fault_appointment_update', 'ehr."Appointment"', `NEW.id = 'appt-crash-2'`));
    await t!.request('POST', '/v1/simulator/replies', { body: { messageId, body: 'X' } });
    expect((await appointmentStatus(t!, 'appt-crash-2')).status).toBe('booked');

    const after = await restart(`${clear('fault_appointment_update', 'ehr."Appointment"')} ${replyJobDueNow}`);
    await eventually(
      async () => ((await appointmentStatus(after, 'appt-crash-2')).status === 'cancelled' ? true : undefined),
      'the recorded reply to cancel the appointment',
      60_000,
    );
    const events = await eventually(async () => {
      const found = await appointmentEvents(after, 'appt-crash-2');
      return found.length > 0 ? found : undefined;
    }, 'appointment.cancelled');
    expect(events.map((e) => e.type)).toEqual(['appointment.cancelled']);
    const replies = (
      await after.platform.db!.query<{ keyword: string; action: string }>(`SELECT keyword, action FROM messaging."InboundMessage" WHERE "messageId" = $1`, [
        messageId,
      ])
    ).rows;
    expect(replies).toEqual([{ keyword: 'X', action: 'cancelled' }]);
  }, 120_000);
});
