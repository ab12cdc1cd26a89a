import WebSocket from 'ws';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { TestClock } from './support/clock';
import type { MessagingPrisma } from '../subgraphs/messaging/db/client';
import { advance, connect, connectAs, event, insertMessage, messagingPrisma, Subscription, untilLive, wsUrl, type Connection } from './subscriptions.helpers';

const MESSAGE_STATUS = `
  subscription Status($id: ID) {
    change: messageStatusChanged(messageId: $id) {
      id
      state: status
      ...Recipient
    }
  }
  fragment Recipient on Message { channel patientId patient { id name { family } } }`;

describe(`GraphQL subscriptions over WebSocket (${backendName})`, () => {
  let t: TestPlatform;
  let prisma: MessagingPrisma;
  const clock = new TestClock();
  const open: Connection[] = [];
  const bus = () => t.platform.runtime.events;
  const as = async (options: Parameters<TestPlatform['token']>[0] = {}, tenantId?: string) => {
    const connection = await connectAs(t, await t.token(options), tenantId);
    open.push(connection);
    return connection;
  };

  beforeAll(async () => {
    t = await startTestPlatform(
      {
        SUBSCRIPTIONS_MAX_PER_CONNECTION: '5',
        SUBSCRIPTIONS_CONNECTIONS_PER_MINUTE: '40',
        REDIS_EVENTS_CHANNEL: `caregraph:test:${process.pid}:${Date.now()}`,
      },
      'all',
      { clock },
    );
    prisma = messagingPrisma(t);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.dispose()));
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await t?.stop();
  });

  it("mirrors the tenant's events with the same id, type, timestamp and data", async () => {
    const admin = await as();
    const all = new Subscription(admin.client, 'subscription { events { id type timestamp data } }');
    const delivered = new Subscription(admin.client, 'subscription { events(types: [MESSAGE_DELIVERED]) { id type } }');
    await untilLive(bus(), admin, 'demo');

    const published = [
      event('demo', 'message.sent', { messageId: 'm-1', patientId: 'p-1001', channel: 'sms', status: 'sent' }),
      event('demo', 'message.status', { messageId: 'm-1', patientId: 'p-1001', channel: 'sms', status: 'delivered' }),
      event('demo', 'message.delivered', { messageId: 'm-1', patientId: 'p-1001', channel: 'sms', status: 'delivered' }),
      event('demo', 'webhook.disabled', { webhookId: 'wh-1', url: 'https://example.com/hook' }),
      event('acme', 'message.delivered', { messageId: 'm-9', patientId: 'p-2001', channel: 'sms', status: 'delivered' }),
      event('demo', 'message.response', { messageId: 'm-1', patientId: 'p-1001', channel: 'sms', body: 'C', receivedAt: new Date().toISOString() }),
    ];
    for (const e of published) await bus().publish(e);

    const received = (await all.take(4)).map((r) => r.data!.events);
    const expected = [published[0], published[2], published[3], published[5]].map(({ id, type, timestamp, data }) => ({
      id,
      type: type.replace('.', '_').toUpperCase(),
      timestamp,
      data,
    }));
    expect(received).toEqual(expected);
    expect((await delivered.take(1)).map((r) => r.data!.events)).toEqual([{ id: published[2].id, type: 'MESSAGE_DELIVERED' }]);
    // Nothing else arrived: the bus-only status event and acme's event were never sent.
    await untilLive(bus(), admin, 'demo');
    expect(all.real()).toHaveLength(4);
    expect(delivered.real()).toHaveLength(1);
  });

  it('sends webhook.disabled alerts to admins only', async () => {
    const nurse = await as({ roles: ['nurse'] });
    const forbidden = new Subscription(nurse.client, 'subscription { events(types: [WEBHOOK_DISABLED]) { id } }');
    await forbidden.ended();
    expect(forbidden.error).toEqual([expect.objectContaining({ extensions: { code: 'FORBIDDEN' } })]);

    const all = new Subscription(nurse.client, 'subscription { events { id type } }');
    await untilLive(bus(), nurse, 'demo');
    const alert = event('demo', 'webhook.disabled', { webhookId: 'wh-1' });
    const sent = event('demo', 'message.sent', { messageId: 'm-2', patientId: 'p-1001', channel: 'sms', status: 'sent' });
    await bus().publish(alert);
    await bus().publish(sent);
    expect((await all.take(1)).map((r) => r.data!.events.id)).toEqual([sent.id]);
    expect(all.real()).toHaveLength(1);
  });

  it('refuses support and platform_admin every event and status stream (they see no message data)', async () => {
    for (const role of ['support', 'platform_admin']) {
      const caller = await as({ roles: [role], sub: `${role}-ws` });
      for (const query of [
        'subscription { events { id } }',
        'subscription { events(types: [MESSAGE_RESPONSE]) { id } }',
        'subscription { messageStatusChanged { id } }',
      ]) {
        const refused = new Subscription(caller.client, query);
        await refused.ended();
        expect(refused.error).toEqual([expect.objectContaining({ extensions: { code: 'FORBIDDEN' } })]);
      }
    }
  });

  it('[MSG-002] streams queued → sending → sent → delivered in order, with the patient from the clinical record', async () => {
    const id = await insertMessage(prisma, 'demo', 'p-1001');
    const admin = await as();
    const status = new Subscription(admin.client, MESSAGE_STATUS, { id });
    await untilLive(bus(), admin, 'demo');
    await bus().publish(event('demo', 'message.status', { messageId: id, patientId: 'p-1001', channel: 'sms', status: 'queued' }));
    await advance(prisma, bus(), 'demo', id, 'p-1001', ['sending', 'sent', 'delivered']);

    const results = await status.take(4);
    expect(results.map((r) => r.errors)).toEqual([undefined, undefined, undefined, undefined]);
    expect(results.map((r) => r.data!.change.state)).toEqual(['queued', 'sending', 'sent', 'delivered']);
    expect(results[3].data!.change).toEqual({
      id,
      state: 'delivered',
      channel: 'sms',
      patientId: 'p-1001',
      patient: { id: 'p-1001', name: { family: 'de Vries' } },
    });
  });

  it('[SEC-007] filters status changes by patient, and a patient token sees only its own messages', async () => {
    const own = await insertMessage(prisma, 'demo', 'p-1001');
    const other = await insertMessage(prisma, 'demo', 'p-1003');
    const patient = await as({ roles: ['patient'], patientId: 'p-1001', sub: 'patient-1001' });
    const mine = new Subscription(patient.client, 'subscription { messageStatusChanged { id status } }');
    const theirs = new Subscription(patient.client, 'subscription { messageStatusChanged(patientId: "p-1003") { id } }');
    const events = new Subscription(patient.client, 'subscription { events { id data } }');
    const staff = await as({ roles: ['clinician'] });
    const byPatient = new Subscription(staff.client, 'subscription { messageStatusChanged(patientId: "p-1003") { id status } }');
    await untilLive(bus(), patient, 'demo', 'p-1001');
    await untilLive(bus(), staff, 'demo');

    await advance(prisma, bus(), 'demo', other, 'p-1003', ['sending']);
    const otherSent = event('demo', 'message.sent', { messageId: other, patientId: 'p-1003', channel: 'sms', status: 'sent' });
    await bus().publish(otherSent);
    await advance(prisma, bus(), 'demo', own, 'p-1001', ['sending']);
    const ownSent = event('demo', 'message.sent', { messageId: own, patientId: 'p-1001', channel: 'sms', status: 'sent' });
    await bus().publish(ownSent);

    expect((await mine.take(1)).map((r) => r.data)).toEqual([{ messageStatusChanged: { id: own, status: 'sending' } }]);
    expect((await events.take(1)).map((r) => r.data!.events.id)).toEqual([ownSent.id]);
    expect((await byPatient.take(1)).map((r) => r.data)).toEqual([{ messageStatusChanged: { id: other, status: 'sending' } }]);
    await untilLive(bus(), patient, 'demo', 'p-1001');
    expect(mine.real()).toHaveLength(1);
    expect(theirs.real()).toHaveLength(0);
    expect(events.real()).toHaveLength(1);
  });

  it('[WHK-012, SEC-004] never shows demo events to an acme token', async () => {
    const demoMessage = await insertMessage(prisma, 'demo', 'p-1001');
    const acme = await as({ tenants: ['acme'] });
    const events = new Subscription(acme.client, 'subscription { events { id } }');
    const byId = new Subscription(acme.client, 'subscription($id: ID) { messageStatusChanged(messageId: $id) { id } }', { id: demoMessage });
    const all = new Subscription(acme.client, 'subscription { messageStatusChanged { id } }');
    const both = await as({ tenants: ['demo', 'acme'] }, 'acme');
    const chosen = new Subscription(both.client, 'subscription { events { id } }');
    await untilLive(bus(), acme, 'acme');
    await untilLive(bus(), both, 'acme');

    await advance(prisma, bus(), 'demo', demoMessage, 'p-1001', ['sending']);
    await bus().publish(event('demo', 'message.sent', { messageId: demoMessage, patientId: 'p-1001', channel: 'sms', status: 'sent' }));
    const acmeEvent = event('acme', 'message.sent', { messageId: 'm-acme', patientId: 'p-2001', channel: 'sms', status: 'sent' });
    await bus().publish(acmeEvent);

    expect((await events.take(1)).map((r) => r.data!.events.id)).toEqual([acmeEvent.id]);
    expect((await chosen.take(1)).map((r) => r.data!.events.id)).toEqual([acmeEvent.id]);
    await untilLive(bus(), acme, 'acme');
    expect(events.real()).toHaveLength(1);
    expect(byId.real()).toHaveLength(0);
    expect(all.real()).toHaveLength(0);
  });

  it('closes the connection without a valid token or tenant', async () => {
    const none = connect(t, undefined);
    expect(await none.closed).toEqual({ code: 4401, reason: expect.stringMatching(/^UNAUTHENTICATED: Missing authorization/) });
    const garbage = connect(t, { authorization: 'Bearer not-a-jwt' });
    expect((await garbage.closed).code).toBe(4401);
    const expired = connect(t, { authorization: `Bearer ${await t.token({ ttlSeconds: -10 })}` });
    expect(await expired.closed).toEqual({ code: 4401, reason: expect.stringMatching(/expired/) });
    const foreign = connect(t, { authorization: `Bearer ${await t.token()}`, tenantId: 'acme' });
    expect(await foreign.closed).toEqual({ code: 4403, reason: expect.stringMatching(/^FORBIDDEN/) });
    const ambiguous = connect(t, { authorization: `Bearer ${await t.token({ tenants: ['demo', 'acme'] })}` });
    expect(await ambiguous.closed).toEqual({ code: 4400, reason: expect.stringMatching(/^TENANT_REQUIRED/) });
  });

  it('refuses bad documents when subscribing, and keeps the connection', async () => {
    const admin = await as();
    const refused = async (query: string, variables?: Record<string, unknown>) => {
      const s = new Subscription(admin.client, query, variables);
      await s.ended();
      return s.error as Array<{ message: string; extensions: { code: string } }>;
    };
    expect(await refused('subscription { events { nope } }')).toEqual([
      expect.objectContaining({ message: expect.stringContaining('nope'), extensions: { code: 'VALIDATION_ERROR' } }),
    ]);
    expect(await refused('subscription {')).toEqual([expect.objectContaining({ extensions: { code: 'VALIDATION_ERROR' } })]);
    expect(await refused('subscription { events(types: [NO_SUCH_EVENT]) { id } }')).toEqual([
      expect.objectContaining({ extensions: { code: 'VALIDATION_ERROR' } }),
    ]);
    expect(await refused('subscription { events(types: []) { id } }')).toEqual([expect.objectContaining({ extensions: { code: 'VALIDATION_ERROR' } })]);
    // graphql-js parses literals recursively: 2,400 nested lists (within the 5,000-token limit) overflowed its stack.
    expect(await refused(`subscription { events(types: ${'['.repeat(2400)}${']'.repeat(2400)}) { id } }`)).toEqual([
      { message: 'The GraphQL document nests deeper than 64 levels', extensions: { code: 'VALIDATION_ERROR' } },
    ]);
    let deep: unknown = 'x';
    for (let i = 0; i < 1000; i++) deep = [deep];
    expect(await refused('subscription($id: ID) { messageStatusChanged(messageId: $id) { id } }', { id: deep })).toEqual([
      { message: 'The variables nest deeper than 64 levels', extensions: { code: 'VALIDATION_ERROR' } },
    ]);
    expect(await refused('subscription { events { id } messageStatusChanged { id } }')).toEqual([
      expect.objectContaining({ extensions: { code: 'VALIDATION_ERROR' } }),
    ]);
    expect(await refused('subscription($id: ID!) { messageStatusChanged(messageId: $id) { id } }', {})).toEqual([
      expect.objectContaining({ extensions: { code: 'VALIDATION_ERROR' } }),
    ]);
    expect(await refused('{ templates { data { id } } }')).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/POST \/graphql/), extensions: { code: 'VALIDATION_ERROR' } }),
    ]);
    // Still connected and serving.
    const events = new Subscription(admin.client, 'subscription { events { id } }');
    await untilLive(bus(), admin, 'demo');
    expect(events.error).toBeUndefined();
  });

  it('limits subscriptions per connection', async () => {
    const admin = await as();
    const subscriptions = Array.from({ length: 5 }, () => new Subscription(admin.client, 'subscription { events(types: [MESSAGE_SENT]) { id } }'));
    const sixth = new Subscription(admin.client, 'subscription { events { id } }');
    await sixth.ended();
    expect(sixth.error).toEqual([expect.objectContaining({ message: expect.stringMatching(/At most 5/), extensions: { code: 'RATE_LIMIT_EXCEEDED' } })]);
    subscriptions[0].stop();
    // A freed slot can be used again (the probe is the fifth subscription).
    await untilLive(bus(), admin, 'demo');
  });

  it('refuses oversized messages', async () => {
    const socket = new WebSocket(wsUrl(t), 'graphql-transport-ws');
    await new Promise((resolve) => socket.once('open', resolve));
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${'x'.repeat(70 * 1024)}` } }));
    expect(await closed).toBe(1009);
  });

  it('limits new connections per client address and answers other paths with 404', async () => {
    // Its own source address, so the other tests' connections do not count.
    const open = (path = '/graphql') =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`${wsUrl(t).replace('/graphql', path)}`, 'graphql-transport-ws', { localAddress: '127.0.0.7' });
        socket.once('open', () => {
          socket.close();
          resolve(101);
        });
        socket.once('unexpected-response', (_req, res) => {
          resolve(res.statusCode!);
          socket.terminate();
        });
        socket.once('error', reject);
      });
    expect(await open('/elsewhere')).toBe(404);
    const statuses: number[] = [];
    for (let i = 0; i < 41; i++) statuses.push(await open());
    expect(statuses.slice(0, 40).every((s) => s === 101)).toBe(true);
    expect(statuses[40]).toBe(429);
  });

  // Moves the platform's clock a minute on: before the test that stops the gateway, after every other.
  it('[SEC-002] closes the connection when the token expires, and refuses the token over HTTP from then on', async () => {
    const token = await t.token({ ttlSeconds: 60 });
    const connection = await connectAs(t, token);
    open.push(connection);
    const events = new Subscription(connection.client, 'subscription { events { id } }');
    expect((await t.request('GET', '/v1/templates', { token })).status).toBe(200);
    clock.advance(61_000);
    expect(await connection.closed).toEqual({ code: 4401, reason: 'UNAUTHENTICATED: the token has expired' });
    await events.ended();
    const late = await t.request('GET', '/v1/templates', { token });
    expect(late.status).toBe(401);
    expect(late.body.error.message).toMatch(/expired/);
  });

  it('closes open subscriptions with 1001 when the gateway stops', async () => {
    const admin = await as();
    const events = new Subscription(admin.client, 'subscription { events { id } }');
    await untilLive(bus(), admin, 'demo');
    await t.platform.gateway!.close();
    expect((await admin.closed).code).toBe(1001);
    await events.ended();
  });
});
