import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { eventually } from './messaging-helpers';

/**
 * Inbound-SMS deduplication by the provider's message id must stay inside a
 * tenant: another tenant reusing a MessageSid neither reads the first tenant's
 * reply nor swallows its own.
 */
describe(`inbound SMS deduplication per tenant (${backendName})`, () => {
  let t: TestPlatform;
  let acme: string;
  let acmeReminder: string;
  let demoMessage: string;
  const inbound = (token: string, from: string, body: string, sid: string) =>
    t.request('POST', '/v1/inbound/sms', { token, body: { From: from, Body: body, MessageSid: sid } });

  beforeAll(async () => {
    t = await startTestPlatform();
    acme = await t.token({ tenants: ['acme'] });
    const remind = await t.request('POST', '/v1/appointments/appt-2001/remind', { token: acme });
    expect(remind.status).toBe(201);
    acmeReminder = remind.body.id;
    const sent = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } },
    });
    expect(sent.status).toBe(201);
    demoMessage = sent.body.id;
  });
  afterAll(() => t?.stop());

  it("does not hand acme's reply to demo when demo reuses acme's MessageSid", async () => {
    const acmeReply = await inbound(acme, '+31612345681', 'Running late', 'SM-shared-1');
    expect(acmeReply.status).toBe(201);
    expect(acmeReply.body).toMatchObject({ messageId: acmeReminder, patientId: 'p-2001' });

    const demoReply = await inbound(await t.token(), '+31612345671', 'Thanks', 'SM-shared-1');
    expect(demoReply.status).toBe(201);
    expect(demoReply.body).toMatchObject({ messageId: demoMessage, patientId: 'p-1001' });
    expect(demoReply.body.id).not.toBe(acmeReply.body.id);
    // Within a tenant the MessageSid still deduplicates.
    expect((await inbound(acme, '+31612345681', 'Running late', 'SM-shared-1')).body.id).toBe(acmeReply.body.id);
  });

  it("does not swallow acme's C when demo used the MessageSid first, and acme's appointment is confirmed", async () => {
    const demoReply = await inbound(await t.token(), '+31612345671', 'Hello', 'SM-shared-2');
    expect(demoReply.status).toBe(201);

    const confirm = await inbound(acme, '+31612345681', 'C', 'SM-shared-2');
    expect(confirm.status).toBe(201);
    expect(confirm.body).toMatchObject({ messageId: acmeReminder, patientId: 'p-2001', keyword: 'C', action: 'confirmed' });
    await eventually(async () => {
      const list = await t.request('GET', '/v1/appointments', { token: acme });
      return list.body.data.find((a: any) => a.id === 'appt-2001')?.status === 'confirmed' ? true : undefined;
    }, 'appt-2001 to be confirmed');
    const { rows } = await t.platform.db!.query<{ tenantId: string }>(
      `SELECT "tenantId" FROM messaging."InboundMessage" WHERE "providerMessageId" = 'SM-shared-2' ORDER BY "tenantId"`,
    );
    expect(rows.map((r) => r.tenantId)).toEqual(['acme', 'demo']);
  });
});
