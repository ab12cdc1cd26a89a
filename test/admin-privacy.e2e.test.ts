import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { browserIt as browserItFor, HAVE_CHROMIUM, launchChromium } from './support/chromium';
import { projectRoot } from '../common/paths';
import { backendName, startTestPlatform, type TestPlatform } from './harness';

// Named `test` so the traceability matrix (npm run trace) reads the requirement ids of its title.
const test = browserItFor('admin dashboard: privacy');
const ARTIFACTS = join(projectRoot(), 'test-artifacts', 'admin');

/**
 * The privacy officer's pages of the admin dashboard in a real browser, against the real platform: accesses
 * made through the API (a clinician with and without an appointment, a declared emergency, an AI agent, a bulk
 * list of patients), then the review with its filters, marking an entry reviewed, consents, erasure requests and
 * legal holds, and the report, printed and downloaded.
 */
describe(`admin dashboard: privacy (${backendName})`, () => {
  let t: TestPlatform;
  let browser: Browser | undefined;
  let officer: string;
  const tenant = { 'x-tenant-id': 'demo' };
  const DOCTOR = 'dr-jansen@example.com';
  const BULK = 'desk@example.com';

  const gql = async (query: string, token: string, variables: Record<string, unknown> = {}, headers = tenant) => {
    const res = await t.graphql(query, variables, { token, headers });
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestPlatform();
    officer = await t.token({ sub: 'privacy@example.com', tenants: ['demo'], roles: ['admin'] });
    const doctor = await t.token({ sub: DOCTOR, tenants: ['demo'], roles: ['clinician'] });
    const desk = await t.token({ sub: BULK, tenants: ['demo'], roles: ['receptionist'] });
    const agent = await t.token({ sub: 'assistant-7', tenants: ['demo'], roles: ['clinician'], clientId: 'claude-desktop' });

    // Enough patients that one list is a bulk read (10 or more within 5 minutes).
    for (let i = 1; i <= 8; i++) {
      await gql('mutation ($input: PatientCreateInput!) { createPatient(input: $input) { id } }', officer, {
        input: { id: `p-bulk-${i}`, givenNames: ['Bulk'], family: `Patient ${i}` },
      });
    }
    // Dr Jansen treats p-1002 (an appointment), not p-1003.
    await gql('mutation ($input: BookAppointmentInput!) { bookAppointment(input: $input) { id } }', officer, {
      input: { patientId: 'p-1002', start: '2027-01-11T09:00:00Z', end: '2027-01-11T09:30:00Z', practitionerId: DOCTOR, location: 'Room 4' },
    });
    const read = async (token: string, patientId: string) =>
      expect((await t.request('GET', `/api/ehr/patients/${patientId}`, { token, headers: tenant })).status).toBe(200);
    await read(doctor, 'p-1002');
    await read(doctor, 'p-1003');
    // A declared emergency: the access log records purpose ETREAT.
    await gql('{ clinicalContext(patientId: "p-1001", purpose: EMERGENCY, sections: [DEMOGRAPHICS]) { patientId } }', doctor);
    // An AI agent (a token of an OAuth client) reads demographics on its role's grant.
    await read(agent, 'p-1001');
    await gql('{ patients(limit: 100) { data { id } } }', desk);

    await gql('mutation { grantConsent(patientId: "p-1001", purpose: RESEARCH, note: "Signed form 2026-11") { granted } }', officer);
    await gql('mutation { revokeConsent(patientId: "p-1001", purpose: MESSAGING, note: "Asked by phone") { granted } }', officer);
    await gql('mutation { restrictPatientRecord(patientId: "p-1003", reason: "Erasure request by letter") { restrictedAt } }', officer);
    await gql('mutation { setLegalHold(patientId: "p-1002", hold: true, reason: "Complaint procedure") { legalHold } }', officer);
    if (HAVE_CHROMIUM) browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  const REVIEW = `query ($actor: String, $flag: AccessFlag) {
    accessLogReview(actor: $actor, flag: $flag, limit: 100) { data { id actor patientId entityType purpose client flags review { reviewedBy note } } pagination { total } }
  }`;

  it('[PRV-001, PRV-003, PRV-004] the review over the API: flags of real reads, nothing of another tenant, refused to staff', async () => {
    const mine = (await gql(REVIEW, officer, { actor: DOCTOR })).accessLogReview.data;
    const flagsOf = (patientId: string) => mine.filter((e: any) => e.patientId === patientId).map((e: any) => e.flags);
    expect(flagsOf('p-1002')).toEqual([[]]);
    expect(flagsOf('p-1003')).toEqual([['OUTSIDE_TREATMENT']]);
    // The clinical context reads the demographics (logged on their own) and logs itself with the declared purpose.
    const context = mine.filter((e: any) => e.patientId === 'p-1001').map((e: any) => [e.entityType, e.purpose, e.flags]);
    expect(context.sort()).toEqual([
      ['ClinicalContext', 'ETREAT', ['OUTSIDE_TREATMENT', 'BREAK_GLASS']],
      ['Patient', 'TREAT', ['OUTSIDE_TREATMENT']],
    ]);
    const agent = (await gql(REVIEW, officer, { actor: 'assistant-7' })).accessLogReview.data;
    expect(agent.map((e: any) => [e.client, e.flags])).toEqual([['claude-desktop', ['OUTSIDE_TREATMENT', 'AGENT']]]);
    const bulk = (await gql(REVIEW, officer, { actor: BULK, flag: 'BULK' })).accessLogReview;
    expect(bulk.pagination.total).toBeGreaterThanOrEqual(10);

    // Another tenant's admin sees, counts and marks nothing of demo's log.
    const acme = await t.token({ sub: 'acme-privacy', tenants: ['acme'], roles: ['admin'] });
    const foreign = await gql(REVIEW, acme, { actor: DOCTOR }, { 'x-tenant-id': 'acme' });
    expect(foreign.accessLogReview.pagination.total).toBe(0);
    const report = await gql('{ accessReviewReport(from: "2000-01-01", to: "2100-01-01") { entries } }', acme, {}, { 'x-tenant-id': 'acme' });
    expect(report.accessReviewReport.entries).toBe(0);
    const mark = await t.graphql(
      'mutation ($ids: [ID!]!) { markAccessLogReviewed(entryIds: $ids) { entryId } }',
      { ids: [mine[0].id] },
      {
        token: acme,
        headers: { 'x-tenant-id': 'acme' },
      },
    );
    expect(mark.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // demo's admin token does not reach acme's log, and staff without the capability are refused.
    const outside = await t.graphql(REVIEW, {}, { token: officer, headers: { 'x-tenant-id': 'acme' } });
    expect(outside.status).toBe(403);
    const doctor = await t.token({ sub: DOCTOR, tenants: ['demo'], roles: ['clinician'] });
    const refused = await t.graphql(REVIEW, {}, { token: doctor, headers: tenant });
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${t.url}/admin/`);
    await page.getByLabel('Bearer token').fill(officer);
    await page.getByLabel('Tenant id (optional)').fill('demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook subscriptions' }).waitFor();
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  test('[PRV-007, PRV-001, PRV-002, PRV-005, PRV-006] reviews the access log, marks an entry reviewed, shows consents, erasure requests, holds and the report', async () => {
    const context = await browser!.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
      await signIn(page);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Privacy' }).click();
      await page.getByRole('heading', { level: 1, name: 'Privacy: access log review' }).waitFor();
      const rows = page.locator('tr[data-entry-id]');
      await rows.first().waitFor();
      // Unreviewed entries by default, each flagged one with its badges.
      expect(await page.locator('caption').first().textContent()).toMatch(/of \d+$/);
      await shot(page, 'privacy-log');

      // Filter: break-glass only.
      await page.getByLabel('Flag', { exact: true }).selectOption('BREAK_GLASS');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.locator('caption', { hasText: /of 1$/ }).waitFor();
      const glass = rows.first();
      expect(await glass.getAttribute('data-flags')).toContain('break_glass');
      expect(await glass.locator('td[data-label="Actor"]').textContent()).toContain(DOCTOR);
      expect(await glass.locator('td[data-label="Grounds · purpose"]').textContent()).toBe('treatment · ETREAT');
      const entryId = (await glass.getAttribute('data-entry-id'))!;
      await shot(page, 'privacy-log-break-glass');

      // Mark it reviewed with a note.
      await page.getByLabel(`Select entry ${entryId}`).check();
      await page.getByLabel('Review note (optional)').fill('Emergency on the ward, confirmed with Dr Jansen.');
      await page.getByRole('button', { name: 'Mark 1 selected reviewed' }).click();
      await page.getByRole('status').filter({ hasText: '1 entry marked reviewed.' }).waitFor();
      await page.getByText('No entries match these filters.').waitFor();
      await page.getByLabel('Review', { exact: true }).selectOption('true');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      const reviewed = page.locator(`tr[data-entry-id="${entryId}"]`);
      await reviewed.waitFor();
      expect(await reviewed.locator('td[data-label="Review"]').textContent()).toMatch(/reviewed privacy@example\.com.*Emergency on the ward/);
      await shot(page, 'privacy-log-reviewed');
      // The review is in the audit trail; the access-log chain still verifies.
      const trail = await gql(`{ auditRecords(entityType: "AccessLog", entityId: "${entryId}") { data { action actor reason } } }`, officer);
      expect(trail.auditRecords.data).toEqual([{ action: 'review', actor: 'privacy@example.com', reason: 'Emergency on the ward, confirmed with Dr Jansen.' }]);
      expect((await gql('{ verifyAccessLog { valid } }', officer)).verifyAccessLog.valid).toBe(true);

      // Agents, then bulk reads, unreviewed.
      await page.getByLabel('Review', { exact: true }).selectOption('false');
      await page.getByLabel('Flag', { exact: true }).selectOption('AGENT');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      // (The reviewed list before it also had one entry: wait for the agent's.)
      await page.locator('tr[data-entry-id][data-flags~="agent"]').waitFor();
      expect(await page.locator('caption').first().textContent()).toMatch(/of 1$/);
      expect(await rows.first().locator('td[data-label="Client"]').textContent()).toBe('claude-desktop');
      await page.getByLabel('Flag', { exact: true }).selectOption('BULK');
      await page.getByLabel('Actor').fill(BULK);
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.locator('caption', { hasText: /of 1[0-9]$/ }).waitFor();
      const bulkRows = await rows.count();
      expect(bulkRows).toBeGreaterThanOrEqual(10);
      await shot(page, 'privacy-log-bulk');
      // The whole list at once: every entry of the page selected, marked with one note.
      await page.getByRole('button', { name: 'Select all on this page' }).click();
      await page.getByLabel('Review note (optional)').fill('Front desk printed the day list.');
      await page.getByRole('button', { name: `Mark ${bulkRows} selected reviewed` }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `${bulkRows} entries marked reviewed.` })
        .waitFor();
      await page.getByText('No entries match these filters.').waitFor();

      // Consents of one patient.
      await page.getByRole('navigation', { name: 'Privacy' }).getByRole('link', { name: 'Consents' }).click();
      await page.getByRole('heading', { level: 1, name: 'Privacy: consents' }).waitFor();
      await page.locator('tr[data-purpose="research"]').waitFor();
      await page.getByLabel('Patient id').fill('p-1001');
      await page.getByRole('button', { name: 'Show consents' }).click();
      await page.locator('caption', { hasText: 'Consents of patient p-1001' }).waitFor();
      const consent = (purpose: string) => page.locator(`tr[data-purpose="${purpose}"] td`).allTextContents();
      expect((await consent('research')).slice(1, 5)).toEqual(['research', 'granted', 'recorded decision', 'Signed form 2026-11']);
      expect((await consent('messaging')).slice(1, 5)).toEqual(['messaging', 'withdrawn', 'recorded decision', 'Asked by phone']);
      expect((await consent('ai_assistance')).slice(1, 4)).toEqual(['ai_assistance', 'not given', 'default']);
      await shot(page, 'privacy-consents');

      // Erasure requests and legal holds.
      await page.getByRole('navigation', { name: 'Privacy' }).getByRole('link', { name: 'Erasure requests and legal holds' }).click();
      await page.getByRole('heading', { level: 1, name: 'Privacy: erasure requests and legal holds' }).waitFor();
      const erasures = page.getByRole('region', { name: 'Erasure and restriction requests' });
      await erasures.locator('tr[data-patient-id="p-1003"]').waitFor();
      expect(await erasures.locator('tr[data-patient-id]').count()).toBe(1);
      expect(await erasures.locator('tr[data-patient-id="p-1003"] td[data-label="Request"]').textContent()).toBe('Erasure request by letter');
      const holds = page.getByRole('region', { name: 'Legal holds' });
      expect(await holds.locator('tr[data-patient-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-patient-id')))).toEqual(['p-1002']);
      expect(await holds.locator('tr[data-patient-id="p-1002"] td').allTextContents()).toEqual(['p-1002', 'privacy@example.com', 'Complaint procedure', 'no']);
      await shot(page, 'privacy-rights');

      // The report for today: the review done, break-glass reviewed, the rest not.
      await page.getByRole('navigation', { name: 'Privacy' }).getByRole('link', { name: 'Review report' }).click();
      await page.getByRole('heading', { level: 1, name: 'Privacy: review report' }).waitFor();
      const today = new Date().toISOString().slice(0, 10);
      await page.getByLabel('From').fill(today);
      await page.getByLabel('To (included)').fill(today);
      await page.getByRole('button', { name: 'Make report' }).click();
      const report = page.locator('article.report');
      await report.waitFor();
      const count = (name: string) => report.locator(`dd[data-count="${name}"]`).textContent();
      expect(await count('reviews')).toBe(String(1 + bulkRows));
      const api = (await gql(`{ accessReviewReport(from: "${today}", to: "${today}") { entries flagged unreviewedFlagged } }`, officer)).accessReviewReport;
      expect([await count('entries'), await count('flagged'), await count('unreviewed')]).toEqual([
        String(api.entries),
        String(api.flagged),
        String(api.unreviewedFlagged),
      ]);
      expect(await report.locator('tr[data-flag="break_glass"] td').allTextContents()).toEqual(['break-glass', '1', '0']);
      expect(await report.locator('tr[data-flag="agent"] td').allTextContents()).toEqual(['agent', '1', '1']);
      expect(await report.locator('tr[data-flag="bulk"] td').allTextContents()).toEqual(['bulk', String(bulkRows), '0']);
      expect(page.url()).toContain(`#/privacy/report/${today}/${today}`);
      await shot(page, 'privacy-report');
      await page.emulateMedia({ media: 'print' });
      expect(await page.locator('header.top').isVisible()).toBe(false);
      await shot(page, 'privacy-report-print');
      await page.emulateMedia({ media: 'screen' });

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download HTML' }).click()]);
      expect(download.suggestedFilename()).toBe(`access-review-demo-${today}-${today}.html`);
      const file = join(ARTIFACTS, 'privacy-report.html');
      await download.saveAs(file);
      const html = readFileSync(file, 'utf8');
      expect(html).toMatch(/^<!doctype html>/);
      expect(html).toContain(`Access-log review report — tenant demo, ${today} to ${today}`);
      expect(html).toContain('Emergency on the ward, confirmed with Dr Jansen.');
      expect(html).not.toContain('<script');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
