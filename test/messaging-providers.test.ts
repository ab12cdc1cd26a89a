import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { twilioSignature } from '../common/http/twilio-signature';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { openApiContract } from './support/openapi-contract';
import { eventually, finalMessage } from './messaging-helpers';

const VARS = { date: '2026-12-01', time: '09:30' };
const SID = 'AC0123456789';
const TOKEN = 'twilio-auth-token-for-tests';

interface TwilioCall {
  auth: string | undefined;
  form: URLSearchParams;
  sid: string;
}

/** A stand-in for Twilio's Messages API: records each call; numbers ending in 0000 are refused as invalid. */
function fakeTwilio(calls: TwilioCall[]): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== `/2010-04-01/Accounts/${SID}/Messages.json`) {
        res.writeHead(404).end();
        return;
      }
      const form = new URLSearchParams(raw);
      const sid = `SM${String(calls.length + 1).padStart(32, '0')}`;
      calls.push({ auth: req.headers.authorization, form, sid });
      res.setHeader('content-type', 'application/json');
      if (form.get('To')!.endsWith('0000')) {
        res.writeHead(400).end(JSON.stringify({ code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 }));
        return;
      }
      res.writeHead(201).end(JSON.stringify({ sid, status: 'queued' }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

interface Mail {
  to: string[];
  raw: string;
}

/** A real SMTP server (smtp-server) that keeps what it receives and refuses one address with 550. */
function smtpServer(mails: Mail[]): Promise<SMTPServer & { port: number }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address === 'anna.devries@example.org') callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk) => (raw += chunk));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
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

describe(`messaging providers: Twilio and SMTP (${backendName})`, () => {
  let t: TestPlatform;
  let twilio: http.Server;
  let smtp: SMTPServer & { port: number };
  const calls: TwilioCall[] = [];
  const mails: Mail[] = [];

  beforeAll(async () => {
    twilio = await fakeTwilio(calls);
    smtp = await smtpServer(mails);
    t = await startTestPlatform({
      SMS_PROVIDER: 'twilio',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      TWILIO_FROM: '+15550001111',
      TWILIO_API_URL: `http://127.0.0.1:${(twilio.address() as AddressInfo).port}`,
      EMAIL_PROVIDER: 'smtp',
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      EMAIL_FROM: 'Clinic <clinic@example.org>',
    });
  });
  afterAll(async () => {
    await t?.stop();
    await new Promise((resolve) => twilio?.close(resolve));
    await new Promise((resolve) => smtp?.close(() => resolve(undefined)));
  });

  const contract = openApiContract();
  /** A Twilio webhook as Twilio signs it: HMAC-SHA1 over the URL and sorted form fields; each answer as the OpenAPI document describes it. */
  const twilioPost = async (path: string, fields: Record<string, string>, signature?: string) => {
    const res = await t.request('POST', path, {
      token: null,
      rawBody: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature ?? twilioSignature(TOKEN, `${t.url}${path}`, fields) },
    });
    contract.check('POST', path, res);
    return res;
  };

  it('[MSG-016, MSG-002] sends SMS through the Twilio REST API and follows its signed status callbacks', async () => {
    const res = await t.request('POST', '/v1/messages', { body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS } });
    expect(res.status).toBe(201);
    const call = await eventually(async () => calls.find((c) => c.form.get('To') === '+31612345671'), 'the Twilio API call');
    expect(call.auth).toBe(`Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
    expect(call.form.get('From')).toBe('+15550001111');
    expect(call.form.get('Body')).toBe(res.body.body);
    const sent = await eventually(async () => {
      const m = await t.request('GET', `/v1/messages/${res.body.id}`);
      return m.body.status === 'sent' ? m.body : undefined;
    }, 'status sent');
    expect(sent.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'sent']);
    const { sid } = call;

    const forged = await twilioPost('/v1/providers/twilio/status', { MessageSid: sid, MessageStatus: 'failed' }, 'bm90IGEgc2lnbmF0dXJl');
    expect(forged.status).toBe(403);
    expect((await twilioPost('/v1/providers/twilio/status', { MessageSid: sid, MessageStatus: 'delivered', AccountSid: SID })).status).toBe(204);
    // Duplicate and late callbacks change nothing.
    expect((await twilioPost('/v1/providers/twilio/status', { MessageSid: sid, MessageStatus: 'delivered', AccountSid: SID })).status).toBe(204);
    expect((await twilioPost('/v1/providers/twilio/status', { MessageSid: sid, MessageStatus: 'sent' })).status).toBe(204);
    expect((await twilioPost('/v1/providers/twilio/status', { MessageSid: sid, MessageStatus: 'undelivered', ErrorCode: '30003' })).status).toBe(204);
    expect((await twilioPost('/v1/providers/twilio/status', { MessageSid: 'SMunknown', MessageStatus: 'delivered' })).status).toBe(204);
    const done = (await t.request('GET', `/v1/messages/${res.body.id}`)).body;
    expect(done.status).toBe('delivered');
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'sent', 'delivered']);
  });

  it('fails a message Twilio refuses', async () => {
    const res = await t.request('POST', '/v1/messages', { body: { patientId: 'p-1002', templateId: 'appointment-reminder', channel: 'sms', variables: VARS } });
    const done = await finalMessage(t, res.body.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/21211/);
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'failed']);
  });

  it('[MSG-016] takes signed inbound SMS from Twilio and refuses unsigned ones', async () => {
    const inbound = { From: '+31612345671', To: '+15550001111', Body: 'STOP', MessageSid: 'SMin1', AccountSid: SID };
    const unsigned = await twilioPost('/v1/inbound/sms', inbound, 'bm9wZQ==');
    expect(unsigned.status).toBe(403);
    const ok = await twilioPost('/v1/inbound/sms', inbound);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/xml/);
    expect((await t.request('GET', '/v1/patients/p-1001')).body.preferences.channels.sms).toBe(false);
    const stranger = await twilioPost('/v1/inbound/sms', { ...inbound, From: '+4915112345678', MessageSid: 'SMin2' });
    expect(stranger.status).toBe(200);
    const json = await t.request('POST', '/v1/inbound/sms', { token: null, body: inbound });
    expect(json.status).toBe(415);
    contract.check('POST', '/v1/inbound/sms', json);
  });

  it('[MSG-016] sends email over SMTP to a real SMTP server, and fails a refused recipient', async () => {
    const res = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: { ...VARS, location: '<Room & 2>' } },
    });
    expect(res.status).toBe(201);
    const done = await finalMessage(t, res.body.id);
    expect(done.status).toBe('delivered');
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'sent', 'delivered']);
    const mail = mails.find((m) => m.to.includes('chloe.bakker@example.org'))!;
    expect(mail.raw).toMatch(/^Subject: Your appointment on 2026-12-01/m);
    expect(mail.raw).toMatch(/^From: Clinic <clinic@example.org>/m);
    const decoded = mail.raw.replace(/=\r?\n/g, ''); // quoted-printable soft line breaks
    expect(decoded).toContain('at <Room & 2>. Reply C'); // text part: as given
    expect(decoded).toContain('<p>Reminder: your appointment is on 2026-12-01 at 09:30 at &lt;Room &amp; 2&gt;.'); // HTML part: escaped
    expect(mail.raw.toLowerCase()).toContain(`x-caregraph-message-id: ${res.body.id}`);

    const refused = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'email', variables: VARS },
    });
    const failed = await finalMessage(t, refused.body.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/SMTP|refused/);
  });
});
