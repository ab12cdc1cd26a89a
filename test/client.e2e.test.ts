import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import type { Browser } from 'playwright-core';
import WebSocket from 'ws';
import { projectRoot } from '../common/paths';
import { browserIt, HAVE_CHROMIUM, launchChromium } from './support/chromium';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import {
  CareGraphError,
  createGraphQLClient,
  createRestClient,
  createSubscriptionClient,
  MessagesDocument,
  MessageStatusChangedDocument,
  SendMessageDocument,
  type MessageStatusChangedSubscription,
  type SubscriptionClient,
} from '../clients/typescript/src';
import { createWebhookVerifier, type WebhookVerificationError } from '../clients/typescript/src/webhooks';

const SEND = { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms' as const, variables: { date: '2026-12-01', time: '09:30' } };
const STATUS_ORDER = ['queued', 'sending', 'sent', 'delivered'];
/** Statuses reported in order, ending with delivered. */
const inOrder = (statuses: string[]) => statuses.at(-1) === 'delivered' && statuses.join() === STATUS_ORDER.filter((s) => statuses.includes(s)).join();

async function until<T>(what: string, check: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A TCP relay in front of the gateway whose connections the test can cut, as a network drop would. */
async function startRelay(target: URL): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => (sockets.delete(socket), client.destroy(), upstream.destroy()));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => sockets.forEach((s) => s.destroy()),
    close: () => new Promise((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))),
  };
}

