import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { TestClock } from './support/clock';
import { finalMessage } from './messaging-helpers';
import { FieldCipher } from '../common/crypto';

const VARS = { date: '2026-12-01', time: '09:30', location: 'Room 2' };
const MINUTE = 60_000;
/** Far longer than the test may wait: only the clock can make a lease run out. */
const LEASE_MS = 10 * MINUTE;

/**
 * The delivery pipeline on the runtime's clock (common/clock.ts): leases and quiet hours end when the clock says
 * so, which the test moves on instead of waiting, while pg-boss keeps starting jobs in database time.
 */
describe(`delivery on the injected clock (${backendName})`, () => {
  const clock = new TestClock();
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform({ DELIVERY_LEASE_MS: String(LEASE_MS) }, 'all', { clock });
  });
  afterAll(() => t?.stop());

  /** HH:MM (UTC) of the clock `minutes` from now. */
  const hhmm = (minutes: number) => new Date(clock.now().getTime() + minutes * MINUTE).toISOString().slice(11, 16);
  const status = async (id: string) => (await t.request('GET', `/v1/messages/${id}`)).body.status;

  /** A message held by quiet hours that end two hours from now on the clock: its job waits two hours of database time. */
  async function held(patientId: string, channel: 'sms' | 'email'): Promise<{ id: string; dueAt: string }> {
    await t.request('PATCH', `/v1/patients/${patientId}/preferences`, { body: { quietHours: { start: hhmm(-60), end: hhmm(120), timezone: 'UTC' } } });
    const res = await t.request('POST', '/v1/messages', { body: { patientId, templateId: 'appointment-reminder', channel, variables: VARS } });
    expect(res.status).toBe(201);
    expect(new Date(res.body.dueAt).getTime()).toBeGreaterThan(clock.now().getTime() + 100 * MINUTE);
    return res.body;
  }

  /** The message ends in exactly one final status, recorded once and announced by one webhook event, and stays there. */
  async function expectOneFinalStatus(id: string): Promise<any> {
    const done = await finalMessage(t, id);
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'sent', 'delivered']);
    // Event data is encrypted at rest.
    const cipher = new FieldCipher(t.platform.runtime.secrets.encryptionKey);
    const { rows } = await t.platform.db!.query<{ type: string; dataEnc: string }>(
      `SELECT type, "dataEnc" FROM messaging."Event" WHERE type IN ('message.delivered', 'message.failed')`,
    );
    expect(rows.filter((row) => JSON.parse(cipher.decrypt(row.dataEnc)).messageId === id).map((row) => row.type)).toEqual(['message.delivered']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await t.request('GET', `/v1/messages/${id}`)).body.statusHistory).toEqual(done.statusHistory);
    return done;
  }

  it('takes over the send of a worker that died once the clock passes its lease', async () => {
    // A worker claimed the message (sending, a lease of ten minutes of the clock, one attempt) and died.
    const message = await held('p-1001', 'sms');
    const leaseUntil = new Date(clock.now().getTime() + LEASE_MS);
    await t.platform.db!.query(`UPDATE messaging."Message" SET status = 'sending', "leaseUntil" = $2::timestamp, attempts = 1 WHERE id = $1`, [
      message.id,
      leaseUntil.toISOString(),
    ]);
    await t.platform.db!.query(
      `INSERT INTO messaging."MessageStatusChange" ("tenantId", "messageId", status, at) VALUES ('demo', $1, 'sending', $2::timestamp)`,
      [message.id, clock.now().toISOString()],
    );
    // The lease still holds: nobody else sends the message.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await status(message.id)).toBe('sending');

    clock.advance(LEASE_MS + 1000);
    await expectOneFinalStatus(message.id);
    const { rows } = await t.platform.db!.query<{ attempts: number }>(`SELECT attempts FROM messaging."Message" WHERE id = $1`, [message.id]);
    expect(rows[0].attempts).toBe(2);
  });

  it('[MSG-008] sends a message held by quiet hours once the clock passes their end', async () => {
    const message = await held('p-1003', 'email');
    // Just before the release on the clock it is still held.
    clock.advance(new Date(message.dueAt).getTime() - clock.now().getTime() - MINUTE);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await status(message.id)).toBe('queued');

    clock.advance(2 * MINUTE);
    const done = await expectOneFinalStatus(message.id);
    const sending = done.statusHistory.find((s: any) => s.status === 'sending');
    expect(new Date(sending.at).getTime()).toBeGreaterThanOrEqual(new Date(message.dueAt).getTime());
  });
});
