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
    t = await startTestPlatform({ WEBHOOK_CA_FILE: receiver.caFile, WEBHOOK_RETRY_SCHEDULE: '1h,1h,1h,1h,1h' });
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
  ])('refuses %s with 400 VALIDATION_ERROR', async (_what, url, message) => {
    const res = await t.request('POST', '/v1/webhooks', { body: { url, events: ['message.sent'], secret: SECRET } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([{ path: 'url', message: expect.stringMatching(message) }]);
  });

  it('accepts a public https address, and refuses a change to an internal one', async () => {
    const created = await t.request('POST', '/v1/webhooks', { body: { url: 'https://93.184.216.34/hook', events: ['message.sent'], secret: SECRET } });
    expect(created.status).toBe(201);
    const patched = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, { body: { url: 'https://192.168.10.10/hook' } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details[0].path).toBe('url');
    expect((await t.request('GET', `/v1/webhooks/${created.body.id}`)).body.url).toBe('https://93.184.216.34/hook');
    await t.request('DELETE', `/v1/webhooks/${created.body.id}`);
  });

  it('checks the address again at each delivery (a name that now resolves inside, an address stored earlier)', async () => {
    // As if these had resolved to public addresses when created, and no longer do.
    const cipher = new FieldCipher(t.platform.runtime.secrets.encryptionKey);
    const port = new URL(receiver.origin).port;
    for (const [id, url] of [['wh_rebound_name', `https://localhost:${port}/rebound`], ['wh_rebound_ip', receiver.url('/rebound-ip')]]) {
      await prisma.webhookSubscription.create({
        data: { tenantId: 'demo', id, url, events: ['message.sent'], secret: cipher.encrypt(SECRET), createdAt: new Date(Date.now() - 1000) },
      });
    }
    const event = await prisma.$transaction((tx) => recordEvent(tx, 'demo', 'message.sent', { messageId: 'm-1', patientId: 'p-1001', channel: 'sms', status: 'sent' }));
    await publishCommitted(t.platform.runtime.events, [event]);

    for (const id of ['wh_rebound_name', 'wh_rebound_ip']) {
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
