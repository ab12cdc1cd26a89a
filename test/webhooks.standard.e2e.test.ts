import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { nativeImport } from '../common/native-import';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { startReceiver, verifySignature, waitFor, type Receiver } from './webhook-receiver';

/**
 * Standard Webhooks signatures on real deliveries (docs/webhooks.md "Verifying with a Standard Webhooks library"):
 * every request the HTTPS receiver gets is verified with the `standardwebhooks` and `svix` libraries as a receiver
 * uses them, for a plain secret, a generated `whsec_` secret and during a rotation's overlap.
 */
type Headers = Record<string, string>;
type Verifier = { name: string; make(secret: string): { verify(body: string, headers: Headers): unknown } };

const OVERLAP_MS = 4000;

/** A port nothing listens on now. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

describe(`Standard Webhooks signatures (${backendName})`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  let verifiers: Verifier[];

  beforeAll(async () => {
    const { Webhook: SvixWebhook } = (await nativeImport('svix')) as typeof import('svix');
    // A `whsec_` secret is passed as it is; a plain one as its UTF-8 bytes, the libraries' raw form.
    const raw = (secret: string) => new TextEncoder().encode(secret);
    verifiers = [
      {
        name: 'standardwebhooks',
        make: (secret) => (secret.startsWith('whsec_') ? new StandardWebhook(secret) : new StandardWebhook(raw(secret), { format: 'raw' })),
      },
      { name: 'svix', make: (secret) => (secret.startsWith('whsec_') ? new SvixWebhook(secret) : new SvixWebhook(raw(secret), { format: 'raw' })) },
    ];
    receiver = await startReceiver();
    t = await startTestPlatform({
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_TIMEOUT_MS: '5000',
      // Short, so the retry test waits a few seconds and the overlap ends within the test.
      WEBHOOK_RETRY_SCHEDULE: '2s,2s,2s,2s,2s',
      WEBHOOK_SECRET_OVERLAP: `${OVERLAP_MS / 1000}s`,
      RATE_LIMIT_WEBHOOKS: '100000',
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.stop();
  });

  const headersOf = (hook: { headers: Record<string, string | string[] | undefined> }): Headers =>
    Object.fromEntries(Object.entries(hook.headers).map(([name, value]) => [name, String(value)]));

  /** Sends the dashboard's test event through the delivery engine and returns the request the receiver got. */
  async function deliver(id: string, path: string) {
    const before = receiver.received(path).length;
    const res = await t.request('POST', `/v1/webhooks/${id}/test`);
    expect(res.status).toBe(200);
    const hook = await waitFor('the test delivery', () => receiver.received(path).length > before && receiver.received(path).at(-1)!);
    expect(hook.body.id).toBe(res.body.eventId);
    return { hook, body: hook.raw.toString('utf8'), headers: headersOf(hook) };
  }

  function expectVerified(secret: string, body: string, headers: Headers) {
    for (const verifier of verifiers) {
      let outcome: unknown;
      try {
        verifier.make(secret).verify(body, headers);
        outcome = 'verified';
      } catch (err) {
        outcome = (err as Error).message;
      }
      expect({ library: verifier.name, outcome }).toEqual({ library: verifier.name, outcome: 'verified' });
    }
    // standardwebhooks answers the verified event (svix answers nothing).
    expect(
      new StandardWebhook(secret.startsWith('whsec_') ? secret : Buffer.from(secret), secret.startsWith('whsec_') ? undefined : { format: 'raw' }).verify(
        body,
        headers,
      ),
    ).toEqual(JSON.parse(body));
  }

  function expectRefused(secret: string, body: string, headers: Headers) {
    for (const verifier of verifiers) {
      expect(() => verifier.make(secret).verify(body, headers)).toThrow();
    }
  }

  /** The body with one character of its data changed: still JSON, no longer what was signed. */
  const tampered = (body: string) => body.replace('"test_patient"', '"test_patienT"');

  it('[WHK-004] signs with a plain secret: the Standard Webhooks headers beside the X-Webhook-* ones, verified by both libraries', async () => {
    const secret = 'a-plain-shared-secret-0123';
    const created = await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/plain'), events: ['message.sent'], secret } });
    expect(created.status).toBe(201);
    expect(created.body.secret).toBeUndefined();
    const { body, headers } = await deliver(created.body.id, '/plain');

    expect(headers['webhook-id']).toBe(JSON.parse(body).id);
    expect(headers['webhook-id']).toBe(headers['x-webhook-id']);
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers['webhook-timestamp']).toBe(headers['x-webhook-timestamp']);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // The X-Webhook-Signature of docs/api.md §6 is unchanged.
    expect(verifySignature(secret, Buffer.from(body), headers['x-webhook-signature'])).toBe(true);
    expectVerified(secret, body, headers);

    expectRefused(secret, tampered(body), headers);
    expectRefused('another-plain-secret-0123', body, headers);
    // The timestamp is signed: a receiver cannot be fed the same signature under another time.
    expectRefused(secret, body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) });
  });

  it('[WHK-004] generates a whsec_ secret when none is given, returns it once, and signs with it', async () => {
    const created = await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/generated'), events: ['message.sent'] } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: receiver.url('/generated'),
      events: ['message.sent'],
      status: 'active',
      ordering: 'parallel',
      rateLimit: null,
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { id, secret } = created.body;
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    // Never again.
    expect((await t.request('GET', `/v1/webhooks/${id}`)).text).not.toContain(secret);
    expect((await t.request('GET', '/v1/webhooks')).text).not.toContain(secret);
    const read = await t.graphql('query($id: ID!) { webhook(id: $id) { id secret } }', { id });
    expect(read.body.data.webhook).toEqual({ id, secret: null });

    const { body, headers } = await deliver(id, '/generated');
    expectVerified(secret, body, headers);
    expectRefused(secret, tampered(body), headers);
    // X-Webhook-Signature keys the generated secret's UTF-8 bytes like any other (docs/api.md §6).
    expect(verifySignature(secret, Buffer.from(body), headers['x-webhook-signature'])).toBe(true);

    // GraphQL answers the generated secret the same way, once; a given secret is never returned.
    const gql = await t.graphql('mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id secret } }', {
      input: { url: receiver.url('/generated-gql'), events: ['message.sent'] },
    });
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.createWebhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const given = await t.graphql('mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id secret } }', {
      input: { url: receiver.url('/given-gql'), events: ['message.sent'], secret: 'a-given-secret-of-16+' },
    });
    expect(given.body.data.createWebhook.secret).toBeNull();
  });

  it('refuses a whsec_ secret that is not base64 of at least 16 bytes with 400 VALIDATION_ERROR', async () => {
    for (const secret of ['whsec_not base64 at all!!', `whsec_${randomBytes(8).toString('base64')}`, 'whsec_' + 'A'.repeat(23)]) {
      const res = await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/bad'), events: ['message.sent'], secret } });
      expect({ secret, status: res.status, code: res.body.error?.code, path: res.body.error?.details?.[0]?.path }).toEqual({
        secret,
        status: 400,
        code: 'VALIDATION_ERROR',
        path: 'secret',
      });
    }
    expect((await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/bad'), events: ['message.sent'], secret: null } })).status).toBe(400);
  });

  it('[WHK-005] signs with both secrets during a rotation, the new one first, and with the new one only after WEBHOOK_SECRET_OVERLAP', async () => {
    const created = await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/rotate'), events: ['message.sent'] } });
    const { id, secret: previous } = created.body;
    const next = 'whsec_' + randomBytes(32).toString('base64');
    const patched = await t.request('PATCH', `/v1/webhooks/${id}`, { body: { secret: next } });
    expect(patched.status).toBe(200);
    expect(patched.text).not.toContain(next);
    expect(patched.text).not.toContain(previous);
    const rotatedAt = Date.now();

    const during = await deliver(id, '/rotate');
    const entries = during.headers['webhook-signature'].split(' ');
    expect(entries).toHaveLength(2);
    const timestamp = new Date(Number(during.headers['webhook-timestamp']) * 1000);
    expect(entries[0]).toBe(new StandardWebhook(next).sign(during.headers['webhook-id'], timestamp, during.body));
    expect(entries[1]).toBe(new StandardWebhook(previous).sign(during.headers['webhook-id'], timestamp, during.body));
    expectVerified(next, during.body, during.headers);
    expectVerified(previous, during.body, during.headers);
    expectRefused(next, tampered(during.body), during.headers);
    expectRefused(previous, tampered(during.body), during.headers);
    // X-Webhook-Signature: the new secret only.
    expect(verifySignature(next, during.hook.raw, during.headers['x-webhook-signature'])).toBe(true);
    expect(verifySignature(previous, during.hook.raw, during.headers['x-webhook-signature'])).toBe(false);
    // The previous secret is kept sealed with the encryption key, like the current one.
    const stored = await t.platform.db!.query<{ previousSecret: string }>(`SELECT "previousSecret" FROM messaging."WebhookSubscription" WHERE id = $1`, [id]);
    expect(stored.rows[0].previousSecret).toEqual(expect.any(String));
    expect(stored.rows[0].previousSecret).not.toContain(previous.slice('whsec_'.length, 20));

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, rotatedAt + OVERLAP_MS + 500 - Date.now())));
    const after = await deliver(id, '/rotate');
    expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expectVerified(next, after.body, after.headers);
    expectRefused(previous, after.body, after.headers);

    // Giving the current secret again is no rotation: no second entry appears.
    expect((await t.request('PATCH', `/v1/webhooks/${id}`, { body: { secret: next } })).status).toBe(200);
    expect((await deliver(id, '/rotate')).headers['webhook-signature'].split(' ')).toHaveLength(1);
  });

  it('re-signs each retry with its own timestamp under the same webhook-id', async () => {
    receiver.behave('/retry', (n) => (n === 1 ? { status: 500, body: 'not yet' } : { status: 200 }));
    const created = await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/retry'), events: ['message.sent'] } });
    const { id, secret } = created.body;
    const first = await t.request('POST', `/v1/webhooks/${id}/test`);
    expect(first.body).toMatchObject({ success: false, statusCode: 500, deliveryStatus: 'pending' });
    const [a, b] = await waitFor('the retry', () => receiver.received('/retry').length >= 2 && receiver.received('/retry'));
    const [ha, hb] = [headersOf(a), headersOf(b)];
    expect(hb['webhook-id']).toBe(ha['webhook-id']);
    expect(b.raw.equals(a.raw)).toBe(true);
    expect(Number(hb['webhook-timestamp'])).toBeGreaterThan(Number(ha['webhook-timestamp']));
    expect(hb['webhook-signature']).not.toBe(ha['webhook-signature']);
    for (const [hook, headers] of [
      [a, ha],
      [b, hb],
    ] as const) {
      expectVerified(secret, hook.raw.toString('utf8'), headers);
      expect(headers['x-webhook-timestamp']).toBe(headers['webhook-timestamp']);
    }
    // The hex X-Webhook-Signature covers the body only, so it is the same on both attempts.
    expect(hb['x-webhook-signature']).toBe(createHmac('sha256', secret).update(b.raw).digest('hex'));
    expect(hb['x-webhook-signature']).toBe(ha['x-webhook-signature']);
  });

  it("the receiver guide's Python receiver verifies real deliveries, prints each event once and refuses a tampered body", async () => {
    const guide = readFileSync(join(__dirname, '..', 'docs', 'webhooks.md'), 'utf8');
    const script = /```python\n([\s\S]*?)```/.exec(guide)![1];
    const port = await freePort();
    const created = await t.request('POST', '/v1/webhooks', { body: { url: `http://127.0.0.1:${port}/hooks/caregraph`, events: ['message.sent'] } });
    expect(created.status).toBe(201);
    const python = spawn('python3', ['-c', script], { env: { ...process.env, PORT: String(port), CAREGRAPH_WEBHOOK_SECRET: created.body.secret } });
    let printed = '';
    python.stdout.on('data', (chunk) => (printed += chunk));
    try {
      await waitFor('the Python receiver', () =>
        fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).then(
          (r) => r.status === 401,
          () => false,
        ),
      );
      const first = await t.request('POST', `/v1/webhooks/${created.body.id}/test`, { body: { type: 'message.sent' } });
      expect(first.body).toMatchObject({ success: true, statusCode: 204 });
      await waitFor('the printed event', () => printed.includes('message.sent'));
      const [type] = printed.trim().split(' ', 1);
      expect(printed.trim().split('\n')).toHaveLength(1);
      expect({ type, data: JSON.parse(printed.trim().slice(type.length)) }).toEqual({
        type: 'message.sent',
        data: { messageId: 'test_message', patientId: 'test_patient', channel: 'sms', status: 'sent' },
      });
      // A real delivery signed with the same secret, replayed to the Python receiver as sent and with its body changed.
      const twin = await t.request('POST', '/v1/webhooks', {
        body: { url: receiver.url('/python-twin'), events: ['message.sent'], secret: created.body.secret },
      });
      const { body, headers } = await deliver(twin.body.id, '/python-twin');
      const replay = (payload: string) => fetch(`http://127.0.0.1:${port}/hooks/caregraph`, { method: 'POST', headers, body: payload });
      expect((await replay(tampered(body))).status).toBe(401);
      expect((await replay(body)).status).toBe(204);
      expect((await replay(body)).status).toBe(204);
      await waitFor('the replayed event', () => printed.trim().split('\n').length >= 2);
      // Printed once, though received twice.
      expect(printed.trim().split('\n')).toHaveLength(2);
    } finally {
      python.kill();
    }
  });
});
