import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { vonageSignature } from '../common/http/vonage-signature';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { openApiContract } from './support/openapi-contract';
import { scrape } from './support/metrics';
import { closedPort, fakeTwilio, fakeVonage, type FakeSmsProvider } from './support/sms-fakes';
import { eventually, finalMessage } from './messaging-helpers';

const VARS = { date: '2026-12-01', time: '09:30' };
const SID = 'AC0123456789';
const SIGNATURE_SECRET = 'vonage-signature-secret-for-tests';

/** A real SMTP server (smtp-server) that keeps the recipients of what it receives. */
function smtpServer(received: string[]): Promise<SMTPServer & { port: number }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => {
        received.push(...session.envelope.rcptTo.map((r) => r.address));
        callback();
      });
    },
  }) as SMTPServer & { port: number };
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      server.port = ((server as any).server.address() as AddressInfo).port;
      resolve(server);
    }),
  );
}

describe(`messaging provider failover: Twilio, then Vonage; two SMTP relays (${backendName})`, () => {
  let t: TestPlatform;
  let twilio: FakeSmsProvider;
  let vonage: FakeSmsProvider;
  let smtp: SMTPServer & { port: number };
  const mails: string[] = [];
  const contract = openApiContract();

  beforeAll(async () => {
    [twilio, vonage, smtp] = await Promise.all([fakeTwilio(SID), fakeVonage('vonage-key', 'vonage-secret'), smtpServer(mails)]);
    t = await startTestPlatform({
      SMS_PROVIDER: 'twilio,vonage',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: 'twilio-auth-token',
      TWILIO_FROM: '+15550001111',
      TWILIO_API_URL: twilio.url,
      VONAGE_API_KEY: 'vonage-key',
      VONAGE_API_SECRET: 'vonage-secret',
      VONAGE_FROM: 'Clinic',
      VONAGE_SIGNATURE_SECRET: SIGNATURE_SECRET,
      VONAGE_API_URL: vonage.url,
      PROVIDER_TIMEOUT_MS: '2000',
      PROVIDER_FAILURE_THRESHOLD: '2',
      PROVIDER_COOLDOWN_MS: '600000',
      EMAIL_PROVIDER: 'smtp',
      // The first relay refuses connections: every email goes through the second.
      SMTP_URL: `smtp://127.0.0.1:${await closedPort()},smtp://127.0.0.1:${smtp.port}`,
      EMAIL_FROM: 'Clinic <clinic@example.org>',
    });
  });
  afterAll(async () => {
    await t?.stop();
    await Promise.all([twilio?.close(), vonage?.close(), new Promise((resolve) => smtp?.close(() => resolve(undefined)))]);
  });

  const send = async (patientId: string, channel: 'sms' | 'email' = 'sms') => {
    const res = await t.request('POST', '/v1/messages', { body: { patientId, templateId: 'appointment-reminder', channel, variables: VARS } });
    expect([res.status, res.body.error]).toEqual([201, undefined]);
    return res.body.id as string;
  };
  const reached = (id: string, status: string) =>
    eventually(async () => {
      const m = await t.request('GET', `/v1/messages/${id}`);
      return m.body.status === status ? m.body : undefined;
    }, `status ${status}`);

  /** A delivery receipt as Vonage signs it (the account's method: sha256 HMAC), JSON; each answer as the OpenAPI document describes it. */
  const receipt = async (fields: Record<string, string>, tamper?: (signed: Record<string, string>) => void) => {
    const signed: Record<string, string> = {
      msisdn: '31612345671',
      to: 'Clinic',
      'network-code': '20416',
      price: '0.03330000',
      scts: '2612010930',
      'api-key': 'vonage-key',
      'message-timestamp': '2026-12-01 09:30:00',
      timestamp: String(Math.floor(Date.now() / 1000)),
      nonce: randomUUID(),
      ...fields,
    };
    signed.sig = vonageSignature(SIGNATURE_SECRET, signed, 'sha256');
    tamper?.(signed);
    const res = await t.request('POST', '/v1/providers/vonage/status', { token: null, body: signed });
    contract.check('POST', '/v1/providers/vonage/status', res);
    return res;
  };

  it('[MSG-017] fails a message Twilio rejects for its number, without passing it to Vonage', async () => {
    const before = vonage.calls.length;
    const done = await finalMessage(t, await send('p-1002'));
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^RECIPIENT_INVALID: Twilio 400 code 21211/);
    expect(done.provider).toBeUndefined();
    expect(vonage.calls.length).toBe(before);
  });

  it('[MSG-017] sends through Twilio while it works and records it as the provider', async () => {
    const sent = await reached(await send('p-1001'), 'sent');
    expect(sent.provider).toBe('twilio');
  });

  it('[MSG-017, MSG-018] with Twilio down (503, then no answer) sends through Vonage, opens the circuit, and shows it in /metrics', async () => {
    twilio.mode = 'unavailable';
    const first = await reached(await send('p-1001'), 'sent');
    expect(first.provider).toBe('vonage');
    expect(first.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'sent']);
    twilio.mode = 'hang';
    const second = await reached(await send('p-1001'), 'sent');
    expect(second.provider).toBe('vonage');
    const call = vonage.calls.find((form) => form.get('client-ref') === second.id)!;
    expect(call.get('to')).toBe('31612345671');
    expect(call.get('text')).toBe(second.body);

    const metrics = await scrape(`${t.url}/metrics`);
    expect(metrics.total('caregraph_provider_circuit_state', { provider: 'twilio', channel: 'sms' })).toBe(2);
    expect(metrics.total('caregraph_provider_circuit_state', { provider: 'vonage', channel: 'sms' })).toBe(0);
    expect(metrics.total('caregraph_provider_sends_total', { provider: 'twilio', channel: 'sms', outcome: 'failed' })).toBe(2);
    expect(metrics.total('caregraph_provider_sends_total', { provider: 'twilio', channel: 'sms', outcome: 'rejected' })).toBe(1);
    expect(metrics.total('caregraph_provider_sends_total', { provider: 'vonage', channel: 'sms', outcome: 'sent' })).toBe(2);

    // Open: Twilio is skipped, not called.
    twilio.mode = 'ok';
    const calls = twilio.calls.length;
    expect((await reached(await send('p-1001'), 'sent')).provider).toBe('vonage');
    expect(twilio.calls.length).toBe(calls);
    expect((await scrape(`${t.url}/metrics`)).total('caregraph_provider_sends_total', { provider: 'twilio', channel: 'sms', outcome: 'skipped' })).toBe(1);
  });

  it("[MSG-016, MSG-020] follows Vonage's signed delivery receipts and refuses forged or old ones", async () => {
    const delivered = await reached(await send('p-1001'), 'sent');
    expect(delivered.provider).toBe('vonage');
    const vonageId = vonageIdOf(delivered.id);

    expect((await receipt({ messageId: vonageId, status: 'failed', 'err-code': '9' }, (s) => (s.status = 'delivered'))).status).toBe(403);
    expect((await receipt({ messageId: vonageId, status: 'failed', timestamp: String(Math.floor(Date.now() / 1000) - 3600) })).status).toBe(403);
    expect((await receipt({ messageId: vonageId, status: 'delivered', 'err-code': '0' })).status).toBe(204);
    // Duplicate and late receipts change nothing.
    expect((await receipt({ messageId: vonageId, status: 'delivered', 'err-code': '0' })).status).toBe(204);
    expect((await receipt({ messageId: vonageId, status: 'failed', 'err-code': '9' })).status).toBe(204);
    expect((await receipt({ messageId: '0Bunknown', status: 'delivered' })).status).toBe(204);
    const done = (await t.request('GET', `/v1/messages/${delivered.id}`)).body;
    expect(done.status).toBe('delivered');
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'sent', 'delivered']);

    const failing = await reached(await send('p-1001'), 'sent');
    expect((await receipt({ messageId: vonageIdOf(failing.id), status: 'failed', 'err-code': '9' })).status).toBe(204);
    const failed = (await t.request('GET', `/v1/messages/${failing.id}`)).body;
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe('RECIPIENT_INVALID: vonage reported failed (error 9)');

    const graphql = await t.graphql(`query($id: ID!) { message(id: $id) { provider status error } }`, { id: failing.id });
    expect(graphql.body.data.message).toEqual({ provider: 'vonage', status: 'failed', error: 'RECIPIENT_INVALID: vonage reported failed (error 9)' });
  });

  it('[MSG-017] sends email through the second SMTP relay when the first refuses connections', async () => {
    const done = await finalMessage(t, await send('p-1003', 'email'));
    expect(done.status).toBe('delivered');
    expect(done.provider).toBe('smtp2');
    expect(mails).toContain('chloe.bakker@example.org');
    const metrics = await scrape(`${t.url}/metrics`);
    expect(metrics.total('caregraph_provider_sends_total', { provider: 'smtp', channel: 'email', outcome: 'failed' })).toBe(1);
    expect(metrics.total('caregraph_provider_sends_total', { provider: 'smtp2', channel: 'email', outcome: 'sent' })).toBe(1);
  });

  /** The id Vonage gave the message (its fake answers each call with the next one). */
  function vonageIdOf(messageId: string): string {
    const n = vonage.calls.findIndex((form) => form.get('client-ref') === messageId) + 1;
    expect(n).toBeGreaterThan(0);
    return `0B${String(n).padStart(14, '0')}`;
  }
});
