import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { eventually, finalMessage } from './messaging-helpers';

const VARS = { date: '2026-12-01', time: '09:30' };
const item = (patientId: string, channel: 'sms' | 'email') => ({ patientId, templateId: 'appointment-reminder', channel, variables: VARS });
const history = (message: { statusHistory: { status: string }[] }) => message.statusHistory.map((s) => s.status);

/** The delivery worker takes a fetched batch of jobs set-based: every outcome of the per-message rules in one claim. */
describe(`delivery of a mixed batch (${backendName})`, () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(() => t?.stop());

  it('opts out, refuses consent, holds for quiet hours, fails a dead number and delivers, each message once', async () => {
    const since = new Date();
    // Quiet hours for all three patients now: the batch waits, each job due when they end.
    const quiet = {
      start: new Date(Date.now() - 60 * 60_000).toISOString().slice(11, 16),
      end: new Date(Date.now() + 3 * 60 * 60_000).toISOString().slice(11, 16),
      timezone: 'UTC',
    };
    for (const patient of ['p-1001', 'p-1002', 'p-1003']) {
      expect((await t.request('PATCH', `/v1/patients/${patient}/preferences`, { body: { quietHours: quiet } })).status).toBe(200);
    }
    const batch = await t.request('POST', '/v1/messages/batch', {
      body: {
        messages: [
          item('p-1001', 'sms'), // opted out of SMS meanwhile
          item('p-1001', 'email'), // still in quiet hours
          item('p-1002', 'sms'), // +31612340000: the simulator's carrier rejects it
          item('p-1002', 'email'), // delivered
          item('p-1003', 'email'), // consent withdrawn meanwhile
        ],
      },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.accepted).toBe(5);
    const [optedOut, held, deadNumber, delivered, refused] = batch.body.results.map((r: { id: string }) => r.id);

    expect((await t.request('PATCH', '/v1/patients/p-1001/preferences', { body: { channels: { sms: false } } })).status).toBe(200);
    expect((await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { quietHours: null } })).status).toBe(200);
    expect((await t.request('PATCH', '/v1/patients/p-1003/preferences', { body: { quietHours: null } })).status).toBe(200);
    const revoked = await t.graphql(`mutation { revokeConsent(patientId: "p-1003", purpose: MESSAGING) { granted } }`);
    expect(revoked.body.data.revokeConsent.granted).toBe(false);
    // All five jobs due at once, as if quiet hours had ended: the worker fetches them together.
    const ids = [optedOut, held, deadNumber, delivered, refused];
    const due = await t.platform.db!.query(
      `UPDATE pgboss.job SET start_after = now() WHERE name = 'messaging-deliver' AND data->>'messageId' = ANY($1) RETURNING id`,
      [ids],
    );
    expect(due.rows).toHaveLength(5);

    const optedOutDone = await finalMessage(t, optedOut);
    expect(optedOutDone).toMatchObject({ status: 'failed', error: 'The patient has opted out of sms' });
    expect(history(optedOutDone)).toEqual(['queued', 'failed']);

    const refusedDone = await finalMessage(t, refused);
    expect(refusedDone.status).toBe('failed');
    expect(refusedDone.error).toMatch(/withdrawn.*consent to messaging/i);
    expect(history(refusedDone)).toEqual(['queued', 'failed']);

    const deadDone = await finalMessage(t, deadNumber);
    expect(deadDone.status).toBe('failed');
    expect(deadDone.error).toMatch(/Simulated carrier rejection/);
    expect(history(deadDone)).toEqual(['queued', 'sending', 'sent', 'failed']);

    const deliveredDone = await finalMessage(t, delivered);
    expect(deliveredDone.status).toBe('delivered');
    expect(history(deliveredDone)).toEqual(['queued', 'sending', 'sent', 'delivered']);

    // Held again: still queued, due when p-1001's quiet hours end, with a new job for then.
    const heldJob = await eventually(async () => {
      const { rows } = await t.platform.db!.query<{ start_after: Date }>(
        `SELECT start_after FROM pgboss.job WHERE name = 'messaging-deliver' AND data->>'messageId' = $1 AND state = 'created'`,
        [held],
      );
      return rows[0];
    }, 'the held message to get its next job');
    expect(new Date(heldJob.start_after).getTime()).toBeGreaterThan(Date.now() + 60 * 60_000);
    const heldNow = (await t.request('GET', `/v1/messages/${held}`)).body;
    expect(heldNow.status).toBe('queued');
    expect(history(heldNow)).toEqual(['queued']);
    // The job's start is the due time as a delay from the database's now() (common/clock.ts): equal up to the batch's own time.
    expect(Math.abs(new Date(heldNow.dueAt).getTime() - new Date(heldJob.start_after).getTime())).toBeLessThan(5000);

    // One webhook event per status reached: sent ×2, delivered ×1, failed ×3.
    const { rows: events } = await t.platform.db!.query<{ type: string; n: string }>(
      `SELECT type, count(*)::text AS n FROM messaging."Event" WHERE "createdAt" >= $1 AND type LIKE 'message.%' GROUP BY type ORDER BY type`,
      [since.toISOString()],
    );
    expect(Object.fromEntries(events.map((e) => [e.type, Number(e.n)]))).toEqual({ 'message.delivered': 1, 'message.failed': 3, 'message.sent': 2 });
  });
});
