import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { countRows, finalMessage } from './messaging-helpers';

const VARS = { date: '2026-12-01', time: '09:30' };
const SEND = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { id status } }`;
const setConsent = (t: TestPlatform, patientId: string, granted: boolean) =>
  t.graphql(`mutation($p: ID!) { ${granted ? 'grantConsent' : 'revokeConsent'}(patientId: $p, purpose: MESSAGING) { granted } }`, { p: patientId });

/** Messaging honours the clinical record's MESSAGING consent, not only its own channel preferences. */
describe(`messaging consent from the clinical record (${backendName})`, () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(() => t?.stop());

  const expectWithdrawn = (error: { code: string; message: string }) => {
    expect(error.code).toBe('PATIENT_OPTED_OUT');
    expect(error.message).toMatch(/withdrawn.*consent to messaging/i);
  };

  it('[MSG-014] refuses single sends, batch items, reminders and GraphQL sends after revokeConsent(MESSAGING), storing nothing', async () => {
    // No consent record: messaging is allowed (opt-out).
    expect(
      (await t.request('POST', '/v1/messages', { body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS } })).status,
    ).toBe(201);

    const revoked = await setConsent(t, 'p-1001', false);
    expect(revoked.body.data.revokeConsent.granted).toBe(false);
    const messages = await countRows(t, 'Message');
    const forP1001 = async () =>
      Number((await t.platform.db!.query<{ n: string }>(`SELECT count(*)::text AS n FROM messaging."Message" WHERE "patientId" = 'p-1001'`)).rows[0].n);
    const p1001Before = await forP1001();

    const single = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS },
    });
    expect(single.status).toBe(422);
    expectWithdrawn(single.body.error);
    // Email too: consent covers every channel.
    const email = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'email', variables: VARS },
    });
    expect(email.status).toBe(422);

    const batch = await t.request('POST', '/v1/messages/batch', {
      body: {
        messages: [
          { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS },
          { patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: VARS },
        ],
      },
    });
    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({ accepted: 1, rejected: 1 });
    expectWithdrawn(batch.body.results[0].error);
    expect(batch.body.results[1].id).toEqual(expect.any(String));

    const remind = await t.request('POST', '/v1/appointments/appt-1001/remind');
    expect(remind.status).toBe(422);
    expectWithdrawn(remind.body.error);

    const gql = await t.graphql(SEND, { input: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS } });
    expect(gql.body.data).toBeNull();
    expect(gql.body.errors[0].extensions.code).toBe('PATIENT_OPTED_OUT');
    expect(gql.body.errors[0].message).toMatch(/withdrawn.*consent to messaging/i);

    // Only the batch's valid item (for p-1003) was stored.
    expect(await countRows(t, 'Message')).toBe(messages + 1);
    expect(await forP1001()).toBe(p1001Before);

    // Granting it again lets messages through.
    await setConsent(t, 'p-1001', true);
    expect((await t.request('POST', '/v1/appointments/appt-1001/remind')).status).toBe(201);
  });

  it('[MSG-014] fails a message queued before the consent was withdrawn, at delivery time', async () => {
    const from = new Date(Date.now() - 60 * 60_000).toISOString().slice(11, 16);
    const to = new Date(Date.now() + 3 * 60 * 60_000).toISOString().slice(11, 16);
    await t.request('PATCH', '/v1/patients/p-1003/preferences', { body: { quietHours: { start: from, end: to, timezone: 'UTC' } } });
    const held = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: VARS },
    });
    expect(held.status).toBe(201);
    await setConsent(t, 'p-1003', false);
    await t.request('PATCH', '/v1/patients/p-1003/preferences', { body: { quietHours: null } });
    // Make the held job due now, as if quiet hours had ended.
    await t.platform.db!.query(`UPDATE pgboss.job SET start_after = now() WHERE name = 'messaging-deliver' AND data->>'messageId' = $1`, [held.body.id]);
    const done = await finalMessage(t, held.body.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/withdrawn.*consent to messaging/i);
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'failed']);
  });
});
