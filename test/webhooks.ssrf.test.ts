import { tenantClient } from '../common/db/tenant-session';
import { createMessagingPrisma, type MessagingPrisma } from '../subgraphs/messaging/db/client';
import { publishCommitted, recordEvent } from '../subgraphs/messaging/events/outbox';
import { FieldCipher } from '../common/crypto';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver';

const SECRET = 'whsec-test-0123456789abcdef';

describe(`webhook SSRF guard, WEBHOOK_ALLOW_INSECURE unset (${backendName})`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  let prisma: MessagingPrisma;

  beforeAll(async () => {
    receiver = await startReceiver();
    // The URL hygiene cases alone make more webhook calls than the default 50 a minute.
    t = await startTestPlatform({ WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_RETRY_SCHEDULE: '1h,1h,1h,1h,1h', RATE_LIMIT_WEBHOOKS: '1000' });
    prisma = createMessagingPrisma(t.platform.db!);
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await t?.stop();
    await receiver?.close();
  });

  it.each([
    ['http://', 'http://93.184.216.34/hook', /https:\/\//],
    ['a loopback address', 'https://127.0.0.1/hook', /loopback/],
    ['a private address', 'https://10.1.2.3/hook', /private/],
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data', /link-local/],
    ['a name resolving to loopback', 'https://localhost:8443/hook', /localhost resolves to .*loopback/],
    ['an IPv6 loopback', 'https://[::1]/hook', /loopback/],
    ['a mapped IPv6 private address', 'https://[::ffff:192.168.0.1]/hook', /private/],
    ['an IPv4-compatible loopback', 'https://[::127.0.0.1]/hook', /^must not target a loopback \(127\.0\.0\.1 inside an IPv4-compatible address\) address/],
    ['an SIIT loopback', 'https://[::ffff:0:127.0.0.1]/hook', /loopback \(127\.0\.0\.1 inside an IPv4-translated \(SIIT\) address\)/],
    ['a NAT64 private address', 'https://[64:ff9b::10.0.0.1]/hook', /private \(10\.0\.0\.1 inside a NAT64 address\)/],
    ['a NAT64 local-use address', 'https://[64:ff9b:1::808:808]/hook', /NAT64 local-use/],
    ['a 6to4 address', 'https://[2002:808:808::1]/hook', /6to4/],
    ['a 6to4 loopback', 'https://[2002:7f00:1::1]/hook', /loopback \(127\.0\.0\.1 inside a 6to4 address\)/],
    ['the discard-only block', 'https://[100::1]/hook', /discard-only/],
    ['the documentation block', 'https://[2001:db8::1]/hook', /special-purpose/],
    ['the deprecated 6to4 relay anycast block', 'https://192.88.99.1/hook', /special-purpose/],
  ])('refuses %s with 400 VALIDATION_ERROR', async (_what, url, message) => {
    const res = await t.request('POST', '/v1/webhooks', { body: { url, events: ['message.sent'], secret: SECRET } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([{ path: 'url', message: expect.stringMatching(message) }]);
  });

  it('[WHK-002] accepts a public https address, and refuses a change to an internal one', async () => {
    const created = await t.request('POST', '/v1/webhooks', { body: { url: 'https://93.184.216.34/hook', events: ['message.sent'], secret: SECRET } });
    expect(created.status).toBe(201);
    const patched = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, { body: { url: 'https://192.168.10.10/hook' } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details[0].path).toBe('url');
    const bracketed = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, { body: { url: 'https://[::ffff:0:7f00:1]/hook' } });
    expect(bracketed.status).toBe(400);
    expect(bracketed.body.error.details).toEqual([{ path: 'url', message: expect.stringMatching(/loopback/) }]);
    expect((await t.request('GET', `/v1/webhooks/${created.body.id}`)).body.url).toBe('https://93.184.216.34/hook');
    await t.request('DELETE', `/v1/webhooks/${created.body.id}`);
    const v6 = await t.request('POST', '/v1/webhooks', { body: { url: 'https://[2606:4700:4700::1111]/hook', events: ['message.sent'], secret: SECRET } });
    expect(v6.status).toBe(201);
    await t.request('DELETE', `/v1/webhooks/${v6.body.id}`);
  });

  describe('URL hygiene', () => {
    const gql = (query: string, variables: Record<string, unknown>) => t.graphql(query, variables);
    const createMutation = 'mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id url } }';
    const updateMutation = 'mutation($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { id url } }';

    it('stores the normalised URL, on POST, PATCH and GraphQL: a backslash before @ is a path, never userinfo', async () => {
      const typed = 'https://93.184.215.14\\@127.0.0.1/';
      const normalised = 'https://93.184.215.14/@127.0.0.1/';
      const created = await t.request('POST', '/v1/webhooks', { body: { url: typed, events: ['message.sent'], secret: SECRET } });
      expect([created.status, created.body.url]).toEqual([201, normalised]);
      expect((await t.request('GET', `/v1/webhooks/${created.body.id}`)).body.url).toBe(normalised);
      const patched = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, { body: { url: 'HTTPS://93.184.215.14:443/a/../b' } });
      expect([patched.status, patched.body.url]).toEqual([200, 'https://93.184.215.14/b']);
      const viaGraphql = await gql(createMutation, { input: { url: typed, events: ['message.sent'], secret: SECRET } });
      expect(viaGraphql.body.data.createWebhook.url).toBe(normalised);
      const updated = await gql(updateMutation, { id: viaGraphql.body.data.createWebhook.id, input: { url: 'https://93.184.215.14\\hook' } });
      expect(updated.body.data.updateWebhook.url).toBe('https://93.184.215.14/hook');
      await t.request('DELETE', `/v1/webhooks/${created.body.id}`);
      await t.request('DELETE', `/v1/webhooks/${viaGraphql.body.data.createWebhook.id}`);
    });

    it.each([
      ['port 0', 'https://93.184.215.14:0/hook', /port 0/],
      ['a user name', 'https://user@93.184.215.14/hook', /credentials/],
      ['a user name and password', 'https://user:pw@93.184.215.14/hook', /credentials/],
      ['a password only', 'https://:pw@93.184.215.14/hook', /credentials/],
      ['an empty userinfo', 'https://@93.184.215.14/hook', /credentials/],
    ])('refuses %s with 400 VALIDATION_ERROR naming url, on POST, PATCH and GraphQL, and changes nothing', async (_what, url, message) => {
      const expected = [{ path: 'url', message: expect.stringMatching(message) }];
      const posted = await t.request('POST', '/v1/webhooks', { body: { url, events: ['message.sent'], secret: SECRET } });
      expect([posted.status, posted.body.error?.code, posted.body.error?.details]).toEqual([400, 'VALIDATION_ERROR', expected]);
      const before = (await t.request('GET', '/v1/webhooks')).body.data.length;
      const created = await t.request('POST', '/v1/webhooks', { body: { url: 'https://93.184.215.14/hook', events: ['message.sent'], secret: SECRET } });
      const patched = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, { body: { url } });
      expect([patched.status, patched.body.error?.code, patched.body.error?.details]).toEqual([400, 'VALIDATION_ERROR', expected]);
      expect((await t.request('GET', `/v1/webhooks/${created.body.id}`)).body.url).toBe('https://93.184.215.14/hook');
      const viaCreate = await gql(createMutation, { input: { url, events: ['message.sent'], secret: SECRET } });
      expect(viaCreate.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: expected });
      const viaUpdate = await gql(updateMutation, { id: created.body.id, input: { url } });
      expect(viaUpdate.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: expected });
      await t.request('DELETE', `/v1/webhooks/${created.body.id}`);
      expect((await t.request('GET', '/v1/webhooks')).body.data.length).toBe(before);
    });
  });

  it('[WHK-002] checks the address again at each delivery (a name that now resolves inside, an address stored earlier)', async () => {
    // As if these had resolved to public addresses when created, and no longer do.
    const cipher = new FieldCipher(t.platform.runtime.secrets.encryptionKey);
    const port = new URL(receiver.origin).port;
    const stored = [
      ['wh_rebound_name', `https://localhost:${port}/rebound`],
      ['wh_rebound_ip', receiver.url('/rebound-ip')],
      ['wh_rebound_siit', `https://[::ffff:0:127.0.0.1]:${port}/rebound-siit`],
    ];
    for (const [id, url] of stored) {
      await tenantClient(prisma, 'demo').webhookSubscription.create({
        data: { tenantId: 'demo', id, url, events: ['message.sent'], secret: cipher.encrypt(SECRET), createdAt: new Date(Date.now() - 1000) },
      });
    }
    const event = await tenantClient(prisma, 'demo').$transaction((tx) =>
      recordEvent(tx, cipher, 'demo', 'message.sent', { messageId: 'm-1', patientId: 'p-1001', channel: 'sms', status: 'sent' }),
    );
    await publishCommitted(t.platform.runtime.events, [event]);

    for (const [id] of stored) {
      const [delivery] = await waitFor(`the refused attempt of ${id}`, async () => {
        const log = (await t.request('GET', `/v1/webhooks/${id}/deliveries`)).body.data;
        return log?.[0]?.attempts.length >= 1 && log;
      });
      expect(delivery.status).toBe('pending');
      expect(delivery.attempts[0]).toMatchObject({ success: false, statusCode: null, error: expect.stringMatching(/target refused: .*loopback/) });
    }
    expect(receiver.received()).toHaveLength(0);
  });
});
