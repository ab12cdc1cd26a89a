import pg from 'pg';
import { FieldCipher } from '../common/crypto';
import { eventually } from './messaging-helpers';
import { crashTestServer } from './support/crash-server';

/**
 * The compiled all-in-one process, killed with SIGKILL after the clinical
 * record committed a patient's confirmation and before its event reached
 * messaging's events (held there by a trigger that sleeps), then restarted on
 * the same database: exactly one `appointment.confirmed` must come out.
 * PostgreSQL only: holding a statement from outside needs a second
 * connection, and embedded PGlite allows one process per DATA_DIR
 * (test/appointment-outbox.e2e.test.ts covers the same point on both backends).
 */
const postgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

postgres('appointment.confirmed across a SIGKILL between the clinical record and messaging (PostgreSQL)', () => {
  const { databaseUrl, encryptionKey, api, start, kill } = crashTestServer();

  async function sql<T extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<T[]> {
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      return (await client.query<T>(text, values as any[])).rows;
    } finally {
      await client.end();
    }
  }

  it('keeps exactly one appointment.confirmed and the reply', async () => {
    await start();
    const reminder = await api('POST', '/v1/appointments/appt-1001/remind');
    expect(reminder.status).toBe(201);
    await eventually(
      async () => ((await api('GET', `/v1/messages/${reminder.body.id}`)).body.status === 'delivered' ? true : undefined),
      'the reminder to be delivered',
    );

    // Whatever writes an appointment event into messaging now sleeps inside that statement.
    await sql(`
      CREATE FUNCTION public.hold_appointment_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(600); RETURN NEW; END $$;
      CREATE TRIGGER hold_appointment_event BEFORE INSERT ON messaging."Event" FOR EACH ROW WHEN (NEW.type LIKE 'appointment.%') EXECUTE FUNCTION public.hold_appointment_event();`);
    // Not awaited: on the way the answer may hang in the held statement until the kill.
    void api('POST', '/v1/simulator/replies', { messageId: reminder.body.id, body: 'C' }).catch(() => undefined);
    await eventually(async () => {
      const [appointment] = await sql<{ status: string }>(`SELECT status FROM ehr."Appointment" WHERE id = 'appt-1001'`);
      const held = await sql(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep' AND pid <> pg_backend_pid()`);
      return appointment.status === 'confirmed' && held.length > 0 ? true : undefined;
    }, 'the clinical record to commit while the event is held');
    await kill();
    await sql(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep' AND pid <> pg_backend_pid()`,
    );
    await sql(`DROP TRIGGER hold_appointment_event ON messaging."Event"; DROP FUNCTION public.hold_appointment_event();`);

    await start();
    const events = await eventually(async () => {
      // Event data is sealed at rest.
      const cipher = new FieldCipher(encryptionKey());
      const rows = (await sql<{ id: string; dataEnc: string }>(`SELECT id, "dataEnc" FROM messaging."Event" WHERE type = 'appointment.confirmed'`))
        .map((r) => ({ id: r.id, data: JSON.parse(cipher.decrypt(r.dataEnc)) }))
        .filter((r) => r.data.appointmentId === 'appt-1001');
      return rows.length > 0 ? rows : undefined;
    }, 'appointment.confirmed after the restart');
    // A second look after the worker had time to relay again: still one.
    await eventually(
      async () => ((await sql(`SELECT 1 FROM ehr."OutboxEvent" WHERE "relayedAt" IS NULL`)).length === 0 ? true : undefined),
      'the outbox to be relayed',
    );
    expect((await sql(`SELECT id FROM messaging."Event" WHERE type = 'appointment.confirmed'`)).map((r) => r.id)).toEqual([events[0].id]);
    expect(events[0].data).toMatchObject({ appointmentId: 'appt-1001', patientId: 'p-1001', status: 'confirmed' });
    const replies = await sql(`SELECT keyword, action FROM messaging."InboundMessage" WHERE "messageId" = $1`, [reminder.body.id]);
    expect(replies).toEqual([{ keyword: 'C', action: 'confirmed' }]);
    await kill();
  }, 300_000);
});
