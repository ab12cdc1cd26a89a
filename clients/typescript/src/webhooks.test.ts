import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { createWebhookVerifier, MemoryDedupStore, verifySignature, verifyStandardSignature, WebhookVerificationError } from './webhooks';

const SECRET = 'whsec-unit-0123456789';
const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

describe('webhook verification', () => {
  let clock = Date.UTC(2026, 10, 23, 9, 0, 0);
  const now = () => clock;
  const body = JSON.stringify({ id: 'evt_1', type: 'message.sent', timestamp: '2026-11-23T09:00:00.000Z', data: { messageId: 'm-1' } });
  const headers = (overrides: Record<string, string> = {}) => ({
    'x-webhook-id': 'evt_1',
    'x-webhook-timestamp': String(Math.floor(clock / 1000)),
    'x-webhook-signature': sign(body),
    ...overrides,
  });
  const reason = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (err: WebhookVerificationError) => err.reason,
    );

  it('accepts a signed delivery once and reports the retry as a duplicate (answered 200)', async () => {
    const verify = createWebhookVerifier({ secret: SECRET, now });
    expect((await verify(headers(), Buffer.from(body))).data).toEqual({ messageId: 'm-1' });
    const again = await verify(headers(), body).catch((err) => err);
    expect([again.reason, again.status]).toEqual(['duplicate', 200]);
  });

  it('refuses a wrong or malformed signature, a missing header, an unsigned id and a stale timestamp, each with status 400', async () => {
    const verify = createWebhookVerifier({ secret: SECRET, now });
    expect(await reason(verify(headers({ 'x-webhook-signature': sign(body, 'other-secret') }), body))).toBe('bad_signature');
    expect(await reason(verify(headers({ 'x-webhook-signature': sign(body).toUpperCase() }), body))).toBe('bad_signature');
    expect(await reason(verify(headers({ 'x-webhook-signature': 'abc' }), body))).toBe('bad_signature');
    expect(await reason(verify(headers(), body.replace('m-1', 'm-2')))).toBe('bad_signature');
    expect(await reason(verify({ 'x-webhook-id': 'evt_1' }, body))).toBe('missing_header');
    expect(await reason(verify(headers({ 'x-webhook-id': 'evt_2' }), body))).toBe('id_mismatch');
    expect(await reason(verify(headers({ 'x-webhook-timestamp': String(Math.floor(clock / 1000) - 301) }), body))).toBe('stale_timestamp');
    expect(await reason(verify(headers({ 'x-webhook-timestamp': String(Math.floor(clock / 1000) + 301) }), body))).toBe('stale_timestamp');
    expect(await reason(verify(headers({ 'x-webhook-timestamp': '1e9' }), body))).toBe('stale_timestamp');
    expect(new WebhookVerificationError('bad_signature', 'x').status).toBe(400);
  });

  it('takes the old and the new secret during a rotation, and a custom tolerance', async () => {
    const verify = createWebhookVerifier({ secret: ['old-secret-0123456789', SECRET], toleranceSeconds: 10, now });
    expect(await reason(verify(headers({ 'x-webhook-timestamp': String(Math.floor(clock / 1000) - 9) }), body))).toBe('accepted');
    expect(await reason(verify(headers({ 'x-webhook-timestamp': String(Math.floor(clock / 1000) - 11) }), body))).toBe('stale_timestamp');
  });

  it('forgets ids after their TTL in the memory store', () => {
    const store = new MemoryDedupStore(now);
    expect(store.remember('a', 1000)).toBe(true);
    expect(store.remember('a', 1000)).toBe(false);
    clock += 1001;
    expect(store.remember('a', 1000)).toBe(true);
  });

  it('compares signatures of the right length only', () => {
    expect(verifySignature(SECRET, body, sign(body))).toBe(true);
    expect(verifySignature(SECRET, body, sign(body).slice(2))).toBe(false);
  });
});

describe('Standard Webhooks verification', () => {
  const clock = Date.UTC(2026, 10, 23, 9, 0, 0);
  const now = () => clock;
  const seconds = Math.floor(clock / 1000);
  const body = JSON.stringify({ id: 'evt_std', type: 'message.sent', timestamp: '2026-11-23T09:00:00.000Z', data: { messageId: 'm-1' } });
  const NEW = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
  const OLD = 'whsec_' + Buffer.alloc(32, 2).toString('base64');
  /** The headers a delivery carries, the Standard Webhooks signature made by the standardwebhooks library. */
  const headers = (secrets: string[], overrides: Record<string, string> = {}) => ({
    'webhook-id': 'evt_std',
    'webhook-timestamp': String(seconds),
    'webhook-signature': secrets.map((s) => new StandardWebhook(...key(s)).sign('evt_std', new Date(seconds * 1000), body)).join(' '),
    ...overrides,
  });
  const key = (secret: string): [string] | [Uint8Array, { format: 'raw' }] =>
    secret.startsWith('whsec_') ? [secret] : [Buffer.from(secret, 'utf8'), { format: 'raw' }];
  const reason = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (err: WebhookVerificationError) => err.reason,
    );

  it('accepts webhook-signature made by the library, for whsec_ and plain secrets', async () => {
    expect(verifyStandardSignature(NEW, 'evt_std', String(seconds), body, headers([NEW])['webhook-signature'])).toBe(true);
    expect((await createWebhookVerifier({ secret: NEW, now })(headers([NEW]), Buffer.from(body))).id).toBe('evt_std');
    const plain = 'a-plain-secret-0123456789';
    expect(await reason(createWebhookVerifier({ secret: plain, now })(headers([plain]), body))).toBe('accepted');
  });

  it('accepts either secret of a rotation and refuses a tampered body, id or timestamp', async () => {
    const both = headers([NEW, OLD]);
    expect(await reason(createWebhookVerifier({ secret: OLD, now })(both, body))).toBe('accepted');
    expect(await reason(createWebhookVerifier({ secret: NEW, now })(both, body))).toBe('accepted');
    const verify = createWebhookVerifier({ secret: NEW, now, store: { remember: () => true } });
    expect(await reason(verify(headers([OLD]), body))).toBe('bad_signature');
    expect(await reason(verify(both, body.replace('m-1', 'm-2')))).toBe('bad_signature');
    // The id and the timestamp are signed.
    expect(await reason(verify({ ...both, 'webhook-timestamp': String(seconds - 1) }, body))).toBe('bad_signature');
    expect(await reason(verify({ ...both, 'webhook-id': 'evt_other' }, body))).toBe('bad_signature');
    expect(await reason(verify(headers([NEW], { 'webhook-timestamp': String(seconds - 301) }), body))).toBe('bad_signature');
    expect(await reason(verify({ 'webhook-signature': both['webhook-signature'] }, body))).toBe('missing_header');
  });

  it('refuses a stale timestamp that was signed', async () => {
    const old = seconds - 301;
    const signed = {
      'webhook-id': 'evt_std',
      'webhook-timestamp': String(old),
      'webhook-signature': new StandardWebhook(NEW).sign('evt_std', new Date(old * 1000), body),
    };
    expect(await reason(createWebhookVerifier({ secret: NEW, now })(signed, body))).toBe('stale_timestamp');
  });
});
