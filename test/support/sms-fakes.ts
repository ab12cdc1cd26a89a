import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How a fake provider answers: as it should, with a 503, or not at all (the caller's time limit runs out). */
type FakeMode = 'ok' | 'unavailable' | 'hang';

export interface FakeSmsProvider {
  url: string;
  /** Each accepted or refused call's form, in order. */
  calls: URLSearchParams[];
  mode: FakeMode;
  close(): Promise<void>;
}

/**
 * A fake SMS API on a real port, answering as the provider's public documentation says: `answer` turns a call's
 * form into a status and JSON body when the mode is `ok`. Hanging calls are ended when the server closes.
 */
async function fakeProvider(path: string, answer: (form: URLSearchParams, n: number) => [number, unknown]): Promise<FakeSmsProvider> {
  const hanging = new Set<http.ServerResponse>();
  const mode: FakeMode = 'ok';
  const fake = { calls: [] as URLSearchParams[], mode } as FakeSmsProvider;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== path) {
        res.writeHead(404).end();
        return;
      }
      if (fake.mode === 'hang') {
        hanging.add(res);
        return;
      }
      if (fake.mode === 'unavailable') {
        res.writeHead(503, { 'content-type': 'text/html' }).end('<html>Service Unavailable</html>');
        return;
      }
      const form = new URLSearchParams(raw);
      fake.calls.push(form);
      const [status, body] = answer(form, fake.calls.length);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return fake;
}

/** Twilio's Messages API: 201 with a `sid`; a number ending in 0000 is refused with 400 code 21211 (not a valid phone number). */
export function fakeTwilio(accountSid: string): Promise<FakeSmsProvider> {
  return fakeProvider(`/2010-04-01/Accounts/${accountSid}/Messages.json`, (form, n) =>
    form.get('To')!.endsWith('0000')
      ? [400, { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 }]
      : [201, { sid: `SM${String(n).padStart(32, '0')}`, status: 'queued' }],
  );
}

/**
 * Vonage's SMS API (`POST /sms/json`): always 200, a status per message part. Wrong credentials → status 4;
 * a number ending in 0000 → status 6 (invalid message: an unrecognised number prefix); otherwise status 0 with a message id.
 */
export function fakeVonage(apiKey: string, apiSecret: string): Promise<FakeSmsProvider> {
  return fakeProvider('/sms/json', (form, n) => {
    if (form.get('api_key') !== apiKey || form.get('api_secret') !== apiSecret)
      return [200, { 'message-count': '1', messages: [{ status: '4', 'error-text': 'Bad Credentials' }] }];
    if (form.get('to')!.endsWith('0000')) return [200, { 'message-count': '1', messages: [{ status: '6', 'error-text': 'Unroutable message - rejected' }] }];
    const id = `0B${String(n).padStart(14, '0')}`;
    return [200, { 'message-count': '1', messages: [{ to: form.get('to'), 'message-id': id, status: '0', 'remaining-balance': '10.0', network: '20416' }] }];
  });
}

/** A port nothing listens on (a provider whose connections are refused). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
