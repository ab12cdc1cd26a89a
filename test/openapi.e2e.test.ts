import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Browser } from 'playwright-core';
import { projectRoot } from '../common/paths';
import { openApiDocument } from '../gateway/openapi/document';
import { VITALS } from './ehr-fixtures';
import { backendName, startTestPlatform, type RequestOptions, type TestPlatform } from './harness';
import { eventually } from './messaging-helpers';
import { browserIt, launchChromium } from './support/chromium';
import { openApiContract } from './support/openapi-contract';

const inBrowser = browserIt('API reference page');
const ARTIFACTS = join(projectRoot(), 'test-artifacts', 'openapi');

const PUBLIC_URL = 'https://care.example.org/caregraph';
/** Served only when SMS_PROVIDER names the provider, with its signature: test/messaging-providers.test.ts and test/messaging-failover.test.ts check them against the document. */
const NOT_EXERCISED = ['POST /v1/providers/twilio/status', 'POST /v1/providers/vonage/status'];

/**
 * Real answers of every REST path in the document, 2xx and errors, checked
 * against the served OpenAPI document: status, headers and body.
 */
describe(`OpenAPI contract (${backendName})`, () => {
  let t: TestPlatform;
  const contract = openApiContract();
  const demo = { 'X-Tenant-Id': 'demo' };

  beforeAll(async () => {
    t = await startTestPlatform({ PUBLIC_URL, WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_TIMEOUT_MS: '2000', RATE_LIMIT_TEMPLATES: '6' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  async function call(method: string, path: string, expected: number, options?: RequestOptions) {
    const res = await t.request(method, path, options);
    expect([method, path, res.status, res.status === expected ? '' : res.text]).toEqual([method, path, expected, '']);
    contract.check(method, path, res);
    return res;
  }

  it('serves the document without a token, with the server URL from PUBLIC_URL, as JSON and YAML', async () => {
    const json = await call('GET', '/openapi.json', 200, { token: null });
    expect(json.body).toEqual({ ...openApiDocument(), servers: [{ url: PUBLIC_URL }] });
    const yaml = await call('GET', '/openapi.yaml', 200, { token: null });
    expect(parse(yaml.text)).toEqual(json.body);
    const page = await call('GET', '/docs', 200, { token: null });
    expect(page.text).toContain('swagger-ui-bundle.js');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const script = await t.request('GET', '/docs/swagger-ui-bundle.js', { token: null });
    expect([script.status, script.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect((await t.request('GET', '/docs/package.json', { token: null })).status).toBe(404);
  });

  it('operations paths', async () => {
    await call('GET', '/healthz', 200, { token: null });
    await call('GET', '/readyz', 200, { token: null });
    await call('GET', '/metrics', 200, { token: null });
  });

  it('messaging: sends, batch, messages, patients, preferences, templates, appointments, reminders, replies', async () => {
    const send = { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-11-24', time: '09:30' } };
    const sent = await call('POST', '/v1/messages', 201, { body: send, headers: { 'Idempotency-Key': 'contract-1' } });
    await call('POST', '/v1/messages', 201, { body: send, headers: { 'Idempotency-Key': 'contract-1' } });
    await call('POST', '/v1/messages', 409, { body: { ...send, channel: 'email' }, headers: { 'Idempotency-Key': 'contract-1' } });
    await call('POST', '/v1/messages', 400, { body: { ...send, extra: 1 } });
    await call('POST', '/v1/messages', 404, { body: { ...send, patientId: 'p-9999' } });
    await call('POST', '/v1/messages', 422, { body: { ...send, patientId: 'p-1003' } });
    await call('POST', '/v1/messages', 422, { body: { ...send, variables: { date: 'tomorrow', time: '09:30' } } });
    await call('POST', '/v1/messages', 415, { rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
    await call('POST', '/v1/messages', 413, { body: { ...send, variables: { note: 'x'.repeat(1_100_000) } } });
    await call('POST', '/v1/messages', 401, { body: send, token: null });
    await call('POST', '/v1/messages/batch', 200, { body: { messages: [send, { ...send, patientId: 'p-1003' }, { bad: true }] } });

    await call('GET', `/v1/messages/${sent.body.id}`, 200);
    await call('GET', '/v1/messages/no-such-message', 404);
    await call('GET', '/v1/messages?patientId=p-1001&limit=5&offset=0', 200);
    await call('GET', '/v1/messages?limit=abc', 400);
    const scheduled = await call('POST', '/v1/messages', 201, { body: { ...send, sendAt: new Date(Date.now() + 3_600_000).toISOString() } });
    await call('POST', '/v1/messages', 400, { body: { ...send, sendAt: 'soon' } });
    await call('GET', '/v1/messages?status=scheduled', 200);
    await call('POST', `/v1/messages/${scheduled.body.id}/cancel`, 200);
    await call('POST', '/v1/messages/no-such-message/cancel', 404);

    await call('GET', '/v1/patients/p-1001', 200);
    await call('GET', '/v1/patients/p-9999', 404);
    await call('PATCH', '/v1/patients/p-1002/preferences', 200, {
      body: { channels: { email: true }, quietHours: { start: '22:00', end: '07:00', timezone: 'Europe/Amsterdam' } },
    });
    await call('PATCH', '/v1/patients/p-1002/preferences', 400, { body: { colour: 'blue' } });

    await call('GET', '/v1/templates', 200);
    await call('GET', '/v1/templates/appointment-reminder', 200);
    await call('GET', '/v1/templates/no-such-template', 404);

    await call('GET', '/v1/appointments', 200);
    await call('GET', '/v1/appointments?from=2026-12-01&to=2026-11-01', 400);
    const reminder = await call('POST', '/v1/appointments/appt-1001/remind', 201);
    await call('POST', '/v1/simulator/replies', 201, { body: { messageId: reminder.body.id, body: 'X' } });
    await call('POST', '/v1/appointments/appt-1001/remind', 409);
    await call('POST', '/v1/inbound/sms', 201, { body: { From: '+31612345671', Body: 'hello' } });
    await call('POST', '/v1/inbound/sms', 404, { body: { From: '+31600000009', Body: 'hello' } });
  });

  it('webhooks and alerts', async () => {
    const created = await call('POST', '/v1/webhooks', 201, {
      body: { url: 'http://127.0.0.1:9/hook', events: ['message.delivered'], secret: 'a-long-shared-secret-0123' },
    });
    const path = `/v1/webhooks/${created.body.id}`;
    await call('POST', '/v1/webhooks', 400, { body: { url: 'http://127.0.0.1:9/hook', events: [], secret: 'short' } });
    await call('GET', '/v1/webhooks', 200);
    await call('GET', path, 200);
    await call('PATCH', path, 200, { body: { events: ['message.delivered', 'message.failed'] } });
    await call('POST', `${path}/test`, 200);
    await call('GET', `${path}/deliveries?limit=10`, 200);
    const recovery = await call('POST', `${path}/recover`, 202, { body: { since: new Date(Date.now() - 60_000).toISOString() } });
    await call('GET', `${path}/recoveries/${recovery.body.id}`, 200);
    await call('POST', `${path}/recover`, 400, { body: { since: 'soon' } });
    await call('GET', '/v1/alerts?limit=5', 200);
    await call('DELETE', path, 204);
    await call('GET', path, 404);
    const patient = await t.token({ roles: ['patient'], patientId: 'p-1001' });
    await call('GET', '/v1/webhooks', 403, { token: patient });
  });

  it('clinical record: patients, compositions, versions, audit', async () => {
    await call('GET', '/api/ehr/patients/p-1001', 200, { headers: demo });
    await call('GET', '/api/ehr/patients/p-1001', 400);
    await call('GET', '/api/ehr/patients/p-1001', 403, { headers: { 'X-Tenant-Id': 'acme' } });
    await call('GET', '/api/ehr/patients/p-2001', 404, { headers: demo });

    const created = await call('POST', '/api/ehr/compositions', 201, {
      body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS },
      headers: { 'X-Change-Reason': 'morning round' },
    });
    await call('POST', '/api/ehr/compositions', 422, {
      body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: { ...VITALS, recorded_at: 'now' } },
    });
    await call('POST', '/api/ehr/compositions', 422, { body: { templateId: 'no_such.v1', ehrId: 'ehr-p-1001', content: VITALS } });
    await call('POST', '/api/ehr/compositions', 404, { body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-2001', content: VITALS } });
    await call('POST', '/api/ehr/compositions', 400, { body: { ehrId: 'ehr-p-1001', content: 'x', extra: 1 } });
    const v1 = created.body.uid as string;
    const id = v1.split('::')[0];
    await call('GET', '/api/ehr/patients/p-1001/compositions?area=observation&limit=5', 200);
    await call('GET', '/api/ehr/patients/p-1001/compositions?area=vitals', 400);
    await call('GET', `/api/ehr/compositions/${encodeURIComponent(v1)}`, 200);
    const v2 = (await call('PUT', `/api/ehr/compositions/${id}`, 200, { body: { content: VITALS }, headers: { 'If-Match': `"${v1}"` } })).body.uid;
    await call('PUT', `/api/ehr/compositions/${id}`, 412, { body: { content: VITALS }, headers: { 'If-Match': v1 } });
    await call('GET', `/api/ehr/compositions/${id}/history`, 200);
    // CDA export (the documents' own validation: test/cda.e2e.test.ts).
    await call('GET', `/api/ehr/compositions/${encodeURIComponent(v1)}/cda`, 200);
    await call('GET', '/api/ehr/patients/p-1001/cda', 200);
    await call('GET', '/api/ehr/patients/p-2001/cda', 404);
    // Publishing without XDS_REPOSITORY_URL; its 201 and 502 answers: test/xds-publish.e2e.test.ts, against the same contract.
    await call('POST', '/api/ehr/patients/p-1001/cda/publish', 409);
    await call('DELETE', `/api/ehr/compositions/${id}`, 204, { headers: { 'If-Match': v2 } });
    await call('PUT', `/api/ehr/compositions/${id}`, 409, { body: { content: VITALS }, headers: { 'If-Match': v2 } });
    await call('GET', `/api/ehr/audit?entityId=${id}&limit=10`, 200);
    await call('GET', '/api/ehr/patients/p-1001/access-log?from=2026-01-01&limit=5', 200, { headers: demo });
    await call('GET', '/api/ehr/patients/p-1001/access-log?from=soon', 400, { headers: demo });

    // A subject access export: refused, queued, polled until done, downloaded.
    await call('POST', '/api/ehr/patients/p-2001/export', 404);
    await call('POST', '/api/ehr/patients/p-1003/export', 403, { token: await t.token({ roles: ['nurse'] }) });
    const job = await call('POST', '/api/ehr/patients/p-1003/export', 202);
    const jobPath = `/api/ehr/patients/p-1003/export/${job.body.id}`;
    await call('GET', '/api/ehr/patients/p-1003/export/none', 404);
    await eventually(async () => ((await call('GET', jobPath, 200)).body.status === 'done' ? true : undefined), 'export job');
    await call('GET', `${jobPath}/download`, 200);

    // An erasure request, last: it restricts p-1003's record for the rest of this file.
    await call('POST', '/api/ehr/patients/p-1003/erasure', 400);
    await call('POST', '/api/ehr/patients/p-2001/erasure', 404, { headers: demo });
    await call('POST', '/api/ehr/patients/p-1003/erasure', 403, { headers: demo, token: await t.token({ roles: ['nurse'] }) });
    await call('POST', '/api/ehr/patients/p-1003/erasure', 200, { headers: { ...demo, 'X-Change-Reason': 'erasure request' } });
  });

  it('clinical record: appointments booked, moved and cancelled', async () => {
    const slot = { start: '2035-02-01T09:00', end: '2035-02-01T09:30', timeZone: 'Europe/Amsterdam', practitionerId: 'dr-contract' };
    const booked = await call('POST', '/api/ehr/appointments', 201, { body: { patientId: 'p-1001', ...slot } });
    await call('POST', '/api/ehr/appointments', 409, { body: { patientId: 'p-1002', ...slot } });
    await call('POST', '/api/ehr/appointments', 400, { body: { patientId: 'p-1002', start: '2035-02-01T09:00', end: '2035-02-01T09:30' } });
    await call('POST', '/api/ehr/appointments', 404, { body: { patientId: 'p-2001', ...slot } });
    await call('POST', '/api/ehr/appointments', 415, { rawBody: 'x', headers: { 'content-type': 'text/plain' } });
    const path = `/api/ehr/appointments/${booked.body.id}`;
    await call('PATCH', path, 200, { body: { start: '2035-02-01T10:00+01:00', end: '2035-02-01T10:30+01:00' } });
    await call('PATCH', path, 400, { body: { status: 'confirmed' } });
    await call('PATCH', '/api/ehr/appointments/appt-none', 404, { body: { status: 'cancelled' } });
    await call('PATCH', path, 200, { body: { status: 'cancelled' } });
    await call('PATCH', path, 409, { body: { start: '2035-02-01T10:00+01:00', end: '2035-02-01T10:30+01:00' } });
  });

  it('rate limits: 429 with Retry-After and the X-RateLimit-* headers', async () => {
    let last = await t.request('GET', '/v1/templates');
    for (let i = 1; i < 8 && last.status !== 429; i++) {
      contract.check('GET', '/v1/templates', last);
      last = await t.request('GET', '/v1/templates');
    }
    expect(last.status).toBe(429);
    contract.check('GET', '/v1/templates', last);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses answers that differ from the document', async () => {
    const res = await t.request('GET', '/v1/patients/p-1001');
    contract.check('GET', '/v1/patients/p-1001', res);
    const altered = (body: unknown, status = res.status) => ({ ...res, status, body, text: JSON.stringify(body) });
    expect(() => contract.check('GET', '/v1/patients/p-1001', altered({ ...res.body, extra: 1 }))).toThrow(/must NOT have additional properties/);
    expect(() =>
      contract.check('GET', '/v1/patients/p-1001', altered({ ...res.body, preferences: { ...res.body.preferences, channels: { sms: 'yes', email: true } } })),
    ).toThrow(/must be boolean/);
    expect(() => contract.check('GET', '/v1/patients/p-1001', altered(res.body, 418))).toThrow(/status not documented/);
    expect(() => contract.check('GET', '/v1/patients/p-1001', altered({ error: { code: 'NOPE', message: 'x' } }, 404))).toThrow(/allowed values/);
    expect(() => contract.check('GET', '/v1/nowhere', res)).toThrow(/no operation/);
    const limited = await t.request('GET', '/v1/templates');
    expect(limited.status).toBe(429);
    const headers = new Headers(limited.headers);
    headers.delete('retry-after');
    expect(() => contract.check('GET', '/v1/templates', { ...limited, headers })).toThrow(/header Retry-After is required/);
  });

  inBrowser('renders the reference page /docs in Chromium from this origin only', async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      const problems: string[] = [];
      page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
      page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
      page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
      page.on('request', (r) => !r.url().startsWith(t.url) && !r.url().startsWith('data:') && problems.push(`request elsewhere: ${r.url()}`));
      await page.goto(`${t.url}/docs`);
      const operation = page.locator('#operations-Messaging-sendMessage');
      await operation.waitFor({ timeout: 30_000 });
      await operation.locator('.opblock-summary').first().click();
      await page.getByText('Send a message from a template').first().waitFor();
      await page.locator('#operations-Messaging-sendMessage .responses-wrapper').waitFor();
      expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(29);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'api-reference.png') });
      expect(problems).toEqual([]);
    } finally {
      await browser?.close();
    }
  });

  it('exercised every documented operation', () => {
    const document = openApiDocument() as any;
    const operations = Object.entries<any>(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    const exercised = new Set([...contract.covered].map((c) => c.split(' ').slice(0, 2).join(' ')));
    expect(operations.filter((op) => !exercised.has(op)).sort()).toEqual(NOT_EXERCISED);
    // And the error statuses the brief of docs/api.md §4 names, each seen for real.
    const statuses = new Set([...contract.covered].map((c) => c.split(' ')[2]));
    for (const status of ['400', '401', '403', '404', '409', '412', '413', '415', '422', '429']) expect([status, statuses.has(status)]).toEqual([status, true]);
  });
});