describe(`TypeScript client package against the platform (${backendName})`, () => {
  let t: TestPlatform;
  let token: string;
  const cleanups: (() => unknown)[] = [];

  let example: Server;
  let exampleUrl: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    // The example page as `vite build` makes it, on its own origin (so the API is called cross-origin, allowed by CORS_ORIGINS).
    const out = mkdtempSync(join(tmpdir(), 'caregraph-example-'));
    execFileSync(
      process.execPath,
      [
        join(projectRoot(), 'node_modules/vite/bin/vite.js'),
        'build',
        '--config',
        'clients/typescript/example/vite.config.mts',
        '--outDir',
        out,
        '--logLevel',
        'error',
      ],
      { cwd: projectRoot(), stdio: 'inherit' },
    );
    const app = express();
    app.use(express.static(out));
    example = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => example.once('listening', resolve));
    exampleUrl = `http://127.0.0.1:${(example.address() as AddressInfo).port}`;
    t = await startTestPlatform({
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms,100ms',
      WEBHOOK_TIMEOUT_MS: '5000',
      CORS_ORIGINS: exampleUrl,
      SIM_SEND_DELAY_MS: '300',
      SIM_DELIVER_DELAY_MS: '600',
    });
    token = await t.token({ roles: ['admin'] });
    if (HAVE_CHROMIUM) browser = await launchChromium();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await new Promise((resolve) => example?.close(resolve));
  });

  it('runs typed GraphQL operations and reports contract errors', async () => {
    const client = createGraphQLClient({ baseUrl: t.url, token, tenantId: 'demo' });
    const { sendMessage } = await client.request(SendMessageDocument, { input: SEND });
    expect(sendMessage.status).toBe('queued');
    const { messages } = await client.request(MessagesDocument, { patientId: 'p-1001', limit: 100 });
    expect(messages.data.map((m) => m.id)).toContain(sendMessage.id);
    expect(messages.pagination.total).toBeGreaterThan(0);

    const anonymous = createGraphQLClient({ baseUrl: t.url, token: 'not-a-jwt' });
    const refused = (await anonymous.request(MessagesDocument, {}).then(
      () => undefined,
      (err: unknown) => err,
    )) as CareGraphError;
    expect([refused instanceof CareGraphError, refused.status, refused.code]).toEqual([true, 401, 'UNAUTHENTICATED']);
  });

  it('calls REST typed from schema/openapi.json, with the token from a function', async () => {
    let calls = 0;
    const rest = createRestClient({ baseUrl: t.url, token: () => (calls++, token) });
    const sent = await rest.POST('/v1/messages', { body: SEND });
    expect(sent.response.status).toBe(201);
    const id = sent.data!.id;
    const read = await rest.GET('/v1/messages/{id}', { params: { path: { id } } });
    expect(read.data?.id).toBe(id);
    const missing = await rest.GET('/v1/messages/{id}', { params: { path: { id: 'no-such-message' } } });
    expect([missing.response.status, (missing.error as { error: { code: string } }).error.code]).toEqual([404, 'NOT_FOUND']);
    expect(calls).toBe(3);
  });

  /** Sends messages until the subscription reports one (the socket may still be connecting), then returns the statuses seen. */
  async function statusesAfterSend(seen: MessageStatusChangedSubscription['messageStatusChanged'][]): Promise<string[]> {
    const ids: string[] = [];
    const heard = () => seen.find((m) => ids.includes(m.id));
    for (let i = 0; i < 40 && !heard(); i++) {
      ids.push((await t.request('POST', '/v1/messages', { body: SEND, token })).body.id);
      await until('a status', () => heard(), 500).catch(() => undefined);
    }
    const id = (await until('a status change of a message sent now', heard)).id;
    await until('delivered', () => seen.some((m) => m.id === id && m.status === 'delivered'));
    return seen.filter((m) => m.id === id).map((m) => m.status);
  }

  function subscribeStatuses(client: SubscriptionClient, errors: unknown[]) {
    const seen: MessageStatusChangedSubscription['messageStatusChanged'][] = [];
    const stop = client.subscribe(
      MessageStatusChangedDocument,
      { patientId: 'p-1001' },
      {
        next: (result) => result.data && seen.push(result.data.messageStatusChanged),
        error: (err) => errors.push(err),
      },
    );
    cleanups.push(stop);
    return seen;
  }

  it('subscribes over graphql-ws, reconnects after a network drop with backoff and resumes', async () => {
    const relay = await startRelay(new URL(t.url));
    cleanups.push(() => relay.close());
    const states: string[] = [];
    const client = createSubscriptionClient({
      baseUrl: relay.url,
      token,
      tenantId: 'demo',
      webSocketImpl: WebSocket,
      retryDelayMs: 50,
      onStateChange: (s) => states.push(s),
    });
    cleanups.push(() => client.dispose());
    const errors: unknown[] = [];
    const seen = subscribeStatuses(client, errors);
    expect(inOrder(await statusesAfterSend(seen))).toBe(true);

    relay.cut();
    await until('a reconnect', () => states.filter((s) => s === 'connected').length >= 2);
    expect(inOrder(await statusesAfterSend(seen))).toBe(true);
    expect(errors).toEqual([]);
  });

  it('re-authenticates with a fresh token when the server closes an expired session (4401)', async () => {
    const issued: string[] = [];
    // The first token expires in 2 s; the server then closes the socket and the helper asks for a new one.
    const fresh = async () => (issued.push(await t.token({ roles: ['admin'], ttlSeconds: issued.length === 0 ? 2 : 600 })), issued.at(-1)!);
    const closes: unknown[] = [];
    const client = createSubscriptionClient({
      baseUrl: t.url,
      token: fresh,
      webSocketImpl: WebSocket,
      retryDelayMs: 50,
      onStateChange: (s, d) => s === 'closed' && closes.push(d),
    });
    cleanups.push(() => client.dispose());
    const errors: unknown[] = [];
    const seen = subscribeStatuses(client, errors);
    await until('the expiry close', () => closes.some((c) => (c as { code?: number }).code === 4401), 10_000);
    await until('a second token', () => issued.length >= 2);
    expect(inOrder(await statusesAfterSend(seen))).toBe(true);
    expect(errors).toEqual([]);
  });

  it('verifies real webhook deliveries: signature, timestamp, one handling per event id', async () => {
    const verify = createWebhookVerifier({ secret: 'whsec-client-test-0123456789' });
    const outcomes: string[] = [];
    const requests: { headers: Record<string, string | string[] | undefined>; body: Buffer }[] = [];
    const server: Server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        requests.push({ headers: req.headers, body });
        verify(req.headers, body).then(
          (event) => {
            outcomes.push(`ok ${event.type}`);
            res.writeHead(204).end();
          },
          (err: WebhookVerificationError) => {
            outcomes.push(err.reason);
            res.writeHead(err.status).end();
          },
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;

    const rest = createRestClient({ baseUrl: t.url, token });
    const hook = await rest.POST('/v1/webhooks', { body: { url, events: ['message.delivered'], secret: 'whsec-client-test-0123456789' } });
    expect(hook.response.status).toBe(201);
    cleanups.push(() => rest.DELETE('/v1/webhooks/{id}', { params: { path: { id: hook.data!.id } } }));
    await rest.POST('/v1/messages', { body: SEND });
    await until('a delivery', () => outcomes.includes('ok message.delivered'));

    // The same delivery again (a retry or a replay) is handled once; a changed body is refused.
    const [first] = requests;
    const headers = Object.fromEntries(Object.entries(first.headers).filter(([name]) => name.startsWith('x-webhook-') || name === 'content-type')) as Record<
      string,
      string
    >;
    const replay = (body: Buffer) => fetch(url, { method: 'POST', headers, body });
    expect((await replay(first.body)).status).toBe(200);
    expect((await replay(Buffer.from(first.body.toString().replace('delivered', 'failed')))).status).toBe(400);
    expect(outcomes.slice(-2)).toEqual(['duplicate', 'bad_signature']);
  });

  browserIt('example page')('example page: signs in with a token, lists messages and shows a live status change in Chromium', async () => {
    const before = (await t.request('POST', '/v1/messages', { body: SEND, token })).body.id;
    const context = await browser!.newContext();
    cleanups.push(() => context.close());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${exampleUrl}/?api=${encodeURIComponent(t.url)}`);
    await page.getByLabel('Bearer token').fill(token);
    await page.getByLabel('Tenant id (optional)').fill('demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator(`tr[data-message-id="${before}"]`).waitFor();
    await page.locator('#state[data-state="connected"]').waitFor();
    // Sent over REST while the page is subscribed: the page shows it move on to delivered.
    // (Sent until one is seen: the server may take the subscription a moment after the socket is up.)
    let id = '';
    for (let i = 0; i < 20 && !(id && (await page.locator(`tr[data-message-id="${id}"]`).count())); i++) {
      id = (await t.request('POST', '/v1/messages', { body: SEND, token })).body.id;
      await page.waitForTimeout(250);
    }
    await page.locator(`tr[data-message-id="${id}"][data-status="delivered"]`).waitFor();
    await page.screenshot({ path: join(projectRoot(), 'test-artifacts', 'client-example.png') });
    expect(errors).toEqual([]);
  });
});
