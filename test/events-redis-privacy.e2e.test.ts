import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { eventually, finalMessage } from './messaging-helpers';
import { connectAs, Subscription, untilLive, type Connection } from './subscriptions.helpers';

const REDIS_URL = process.env.TEST_REDIS_URL;

/**
 * The live event bus crosses Redis, which is outside the data-at-rest encryption: whoever can SUBSCRIBE
 * there (another tenant's ops, a leaked Redis password) must learn nothing clinical or personal from it.
 */
(REDIS_URL ? describe : describe.skip)(`live events on Redis carry nothing in clear (${backendName} + Redis)`, () => {
  let t: TestPlatform;
  let raw: Redis;
  let connection: Connection | undefined;
  const onChannel: string[] = [];

  beforeAll(async () => {
    t = await startTestPlatform();
    // A plain Redis client on the deployment's channel: what an eavesdropper with Redis access reads.
    raw = new Redis(REDIS_URL!);
    raw.on('message', (_channel: string, message: string) => void onChannel.push(message));
    await raw.subscribe(t.env.REDIS_EVENTS_CHANNEL);
  });
  afterAll(async () => {
    await connection?.dispose();
    raw?.disconnect();
    await t?.stop();
  });

  it("never publishes a patient's reply text, contact details or name, while subscribers still get the reply", async () => {
    const patient = (await t.request('GET', '/api/ehr/patients/p-1001', { headers: { 'x-tenant-id': 'demo' } })).body;
    const personal = [patient.name.family, ...patient.name.given, patient.contact.phone, patient.contact.email];
    expect(personal.every((value) => typeof value === 'string' && value.length > 1)).toBe(true);

    connection = await connectAs(t, await t.token());
    const responses = new Subscription(connection.client, 'subscription { events(types: [MESSAGE_RESPONSE]) { id type data } }');
    await untilLive(t.platform.runtime.events, connection, 'demo');

    const sent = await t.request('POST', '/v1/appointments/appt-1001/remind', { body: {} });
    expect(sent.status).toBe(201);
    expect((await finalMessage(t, sent.body.id)).status).toBe('delivered');
    const text = `My chest pain is back, can we talk before the visit? ${randomUUID()}`;
    const reply = await t.request('POST', '/v1/simulator/replies', { body: { messageId: sent.body.id, body: text } });
    expect(reply.status).toBe(201);

    const [received] = await responses.take(1);
    expect(received.data!.events).toMatchObject({ type: 'MESSAGE_RESPONSE', data: { messageId: sent.body.id, patientId: 'p-1001', body: text } });
    // The reply's own publish went through Redis (every listener hears events through it), so it is on the channel by now.
    await eventually(async () => (onChannel.length >= 5 ? true : undefined), 'the raw subscriber to hear the events');
    const leaks = onChannel.filter((message) => [text, ...personal].some((value) => message.includes(value)));
    expect(leaks).toEqual([]);
    // Not even which patient an event is about, nor its type: the whole envelope is sealed.
    expect(onChannel.filter((message) => message.includes('p-1001') || message.includes('message.'))).toEqual([]);
  });
});
