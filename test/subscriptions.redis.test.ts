import { randomBytes } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from './harness';
import type { MessagingPrisma } from '../subgraphs/messaging/db/client';
import { advance, connectAs, event, insertMessage, messagingPrisma, Subscription, untilLive, type Connection } from './subscriptions.helpers';

const enabled = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

/**
 * Two platform instances as a scale-out deployment runs them: one PostgreSQL
 * database, one Redis, shared secrets, and nothing else in common. A client
 * on gateway A hears what happens on instance B.
 */
(enabled ? describe : describe.skip)('GraphQL subscriptions across instances (PostgreSQL + Redis)', () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let prismaB: MessagingPrisma;
  let connection: Connection | undefined;

  beforeAll(async () => {
    const shared = {
      AUTH_JWT_SECRET: randomBytes(32).toString('base64url'),
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      REDIS_EVENTS_CHANNEL: `caregraph:test:${process.pid}:${Date.now()}`,
    };
    a = await startTestPlatform(shared);
    b = await startTestPlatform({ ...shared, DATABASE_URL: a.env.DATABASE_URL });
    prismaB = messagingPrisma(b);
  });
  afterAll(async () => {
    await connection?.dispose();
    await prismaB?.$disconnect();
    await b?.stop();
    await a?.stop();
  });

  it('delivers events and status changes produced on instance B to a client on gateway A', async () => {
    expect(a.platform.runtime.events).not.toBe(b.platform.runtime.events);
    const busB = b.platform.runtime.events;
    connection = await connectAs(a, await a.token());
    const events = new Subscription(connection.client, 'subscription { events(types: [MESSAGE_DELIVERED]) { id type data } }');
    const status = new Subscription(connection.client, 'subscription { messageStatusChanged(patientId: "p-1001") { id status patient { name { family } } } }');
    await untilLive(busB, connection, 'demo');

    const id = await insertMessage(prismaB, 'demo', 'p-1001');
    await busB.publish(event('demo', 'message.status', { messageId: id, patientId: 'p-1001', channel: 'sms', status: 'queued' }));
    await advance(prismaB, busB, 'demo', id, 'p-1001', ['sending', 'sent', 'delivered']);
    const delivered = event('demo', 'message.delivered', { messageId: id, patientId: 'p-1001', channel: 'sms', status: 'delivered' });
    await busB.publish(delivered);

    expect((await status.take(4)).map((r) => r.data!.messageStatusChanged)).toEqual(
      ['queued', 'sending', 'sent', 'delivered'].map((s) => ({ id, status: s, patient: { name: { family: 'de Vries' } } })),
    );
    expect((await events.take(1)).map((r) => r.data!.events)).toEqual([{ id: delivered.id, type: 'MESSAGE_DELIVERED', data: delivered.data }]);
  });
});
