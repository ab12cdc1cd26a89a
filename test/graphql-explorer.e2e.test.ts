import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildClientSchema, buildSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema } from 'graphql';
import type { Browser, Page } from 'playwright-core';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { API_SCHEMA_PATH } from '../gateway/published-schema';
import { projectRoot } from '../common/paths';
import { browserIt, launchChromium } from './support/chromium';

// Browser globals used inside page.evaluate callbacks, which run in Chromium (this file is type-checked without DOM types).
declare const document: any;

const browserTest = browserIt('GraphQL explorer');
const ARTIFACTS = join(projectRoot(), 'test-artifacts', 'explorer');
const sorted = (sdl: string) => printSchema(lexicographicSortSchema(buildSchema(sdl)));

describe(`published schema and GraphQL explorer (${backendName})`, () => {
  let t: TestPlatform;
  let browser: Browser | undefined;
  let token: string;

  beforeAll(async () => {
    t = await startTestPlatform({ SIM_SEND_DELAY_MS: '300', SIM_DELIVER_DELAY_MS: '600' });
    token = await t.token({ roles: ['admin'] });
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchChromium().catch(() => undefined);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('introspection on POST /graphql serves schema/api.graphql: the API schema with Subscription', async () => {
    const res = await t.graphql(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true }), undefined, { token });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const served = buildClientSchema(res.body.data);
    expect(served.getSubscriptionType()?.name).toBe('Subscription');
    expect(Object.keys(served.getSubscriptionType()!.getFields()).sort()).toEqual(['events', 'messageStatusChanged']);
    // The drift test: the checked-in client schema is exactly what is served.
    expect(printSchema(lexicographicSortSchema(served))).toBe(sorted(readFileSync(API_SCHEMA_PATH, 'utf8')));

    const type = await t.graphql('{ __type(name: "Event") { fields { name } } }', undefined, { token });
    expect(type.body.data.__type.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'type', 'timestamp', 'data']);
    // Data operations still go through the gateway, and a subscription over HTTP is still refused.
    const mixed = await t.graphql('{ __typename templates { data { id } } }', undefined, { token });
    expect(mixed.body).toEqual({ data: { __typename: 'Query', templates: { data: expect.arrayContaining([{ id: 'appointment-reminder' }]) } } });
    const subscription = await t.graphql('subscription { events { id } }', undefined, { token });
    expect(subscription.status).toBe(400);
  });

  it('GET /graphql answers a browser with the explorer page (strict CSP, own assets) and other clients as before', async () => {
    const page = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ws://${new URL(t.url).host}`);
    expect(csp).not.toContain('unsafe');
    const html = await page.text();
    const script = /src="(\/graphql\/explorer\/assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await fetch(`${t.url}${script}`);
    expect([asset.status, asset.headers.get('cache-control')]).toEqual([200, 'public, max-age=31536000, immutable']);
    expect((await fetch(`${t.url}/graphql/explorer/assets/nope.js`)).status).toBe(404);
    // JSON clients still need a token.
    expect((await fetch(`${t.url}/graphql?query=%7B__typename%7D`, { headers: { accept: 'application/json' } })).status).toBe(401);
  });

  /** Puts an operation in the query editor and waits for GraphiQL to take its name (the tab shows it), as a user would see. */
  async function setOperation(page: Page, name: string, text: string): Promise<void> {
    await setEditor(page, '.graphiql-query-editor', text);
    await page.locator('.graphiql-tab-active', { hasText: name }).waitFor();
  }

  /** Replaces the text of the visible editor in `selector` as a user would: select all, then paste. */
  async function setEditor(page: Page, selector: string, text: string): Promise<void> {
    await page.locator(`${selector} .CodeMirror:visible`).first().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(text);
  }
  const result = (page: Page) => page.evaluate(() => document.querySelector('.result-window .CodeMirror').CodeMirror.getValue() as string);

  browserTest('runs a query with a pasted token and a live subscription in Chromium', async () => {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const schemaRequests: (string | null)[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.postData()?.includes('IntrospectionQuery')) schemaRequests.push(request.headers().authorization ?? null);
    });
    try {
      await page.goto(`${t.url}/graphql`);
      // Before a token: no schema request, so no "Error fetching schema" in the Docs pane.
      await page.getByRole('button', { name: /Show Documentation Explorer/ }).click();
      await page.locator('.graphiql-doc-explorer').waitFor();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(schemaRequests).toEqual([]);
      expect(await page.locator('.graphiql-doc-explorer').innerText()).not.toMatch(/error/i);
      // Pasting a token fetches the schema with it, Subscription included: no manual re-fetch.
      await setEditor(page, '.graphiql-editor-tool', JSON.stringify({ Authorization: `Bearer ${token}`, 'X-Tenant-Id': 'demo' }));
      await page.locator('.graphiql-doc-explorer').getByText('Subscription', { exact: true }).click();
      await page.locator('.graphiql-doc-explorer').getByText('messageStatusChanged').waitFor();
      await setOperation(page, 'Templates', 'query Templates { templates { data { id channel } } }');
      await page.getByRole('button', { name: /Execute query/ }).click();
      expect(schemaRequests).toEqual([`Bearer ${token}`]);
      await page.waitForFunction(() => document.querySelector('.result-window .CodeMirror')?.CodeMirror.getValue().includes('appointment-reminder'));
      expect(JSON.parse(await result(page)).data.templates.data.length).toBeGreaterThan(0);

      await setOperation(page, 'Live', 'subscription Live { messageStatusChanged { id status } }');
      await page.getByRole('button', { name: /Execute query/ }).click();
      // The socket is up once the stop button shows; then a message sent over REST is reported live.
      await page.getByRole('button', { name: /Stop query/ }).waitFor();
      const sent = await t.request('POST', '/v1/messages', {
        token,
        body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } },
      });
      expect(sent.status).toBe(201);
      await page.waitForFunction(
        (id) =>
          /"status": "(sending|sent|delivered)"/.test(document.querySelector('.result-window .CodeMirror')?.CodeMirror.getValue()) &&
          document.querySelector('.result-window .CodeMirror').CodeMirror.getValue().includes(id),
        sent.body.id,
      );
      expect(errors).toEqual([]);
    } finally {
      await page.screenshot({ path: join(ARTIFACTS, 'explorer.png') });
      await context.close();
    }
  });
});
