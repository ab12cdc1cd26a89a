import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserIt as browserItFor, HAVE_CHROMIUM, launchChromium } from './support/chromium';
import { projectRoot } from '../common/paths';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { finalMessage } from './messaging-helpers';
import { startReceiver, verifySignature, waitFor, type Receiver } from './webhook-receiver';

/**
 * The admin dashboard in a real browser (Debian's Chromium driven by
 * playwright-core) against the real platform and a real HTTPS receiver.
 */
// Browser globals used inside page.evaluate callbacks, which run in Chromium (this file is type-checked without DOM types).
declare const window: any, document: any, location: any, getComputedStyle: any, MutationObserver: any;

const browserIt = browserItFor('admin dashboard');

const ARTIFACTS = join(projectRoot(), 'test-artifacts', 'admin');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

describe(`admin dashboard (${backendName})`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  let browser: Browser | undefined;
  let token: string;
  const contexts: BrowserContext[] = [];
  let consoleErrors: string[] = [];

  beforeAll(async () => {
    // dist/admin is the dashboard as `npm run build` makes it from the current sources (the e2e project's globalSetup rebuilds it when stale).
    mkdirSync(ARTIFACTS, { recursive: true });
    receiver = await startReceiver();
    t = await startTestPlatform({
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_CA_FILE: receiver.caFile,
      // Slow enough that a sent message is seen before it is delivered.
      SIM_SEND_DELAY_MS: '300',
      SIM_DELIVER_DELAY_MS: '1500',
    });
    token = await t.token({ sub: 'ops@example.com', tenants: ['demo'], roles: ['admin'] });
    if (HAVE_CHROMIUM) browser = await launchChromium();
  });
  afterEach(async () => {
    // Pages first, so their WebSockets are closed before the server stops.
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await receiver?.close();
  });

  async function newPage(viewport = DESKTOP): Promise<Page> {
    const context = await browser!.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    consoleErrors = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (err) => consoleErrors.push(`pageerror: ${err.message}`));
    return page;
  }

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${t.url}/admin/`);
    await page.getByLabel('Bearer token').fill(token);
    await page.getByLabel('Tenant id (optional)').fill('demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook subscriptions' }).waitFor();
    await page.locator('.live-state[data-state="live"]').waitFor();
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  async function createWebhook(path: string, events = ['message.sent']): Promise<string> {
    const res = await t.request('POST', '/v1/webhooks', { body: { url: receiver.url(path), events, secret: 'whsec-admin-test-0123456789' }, token });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  /** Fills the message form (the appointment reminder to p-1001) and sends it; the new message's id, from the status line. */
  async function sendFromForm(page: Page, status: 'queued' | 'scheduled', sendAt?: string): Promise<string> {
    const template = await page.locator('select[name="templateId"] option', { hasText: '(appointment-reminder, en)' }).getAttribute('value');
    await page.getByLabel('Template', { exact: true }).selectOption(template);
    await page.getByLabel('Patient id').fill('p-1001');
    await page.getByLabel('date').fill('2026-12-01');
    await page.getByLabel('time').fill('09:30');
    if (sendAt) await page.getByLabel('Send at (optional)').fill(sendAt);
    await page.getByRole('button', { name: 'Send message' }).click();
    const line = new RegExp(`Message (\\S+) ${status}`);
    const text = await page.getByRole('status').filter({ hasText: line }).textContent();
    return line.exec(text!)![1];
  }

  it('serves the dashboard without a token, with a strict Content-Security-Policy', async () => {
    const page = await fetch(`${t.url}/admin/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ws://${new URL(t.url).host} wss://${new URL(t.url).host}`);
    expect(csp).not.toContain('unsafe-inline');
    const html = await page.text();
    const script = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await fetch(`${t.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    // The API behind it still wants a token.
    expect((await t.request('POST', '/graphql', { body: { query: '{ webhooks { data { id } } }' }, token: null })).status).toBe(401);
    expect((await fetch(`${t.url}/admin/nope.js`)).status).toBe(404);
    const bare = await fetch(`${t.url}/admin`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/admin/']);
  });

  browserIt('signs in, creates a subscription, sends a test event and shows the attempt with payload and signature; rotates the secret', async () => {
    const page = await newPage();
    await signIn(page);
    await shot(page, '01-webhooks-empty');

    const url = receiver.url('/ui');
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel('message.delivered').check();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    const secret = (await page.locator('[data-secret]').textContent())!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByRole('link', { name: url }).first().click();
    await page.getByRole('heading', { level: 1, name: `Subscription ${url}` }).waitFor();

    await page.getByLabel('Event type').selectOption('message.delivered');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'Test event message.delivered: delivered (HTTP 200' }).waitFor();
    const [hook] = receiver.received('/ui');
    expect(verifySignature(secret, hook.raw, hook.headers['x-webhook-signature'])).toBe(true);

    const entry = page.locator(`details[data-delivery-id]`).filter({ hasText: 'message.delivered' });
    await entry.locator('summary').click();
    const attempt = entry.locator('tr[data-attempt="1"]');
    expect(await attempt.locator('td[data-label="Status code"]').textContent()).toBe('200');
    expect(await attempt.locator('td[data-label="Result"]').textContent()).toBe('succeeded');
    expect(await attempt.locator('td[data-label="X-Webhook-Signature"]').textContent()).toBe(hook.headers['x-webhook-signature']);
    expect(await entry.locator('pre.payload').textContent()).toBe(hook.raw.toString('utf8'));
    await shot(page, '02-webhook-attempt');

    // Rotation: the new secret is shown once and signs the next delivery.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Secret rotated.' }).waitFor();
    const rotated = (await page.locator('[data-secret]').textContent())!;
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'Test event message.delivered: delivered' }).waitFor();
    const latest = receiver.received('/ui').at(-1)!;
    expect(verifySignature(rotated, latest.raw, latest.headers['x-webhook-signature'])).toBe(true);
    await page.locator('details[data-delivery-id]').nth(1).waitFor();
    expect(consoleErrors).toEqual([]);
  });

  browserIt('shows a message sent from the dashboard turn delivered live, without a reload', async () => {
    const page = await newPage();
    await signIn(page);
    await page.getByRole('link', { name: 'Messages' }).click();
    await page.getByRole('heading', { level: 1, name: 'Messages' }).waitFor();

    // Every status the row shows, recorded in the page; and a marker a reload would wipe.
    await page.evaluate(() => {
      const seen: string[] = [];
      window.statusesSeen = seen;
      new MutationObserver(() => {
        for (const cell of document.querySelectorAll('tr[data-message-id] .status-cell')) {
          const entry = `${cell.closest('tr').dataset.messageId}:${cell.dataset.status}`;
          if (!seen.includes(entry)) seen.push(entry);
        }
      }).observe(document.getElementById('message-log'), { subtree: true, childList: true });
    });

    const id = await sendFromForm(page, 'queued');

    await page.locator(`tr[data-message-id="${id}"] .status-cell[data-status="delivered"]`).waitFor();
    const seen: string[] = (await page.evaluate(() => window.statusesSeen)).filter((s: string) => s.startsWith(`${id}:`));
    expect(seen[0]).not.toBe(`${id}:delivered`); // the row was there before delivery, and changed in place
    expect(seen.at(-1)).toBe(`${id}:delivered`);
    await page
      .locator('ol.feed li')
      .filter({ hasText: `MESSAGE_DELIVERED ${id}` })
      .waitFor();
    expect((await t.request('GET', `/v1/messages/${id}`, { token })).body.status).toBe('delivered');
    await shot(page, '03-messages-live');
    expect(consoleErrors).toEqual([]);
  });

  browserIt('schedules a message from the dashboard and cancels it from the log', async () => {
    const page = await newPage();
    await signIn(page);
    await page.getByRole('link', { name: 'Messages' }).click();
    await page.getByRole('heading', { level: 1, name: 'Messages' }).waitFor();
    // Two hours ahead, in the browser's local wall-clock time (what a datetime-local field holds).
    const later = await page.evaluate(() => {
      const at = new Date(Date.now() + 2 * 3_600_000);
      return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    });
    const id = await sendFromForm(page, 'scheduled', later);
    await page.locator(`tr[data-message-id="${id}"] .status-cell[data-status="scheduled"]`).waitFor();
    await shot(page, '03b-message-scheduled');
    await page.getByRole('button', { name: `Cancel message ${id}` }).click();
    await page.locator(`tr[data-message-id="${id}"] .status-cell[data-status="cancelled"]`).waitFor();
    expect(await page.getByRole('button', { name: `Cancel message ${id}` }).count()).toBe(0);
    const stored = (await t.request('GET', `/v1/messages/${id}`, { token })).body;
    expect(stored.status).toBe('cancelled');
    expect(stored.statusHistory.map((s: { status: string }) => s.status)).toEqual(['scheduled', 'cancelled']);
    expect(consoleErrors).toEqual([]);
  });

  browserIt('shows a subscription disabled after failing, its alert, and re-enables it with the keyboard only', async () => {
    receiver.behave('/down', () => ({ status: 500, body: 'down for maintenance' }));
    const id = await createWebhook('/down');

    const page = await newPage();
    await signIn(page);
    await page.goto(`${t.url}/admin/#/webhooks/${id}`);
    await page.getByRole('heading', { level: 1, name: `Subscription ${receiver.url('/down')}` }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'failed (HTTP 500' }).waitFor();
    // The last retry fails: the page learns it from the live webhook.disabled event.
    await page.locator('#webhook-facts .badge-disabled').waitFor();
    await page.getByRole('button', { name: 'Re-enable' }).waitFor();
    expect(await page.locator('#webhook-facts').textContent()).toContain('6 failed attempts in a row');
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page
      .locator('tr[data-alert-id]')
      .filter({ hasText: receiver.url('/down') })
      .waitFor();
    await shot(page, '04-alerts');
    expect(consoleErrors).toEqual([]);

    // A real send while the subscription is disabled: its message.sent is what the recovery below re-sends.
    const missed = await t.request('POST', '/v1/messages', {
      token,
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-11-23', time: '09:30' } },
    });
    expect(missed.status).toBe(201);
    expect((await finalMessage(t, missed.body.id, token)).status).toBe('delivered');

    // Keyboard only, from a fresh tab: sign in, find the subscription, re-enable it.
    receiver.behave('/down', () => ({ status: 200 }));
    const keys = await newPage();
    await keys.goto(`${t.url}/admin/`);
    await keys.keyboard.insertText(token); // the token field has the focus
    await keys.keyboard.press('Tab');
    await keys.keyboard.type('demo');
    await keys.keyboard.press('Enter');
    await keys.getByRole('heading', { level: 1, name: 'Webhook subscriptions' }).waitFor();
    await tabTo(keys, `a[href="#/webhooks/${id}"]`);
    await keys.keyboard.press('Enter');
    await keys.getByRole('heading', { level: 1, name: `Subscription ${receiver.url('/down')}` }).waitFor();
    await tabTo(keys, 'button:text-is("Re-enable")');
    expect(await keys.evaluate(() => getComputedStyle(document.activeElement).outlineStyle)).not.toBe('none');
    await keys.keyboard.press('Space');
    await keys.getByRole('status').filter({ hasText: 'Subscription re-enabled' }).waitFor();
    await keys.locator('#webhook-facts .badge-active').waitFor();
    // The focus stays on the button, which now offers the opposite action.
    expect(await keys.evaluate(() => document.activeElement.textContent)).toBe('Disable');
    await shot(keys, '05-reenabled-keyboard');
    expect((await t.request('GET', `/v1/webhooks/${id}`, { token })).body.status).toBe('active');

    // Re-send what it missed (the since field defaults to a day ago): the send's event arrives with its own id.
    const missedAt = (hook: { body: { type: string; data: { messageId?: string } } }) =>
      hook.body.type === 'message.sent' && hook.body.data.messageId === missed.body.id;
    expect(receiver.received('/down').filter(missedAt)).toHaveLength(0);
    await tabTo(keys, 'button:text-is("Re-send missed events")');
    await keys.keyboard.press('Enter');
    await keys
      .getByRole('status')
      .filter({ hasText: /Recovery done: [1-9]\d* events? queued again/ })
      .waitFor();
    await waitFor('the missed event', () => receiver.received('/down').some(missedAt));
    await shot(keys, '06-recovered');
    expect(consoleErrors).toEqual([]);
  });

  browserIt('fits a 390 px wide screen on every page', async () => {
    const id = await createWebhook('/phone', ['message.sent', 'message.delivered']);
    expect((await t.request('POST', `/v1/webhooks/${id}/test`, { token })).status).toBe(200);
    const page = await newPage(PHONE);
    await signIn(page);
    const pages: Array<[string, string, () => Promise<void>]> = [
      ['webhooks', '#/webhooks', async () => void (await page.locator('tr[data-webhook-id]').first().waitFor())],
      [
        'webhook',
        `#/webhooks/${id}`,
        async () => {
          await page.locator('details[data-delivery-id] summary').first().click();
          await page.locator('tr[data-attempt]').first().waitFor();
        },
      ],
      ['alerts', '#/alerts', async () => void (await page.getByRole('heading', { level: 1, name: 'Alerts' }).waitFor())],
      ['messages', '#/messages', async () => void (await page.getByRole('heading', { level: 1, name: 'Messages' }).waitFor())],
      ['templates', '#/templates', async () => void (await page.locator('article').first().waitFor())],
    ];
    for (const [name, hash, ready] of pages) {
      await page.evaluate((hash: string) => (location.hash = hash), hash);
      await ready();
      const width = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      expect({ name, ...width }).toEqual({ name, scroll: PHONE.width, client: PHONE.width });
      await shot(page, `06-phone-${name}`);
    }
    expect(consoleErrors).toEqual([]);
  });
});

/** Presses Tab until the element matching `selector` has the focus, as a keyboard user would (bounded). */
async function tabTo(page: Page, selector: string): Promise<void> {
  const target = page.locator(selector).first();
  await target.waitFor();
  for (let presses = 0; presses < 80; presses++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}
