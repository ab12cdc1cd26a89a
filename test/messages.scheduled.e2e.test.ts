import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { finalMessage } from './messaging-helpers';
import { TestClock } from './support/clock';
import { processDatabase, type ProcessDatabase } from './support/process-database';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const VARS = { date: '2026-12-01', time: '09:30' };

/**
 * Scheduled sends and cancel (docs/messaging.md, "Scheduled sends and cancel") on a real platform whose clock the
 * test moves: a scheduled message's job waits in database time, and the delivery sweep releases it once the clock
 * passes `sendAt`, as it does for quiet hours. The platform runs on a database that outlives a stop, so one
 * test can restart it with a message still scheduled.
 */
describe(`scheduled sends and cancel (${backendName})`, () => {
  const clock = new TestClock();
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-scheduled-'));
  let database: ProcessDatabase;
  let env: Record<string, string>;
  let t: TestPlatform;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    database = await processDatabase(dataDir);
    env = { ...database.env, DATA_DIR: dataDir, WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_TIMEOUT_MS: '5000' };
    t = await startTestPlatform(env, 'all', { clock });
    const hook = await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/messages'), events: ['message.cancelled', 'message.sent'] } });
    expect(hook.status).toBe(201);
  });
  afterAll(async () => {
    await t?.platform.stop();
    await receiver?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const at = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
  const send = (body: Record<string, unknown>) =>
    t.request('POST', '/v1/messages', { body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS, ...body } });
  const message = async (id: string) => (await t.request('GET', `/v1/messages/${id}`)).body;
  const messageCount = async () => Number((await t.platform.db!.query<{ n: string }>(`SELECT count(*) AS n FROM messaging."Message"`)).rows[0].n);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

  it('[MSG-012] refuses a sendAt that is malformed, less than a minute or more than 35 days ahead with 400 naming sendAt, and stores nothing', async () => {
    const before = await messageCount();
    for (const sendAt of ['tomorrow', '2026-12-24T09:00:00', at(30_000), at(35 * DAY + MINUTE), 42]) {
      const res = await send({ sendAt });
      expect({ sendAt, status: res.status, code: res.body.error?.code }).toEqual({ sendAt, status: 400, code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(res.body.error.details)).toContain('sendAt');
    }
    const batch = await t.request('POST', '/v1/messages/batch', {
      body: { messages: [{ patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS, sendAt: at(10_000) }] },
    });
    expect(batch.body.results[0].error).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringContaining('sendAt') });
    expect(await messageCount()).toBe(before);
  });

  it('[MSG-012] holds a scheduled message until sendAt, lists it by status, then sends it on the same path as any other', async () => {
    const sendAt = at(10 * MINUTE);
    const res = await send({ sendAt });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'scheduled', sendAt, dueAt: sendAt });
    const listed = await t.request('GET', '/v1/messages?status=scheduled&limit=100');
    expect(listed.body.data.map((m: { id: string }) => m.id)).toContain(res.body.id);
    expect(listed.body.data.every((m: { status: string }) => m.status === 'scheduled')).toBe(true);
    expect((await t.request('GET', '/v1/messages?status=later')).status).toBe(400);

    await settle();
    expect((await message(res.body.id)).status).toBe('scheduled');
    clock.advance(10 * MINUTE + 1000);
    const done = await finalMessage(t, res.body.id);
    expect(done.status).toBe('delivered');
    expect(done.statusHistory.map((s: { status: string }) => s.status)).toEqual(['scheduled', 'queued', 'sending', 'sent', 'delivered']);
    const sending = done.statusHistory.find((s: { status: string }) => s.status === 'sending');
    expect(new Date(sending.at).getTime()).toBeGreaterThanOrEqual(new Date(sendAt).getTime());
  });

  it('[MSG-012] checks preferences again at sendAt: a patient who opted out meanwhile gets nothing', async () => {
    const res = await send({ patientId: 'p-1002', sendAt: at(5 * MINUTE) });
    expect(res.status).toBe(201);
    expect((await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { channels: { sms: false } } })).status).toBe(200);
    try {
      clock.advance(5 * MINUTE + 1000);
      const done = await finalMessage(t, res.body.id);
      expect(done).toMatchObject({ status: 'failed', error: 'The patient has opted out of sms' });
      expect(done.statusHistory.map((s: { status: string }) => s.status)).toEqual(['scheduled', 'queued', 'failed']);
    } finally {
      await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { channels: { sms: true } } });
    }
  });

  it('[MSG-013] cancels a scheduled message: 200 cancelled, message.cancelled to webhooks, and it never reaches a provider', async () => {
    const res = await send({ sendAt: at(3 * MINUTE) });
    const cancelled = await t.request('POST', `/v1/messages/${res.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: res.body.id, status: 'cancelled' });
    // Again: 409, as from any status after scheduled and queued; nothing more is recorded (the history below).
    const again = await t.request('POST', `/v1/messages/${res.body.id}/cancel`);
    expect({ status: again.status, code: again.body.error?.code }).toEqual({ status: 409, code: 'CONFLICT' });
    const hook = await waitFor('message.cancelled', () =>
      receiver.received('/messages').find((h) => h.body.type === 'message.cancelled' && h.body.data.messageId === res.body.id),
    );
    expect(hook.body.data).toEqual({ messageId: res.body.id, patientId: 'p-1001', channel: 'sms', status: 'cancelled' });

    clock.advance(3 * MINUTE + 1000);
    await settle();
    const after = await message(res.body.id);
    expect(after.status).toBe('cancelled');
    expect(after.statusHistory.map((s: { status: string }) => s.status)).toEqual(['scheduled', 'cancelled']);
    const { rows } = await t.platform.db!.query<{ attempts: number; provider: string | null }>(
      `SELECT attempts, provider FROM messaging."Message" WHERE id = $1`,
      [res.body.id],
    );
    expect(rows[0]).toEqual({ attempts: 0, provider: null });
    expect(
      receiver
        .received('/messages')
        .filter((h) => h.body.data.messageId === res.body.id)
        .map((h) => h.body.type),
    ).toEqual(['message.cancelled']);
  });

  it('[MSG-013] cancels a queued message held by quiet hours; refuses a sent one with 409 and an unknown one with 404; GraphQL cancels too', async () => {
    const hhmm = (minutes: number) => at(minutes * MINUTE).slice(11, 16);
    await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { quietHours: { start: hhmm(-60), end: hhmm(120), timezone: 'UTC' } } });
    try {
      const held = await send({ patientId: 'p-1002' });
      expect(held.body.status).toBe('queued');
      const viaGraphQL = await t.graphql('mutation ($id: ID!) { cancelMessage(id: $id) { id status } }', { id: held.body.id });
      expect(viaGraphQL.body.data).toEqual({ cancelMessage: { id: held.body.id, status: 'cancelled' } });
    } finally {
      await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { quietHours: null } });
    }
    const now = await send({});
    const delivered = await finalMessage(t, now.body.id);
    const refused = await t.request('POST', `/v1/messages/${now.body.id}/cancel`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CONFLICT');
    expect((await message(now.body.id)).statusHistory).toEqual(delivered.statusHistory);
    expect((await t.request('POST', '/v1/messages/00000000-0000-4000-8000-000000000000/cancel')).status).toBe(404);
  });

  it('[MSG-012] keeps a scheduled message across a restart and sends it at its time', async () => {
    const sendAt = at(20 * MINUTE);
    const res = await send({ sendAt });
    expect(res.body.status).toBe('scheduled');
    await t.platform.stop();
    t = await startTestPlatform(env, 'all', { clock });
    expect((await message(res.body.id)).status).toBe('scheduled');
    clock.advance(20 * MINUTE + 1000);
    expect((await finalMessage(t, res.body.id)).status).toBe('delivered');
  });
});
