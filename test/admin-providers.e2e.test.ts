import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { browserIt as browserItFor, HAVE_CHROMIUM, launchChromium } from './support/chromium';
import { projectRoot } from '../common/paths';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { finalMessage } from './messaging-helpers';
import { closedPort } from './support/sms-fakes';

const browserIt = browserItFor('admin dashboard: providers');
const ARTIFACTS = join(projectRoot(), 'test-artifacts', 'admin');

/** The dashboard's Providers page in a real browser, with Twilio (refusing connections) before the simulator. */
describe(`admin dashboard: provider circuits (${backendName})`, () => {
  let t: TestPlatform;
  let browser: Browser | undefined;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestPlatform({
      SMS_PROVIDER: 'twilio,simulator',
      TWILIO_ACCOUNT_SID: 'AC0123456789',
      TWILIO_AUTH_TOKEN: 'twilio-auth-token',
      TWILIO_FROM: '+15550001111',
      TWILIO_API_URL: `http://127.0.0.1:${await closedPort()}`,
      PROVIDER_FAILURE_THRESHOLD: '1',
      PROVIDER_COOLDOWN_MS: '600000',
    });
    if (HAVE_CHROMIUM) browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  browserIt("shows each provider's circuit and sends, Twilio's open once it failed", async () => {
    const res = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } },
    });
    const done = await finalMessage(t, res.body.id);
    expect([done.status, done.provider]).toEqual(['delivered', 'simulator']);

    const token = await t.token({ sub: 'ops@example.com', tenants: ['demo'], roles: ['admin'] });
    const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${t.url}/admin/`);
      await page.getByLabel('Bearer token').fill(token);
      await page.getByLabel('Tenant id (optional)').fill('demo');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Webhook subscriptions' }).waitFor();
      await page.getByRole('link', { name: 'Providers' }).click();
      await page.getByRole('heading', { level: 1, name: 'Providers' }).waitFor();
      const twilio = page.locator('tr[data-provider="twilio"][data-channel="sms"]');
      await twilio.waitFor();
      expect(await twilio.getAttribute('data-circuit')).toBe('open');
      expect(await twilio.locator('.badge').textContent()).toBe('open');
      const simulator = page.locator('tr[data-provider="simulator"][data-channel="sms"]');
      expect(await simulator.getAttribute('data-circuit')).toBe('closed');
      // Channel, Provider, Circuit, Sent, Rejected, Failed, Skipped.
      expect(await twilio.locator('td').allTextContents()).toEqual(['sms', 'twilio', 'open', '0', '0', '1', '0']);
      expect((await simulator.locator('td').allTextContents()).slice(3, 4)).toEqual(['1']);
      await page.screenshot({ path: join(ARTIFACTS, 'providers.png'), fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
