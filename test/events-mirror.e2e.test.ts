import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { startReceiver, verifySignature, waitFor, type Receiver } from './webhook-receiver';
import { connectAs, Subscription, untilLive, type Connection } from './subscriptions.helpers';
import { finalMessage } from './messaging-helpers';
import { catalogueErrors } from './webhook-catalogue';

const SECRET = 'whsec-mirror-0123456789abcdef';

/**
 * One real send, seen by both channels: the webhook receiver and a GraphQL
 * `events` subscriber must get the same event ids, types, timestamps and data
 * (docs/api.md §6, §9), and `messageStatusChanged` must stream the lifecycle in order.
 */
describe(`events mirror webhooks for a real send (${backendName})`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  let connection: Connection;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestPlatform({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_CA_FILE: receiver.caFile });
  });
  afterAll(async () => {
    await connection?.dispose();
    await t?.stop();
    await receiver?.close();
  });

  it('[WHK-012] delivers the same events to the webhook and to the subscription', async () => {
    const created = await t.request('POST', '/v1/webhooks', {
      body: { url: receiver.url('/mirror'), events: ['message.sent', 'message.delivered'], secret: SECRET },
    });
    expect(created.status).toBe(201);

    connection = await connectAs(t, await t.token());
    const events = new Subscription<{ events: { id: string; type: string; timestamp: string; data: any } }>(
      connection.client,
      'subscription { events(types: [MESSAGE_SENT, MESSAGE_DELIVERED]) { id type timestamp data } }',
    );
    const statuses = new Subscription<{ messageStatusChanged: { status: string; patient: { name: { family: string } } } }>(
      connection.client,
      'subscription { messageStatusChanged(patientId: "p-1001") { status patient { name { family } } } }',
    );
    await untilLive(t.platform.runtime.events, connection, 'demo');

    const sent = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-11-23', time: '09:30' } },
    });
    expect(sent.status).toBe(201);
    expect((await finalMessage(t, sent.body.id)).status).toBe('delivered');

    const hooks = await waitFor('both webhook deliveries', () => {
      const mine = receiver.received('/mirror').filter((h) => h.body.data.messageId === sent.body.id);
      return mine.length >= 2 ? mine : undefined;
    });
    for (const hook of hooks) expect(verifySignature(SECRET, hook.raw, hook.headers['x-webhook-signature'])).toBe(true);
    await events.until(() => events.results.filter((r) => r.data?.events.data.messageId === sent.body.id).length >= 2);
    await statuses.until(() => statuses.results.some((r) => r.data?.messageStatusChanged.status === 'delivered'));

    const viaWebhook = hooks.map((h) => h.body).sort((a, b) => a.id.localeCompare(b.id));
    const viaSubscription = events.results
      .map((r) => r.data!.events)
      .filter((e) => e.data.messageId === sent.body.id)
      .map((e) => ({ ...e, type: e.type.toLowerCase().replace('_', '.') }))
      .sort((a, b) => a.id.localeCompare(b.id));
    expect(viaSubscription).toEqual(viaWebhook);
    expect(viaWebhook.map((e) => e.type).sort()).toEqual(['message.delivered', 'message.sent']);
    // Each real event is what the OpenAPI document's event catalogue says of its type.
    expect(viaWebhook.flatMap(catalogueErrors)).toEqual([]);

    expect(statuses.results.map((r) => r.data!.messageStatusChanged.status)).toEqual(['queued', 'sending', 'sent', 'delivered']);
    expect(statuses.results[0].data!.messageStatusChanged.patient.name.family).toBe('de Vries');
  });

  it("delivers the same appointment.confirmed (from the clinical record's outbox) to the webhook and to the subscription", async () => {
    const created = await t.request('POST', '/v1/webhooks', {
      body: { url: receiver.url('/appointments'), events: ['appointment.confirmed', 'message.response'], secret: SECRET },
    });
    expect(created.status).toBe(201);
    const events = new Subscription<{ events: { id: string; type: string; timestamp: string; data: any } }>(
      connection.client,
      'subscription { events(types: [APPOINTMENT_CONFIRMED, MESSAGE_RESPONSE]) { id type timestamp data } }',
    );
    await untilLive(t.platform.runtime.events, connection, 'demo');

    const reminder = await t.request('POST', '/v1/appointments/appt-1001/remind');
    expect(reminder.status).toBe(201);
    expect((await finalMessage(t, reminder.body.id)).status).toBe('delivered');
    const reply = await t.request('POST', '/v1/simulator/replies', { body: { messageId: reminder.body.id, body: 'C' } });
    expect(reply.body.action).toBe('confirmed');

    const hooks = await waitFor('the appointment and response webhooks', () => {
      const mine = receiver.received('/appointments');
      return mine.length >= 2 ? mine : undefined;
    });
    await events.until(() => events.results.length >= 2);
    const viaWebhook = hooks.map((h) => h.body).sort((a, b) => a.id.localeCompare(b.id));
    const viaSubscription = events.results
      .map((r) => r.data!.events)
      .map((e) => ({ ...e, type: e.type.toLowerCase().replace('_', '.') }))
      .sort((a, b) => a.id.localeCompare(b.id));
    expect(viaSubscription).toEqual(viaWebhook);
    expect(viaWebhook.flatMap(catalogueErrors)).toEqual([]);
    const confirmed = viaWebhook.find((e) => e.type === 'appointment.confirmed');
    expect(confirmed.data).toEqual({ appointmentId: 'appt-1001', patientId: 'p-1001', status: 'confirmed', start: expect.stringMatching(/T09:30:00.000Z$/) });
    expect(hooks.find((h) => h.body.type === 'appointment.confirmed')!.headers['x-webhook-id']).toBe(confirmed.id);
  });
});
