import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../common/db/test-backends';
import { issueAccessToken } from '../common/auth/tokens';
import { startPlatform, type Platform } from '../bin/platform';
import { connectAs, Subscription } from './subscriptions.helpers';
import { backendName, scaleOutEnv, startTestPlatform, type TestPlatform } from './harness';

const ORG_FIELDS = 'id name status settings { rateLimits { category limit } supportEmail } rateLimits { category limit overridden }';
const CREATE = `mutation($id: ID!, $name: String!, $settings: OrganizationSettingsInput) { createOrganization(id: $id, name: $name, settings: $settings, reason: "new customer") { ${ORG_FIELDS} } }`;
const SUSPEND = `mutation($id: ID!) { suspendOrganization(id: $id, reason: "unpaid invoice") { id status } }`;
const RESUME = `mutation($id: ID!) { resumeOrganization(id: $id, reason: "paid") { id status } }`;
const UPDATE = `mutation($id: ID!, $settings: OrganizationSettingsInput) { updateOrganization(id: $id, settings: $settings, reason: "contract") { ${ORG_FIELDS} } }`;
const CREATE_PATIENT = (id: string) => `mutation { createPatient(input: { id: "${id}", givenNames: ["Eve"], family: "Newco" }) { id } }`;

describe(`tenants as records (${backendName})`, () => {
  let t: TestPlatform;
  let platformAdmin: string;
  beforeAll(async () => {
    t = await startTestPlatform();
    // A platform admin's token names no tenant: it acts in the platform scope.
    platformAdmin = await t.token({ tenants: [], roles: ['platform_admin'], sub: 'ops-1' });
  });
  afterAll(() => t?.stop());

  it('[SEC-014] refuses a token for a tenant that has no record on every surface (the hole: such a token could create patients)', async () => {
    const ghost = await t.token({ tenants: ['ghost'] });
    const created = await t.graphql(CREATE_PATIENT('p-ghost'), undefined, { token: ghost });
    expect([created.status, created.body.errors[0].extensions.code, created.body.errors[0].message]).toEqual([
      403,
      'FORBIDDEN',
      "Tenant 'ghost' is not served here",
    ]);
    const rest = await t.request('POST', '/api/ehr/compositions', { token: ghost, body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: {} } });
    expect([rest.status, rest.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await t.request('GET', '/v1/templates', { token: ghost })).body).toEqual({
      error: { code: 'FORBIDDEN', message: "Tenant 'ghost' is not served here" },
    });
    const fhir = await t.request('POST', '/fhir/R4/Patient', {
      token: ghost,
      body: { resourceType: 'Patient', name: [{ family: 'Ghost' }] },
      headers: { 'content-type': 'application/fhir+json' },
    });
    expect([fhir.status, fhir.body.resourceType]).toEqual([403, 'OperationOutcome']);
    expect((await t.request('GET', '/openehr/v1/ehr/ehr-p-1001', { token: ghost })).status).toBe(403);
    const socket = await connectAs(t, ghost);
    expect(await socket.closed).toEqual({ code: 4403, reason: "FORBIDDEN: Tenant 'ghost' is not served here" });
    await socket.dispose();
    // Nothing was created for the ghost tenant.
    const admin = await t.token({ tenants: ['demo'] });
    expect((await t.graphql('{ patient(id: "p-ghost") { id } }', undefined, { token: admin })).body.data?.patient ?? null).toBeNull();
  });

  it('seeds the demo tenants as records; only a platform admin manages tenants', async () => {
    const list = await t.graphql('{ organizations { data { id status } } }', undefined, { token: platformAdmin });
    expect(list.body.data.organizations.data).toEqual(
      expect.arrayContaining([
        { id: 'demo', status: 'active' },
        { id: 'acme', status: 'active' },
      ]),
    );
    for (const roles of [['admin'], ['support'], ['clinician']]) {
      const token = await t.token({ roles });
      const refused = await t.graphql(CREATE, { id: 'sneaky', name: 'Sneaky' }, { token });
      expect([roles, refused.body.errors[0].extensions.code]).toEqual([roles, 'FORBIDDEN']);
      expect((await t.graphql('{ organizations { data { id } } }', undefined, { token })).body.errors[0].extensions.code).toBe('FORBIDDEN');
    }
    // The platform scope sees no tenant's data.
    const patients = await t.graphql('{ patients { data { id } } }', undefined, { token: platformAdmin });
    expect(patients.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('validates tenants and settings with 400 and changes nothing; a duplicate id is 409', async () => {
    const bad = await t.graphql(
      CREATE,
      { id: 'bad', name: 'Bad', settings: { rateLimits: [{ category: 'MESSAGES_SEND', limit: 0 }], supportEmail: 'nope' } },
      { token: platformAdmin },
    );
    expect(bad.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(bad.body.errors[0].extensions.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'rateLimits.MESSAGES_SEND' }), expect.objectContaining({ path: 'supportEmail' })]),
    );
    const unknownCategory = await t.graphql(
      CREATE,
      { id: 'bad', name: 'Bad', settings: { rateLimits: [{ category: 'EVERYTHING', limit: 5 }] } },
      { token: platformAdmin },
    );
    expect(unknownCategory.body.errors[0].extensions).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'rateLimits.EVERYTHING', message: 'unknown field' }],
    });
    expect((await t.graphql(CREATE, { id: '../x', name: 'Bad' }, { token: platformAdmin })).body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const rest = await t.request('POST', '/graphql', { token: platformAdmin, body: { query: CREATE, variables: { id: 'demo', name: 'Again' } } });
    expect(rest.body.errors[0].extensions.code).toBe('CONFLICT');
    const organizations = await t.graphql('{ organizations { data { id } } }', undefined, { token: platformAdmin });
    expect(organizations.body.data.organizations.data.map((o: { id: string }) => o.id)).not.toContain('bad');
  });

  it('[SEC-014] creates, suspends and resumes a tenant: a suspension refuses every surface and ends live subscriptions, all audited', async () => {
    const created = await t.graphql(CREATE, { id: 'newco', name: 'Newco Clinics' }, { token: platformAdmin });
    expect(created.body.data.createOrganization).toMatchObject({ id: 'newco', status: 'active', settings: { rateLimits: [], supportEmail: null } });
    const newco = await t.token({ tenants: ['newco'], sub: 'newco-admin' });
    expect((await t.graphql(CREATE_PATIENT('p-n1'), undefined, { token: newco })).body).toEqual({ data: { createPatient: { id: 'p-n1' } } });
    const socket = await connectAs(t, newco);
    const events = new Subscription(socket.client, 'subscription { events { id type } }');

    expect((await t.graphql(SUSPEND, { id: 'newco' }, { token: platformAdmin })).body.data.suspendOrganization).toEqual({ id: 'newco', status: 'suspended' });
    // The live connection is closed at once, and every new call is refused.
    expect(await socket.closed).toEqual({ code: 4403, reason: "FORBIDDEN: Tenant 'newco' is suspended" });
    await socket.dispose();
    events.stop();
    const suspended = { error: { code: 'FORBIDDEN', message: "Tenant 'newco' is suspended" } };
    expect((await t.graphql(CREATE_PATIENT('p-n2'), undefined, { token: newco })).body.errors[0]).toMatchObject({
      message: suspended.error.message,
      extensions: { code: 'FORBIDDEN' },
    });
    expect(await t.request('GET', '/v1/templates', { token: newco })).toMatchObject({ status: 403, body: suspended });
    expect(await t.request('GET', '/api/ehr/patients/p-n1', { token: newco, headers: { 'x-tenant-id': 'newco' } })).toMatchObject({
      status: 403,
      body: suspended,
    });
    expect((await t.request('GET', '/fhir/R4/Patient/p-n1', { token: newco })).status).toBe(403);
    expect((await t.request('GET', '/openehr/v1/ehr/ehr-p-n1', { token: newco })).status).toBe(403);
    const again = await connectAs(t, newco);
    expect((await again.closed).code).toBe(4403);
    await again.dispose();

    expect((await t.graphql(RESUME, { id: 'newco' }, { token: platformAdmin })).body.data.resumeOrganization.status).toBe('active');
    expect((await t.graphql('{ patient(id: "p-n1") { id } }', undefined, { token: newco })).body).toEqual({ data: { patient: { id: 'p-n1' } } });

    const log = await t.graphql('{ organization(id: "newco") { changes { action actor reason } } }', undefined, { token: platformAdmin });
    expect(log.body.data.organization.changes).toEqual([
      { action: 'resume', actor: 'ops-1', reason: 'paid' },
      { action: 'suspend', actor: 'ops-1', reason: 'unpaid invoice' },
      { action: 'create', actor: 'ops-1', reason: 'new customer' },
    ]);
  });

  it("applies a tenant's own limit to that tenant only, shows it in X-RateLimit-Limit, and audits the change", async () => {
    const updated = await t.graphql(UPDATE, { id: 'acme', settings: { rateLimits: [{ category: 'TEMPLATES', limit: 2 }] } }, { token: platformAdmin });
    expect(updated.body.data.updateOrganization.rateLimits).toEqual(
      expect.arrayContaining([
        { category: 'TEMPLATES', limit: 2, overridden: true },
        { category: 'MESSAGES_SEND', limit: 100, overridden: false },
      ]),
    );
    const acme = await t.token({ tenants: ['acme'], sub: 'acme-reader' });
    const first = await t.request('GET', '/v1/templates', { token: acme });
    expect([first.status, first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining')]).toEqual([200, '2', '1']);
    expect((await t.request('GET', '/v1/templates', { token: acme })).status).toBe(200);
    const refused = await t.request('GET', '/v1/templates', { token: acme });
    expect([refused.status, refused.body.error.message]).toEqual([429, expect.stringMatching(/^Rate limit of 2 TEMPLATES calls per minute exceeded/)]);
    // demo keeps the deployment's limit.
    const demo = await t.request('GET', '/v1/templates', { token: await t.token({ sub: 'acme-reader' }) });
    expect([demo.status, demo.headers.get('x-ratelimit-limit')]).toEqual([200, '200']);
    const log = await t.graphql('{ organization(id: "acme") { changes(limit: 1) { action actor } } }', undefined, { token: platformAdmin });
    expect(log.body.data.organization.changes).toEqual([{ action: 'update', actor: 'ops-1' }]);
  });

  it("keeps a tenant's reminder lead time and messaging retention in its organisation's settings, validated and audited whoever changes them", async () => {
    const SETTINGS = '{ organization(id: "acme") { settings { reminderLeadMinutes retention { category days } } changes(limit: 1) { action actor } } }';
    const bad = await t.graphql(
      UPDATE,
      {
        id: 'acme',
        settings: {
          reminderLeadMinutes: 20_161,
          retention: [
            { category: 'messages', days: 0 },
            { category: 'audit', days: 10 },
          ],
        },
      },
      { token: platformAdmin },
    );
    expect(bad.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(bad.body.errors[0].extensions.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'reminderLeadMinutes',
      'retention.audit',
      'retention.messages',
    ]);

    const set = await t.graphql(
      UPDATE,
      { id: 'acme', settings: { reminderLeadMinutes: 90, retention: [{ category: 'messages', days: 30 }] } },
      { token: platformAdmin },
    );
    expect(set.body.errors).toBeUndefined();
    const admin = await t.token({ tenants: ['acme'], sub: 'acme-admin' });
    // The tenant admin's own views read the same record.
    const own = await t.graphql('{ reminderSettings { leadMinutes } messagingRetention { category days source } }', undefined, { token: admin });
    expect(own.body.data.reminderSettings).toEqual({ leadMinutes: 90 });
    expect(own.body.data.messagingRetention).toEqual([
      { category: 'messages', days: 30, source: 'tenant' },
      { category: 'webhook_deliveries', days: 30, source: 'default' },
    ]);

    // The tenant admin's changes land in the record and its change log, under their name; a bad value changes nothing.
    const tooLong = await t.graphql('mutation { setReminderLeadTime(leadMinutes: -1) { leadMinutes } }', undefined, { token: admin });
    expect(tooLong.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ path: 'reminderLeadMinutes' })] });
    const lead = await t.graphql('mutation { setReminderLeadTime(leadMinutes: 120, reason: "later reminders") { leadMinutes } }', undefined, { token: admin });
    expect(lead.body.data.setReminderLeadTime).toEqual({ leadMinutes: 120 });
    const period = await t.graphql('mutation { setMessagingRetention(category: "webhook_deliveries", days: 14) { category days } }', undefined, {
      token: admin,
    });
    expect(period.body.data.setMessagingRetention).toContainEqual({ category: 'webhook_deliveries', days: 14 });
    const record = (await t.graphql(SETTINGS, undefined, { token: platformAdmin })).body.data.organization;
    expect(record.settings).toEqual({
      reminderLeadMinutes: 120,
      retention: [
        { category: 'messages', days: 30 },
        { category: 'webhook_deliveries', days: 14 },
      ],
    });
    expect(record.changes).toEqual([{ action: 'update', actor: 'acme-admin' }]);
    const history = await t.graphql('{ organization(id: "acme") { changes(limit: 3) { actor reason } } }', undefined, { token: platformAdmin });
    expect(history.body.data.organization.changes).toEqual([
      { actor: 'acme-admin', reason: null },
      { actor: 'acme-admin', reason: 'later reminders' },
      { actor: 'ops-1', reason: 'contract' },
    ]);
    // Another tenant's admin neither sees nor changes them; a nurse may not either.
    const demoAdmin = await t.token({ tenants: ['demo'] });
    expect((await t.graphql('{ reminderSettings { leadMinutes } }', undefined, { token: demoAdmin })).body.data.reminderSettings).toEqual({
      leadMinutes: 1440,
    });
    const nurse = await t.token({ tenants: ['acme'], roles: ['nurse'] });
    expect(
      (await t.graphql('mutation { setReminderLeadTime(leadMinutes: 5) { leadMinutes } }', undefined, { token: nurse })).body.errors[0].extensions.code,
    ).toBe('FORBIDDEN');
  });
});

const scaleOut = process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL ? describe : describe.skip;

scaleOut('per-tenant limits and suspensions across two gateways (PostgreSQL + Redis)', () => {
  let database: TestDatabase;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-tenants-'));
  const started: Platform[] = [];
  let gateways: string[];
  let secret: Uint8Array;

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = scaleOutEnv(dataDir, database.databaseUrl, { TENANTS: 'demo,acme' });
    const ehr = await startPlatform('ehr', env);
    const messaging = await startPlatform('messaging', { ...env, EHR_URL: ehr.subgraphUrls.ehr });
    started.push(ehr, messaging);
    const subgraphs = { EHR_URL: ehr.subgraphUrls.ehr, MESSAGING_URL: messaging.subgraphUrls.messaging };
    const a = await startPlatform('gateway', { ...env, ...subgraphs });
    const b = await startPlatform('gateway', { ...env, ...subgraphs });
    started.push(a, b);
    gateways = [a.gateway!.url, b.gateway!.url];
    secret = a.runtime.secrets.jwtSecret!;
  }, 120_000);
  afterAll(async () => {
    for (const platform of started.reverse()) await platform.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const token = (tenants: string[], roles = ['admin'], sub = 'sender') => issueAccessToken(secret, { sub, tenants, roles, ttlSeconds: 600 });
  async function call(base: string, auth: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, limit: res.headers.get('x-ratelimit-limit'), body: (await res.json()) as any };
  }

  it('[RTL-005] raises the 101st send to 200 for that tenant only, counted across both gateways; a suspension on one is refused by the other at once', async () => {
    const ops = await token([], ['platform_admin'], 'ops');
    const raised = await call(gateways[0], ops, 'POST', '/graphql', {
      query: 'mutation { updateOrganization(id: "demo", settings: { rateLimits: [{ category: "MESSAGES_SEND", limit: 200 }] }) { id } }',
    });
    expect(raised.body).toEqual({ data: { updateOrganization: { id: 'demo' } } });

    const demo = await token(['demo']);
    const acme = await token(['acme']);
    const send = (patientId: string) => ({ patientId, templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } });
    for (let i = 1; i <= 101; i++) {
      const res = await call(gateways[i % 2], demo, 'POST', '/v1/messages', send('p-1001'));
      expect([i, res.status, res.limit, res.status === 201 ? null : res.body]).toEqual([i, 201, '200', null]);
    }
    // The same subject in acme keeps the deployment's 100 (the budget is per tenant and subject).
    const acmeSend = await call(gateways[1], acme, 'POST', '/v1/messages', send('p-2001'));
    expect([acmeSend.status, acmeSend.limit]).toEqual([201, '100']);

    // Gateway B has demo's record cached from the sends; the suspension made on A reaches it through Redis.
    expect((await call(gateways[0], ops, 'POST', '/graphql', { query: 'mutation { suspendOrganization(id: "demo") { status } }' })).body.data).toEqual({
      suspendOrganization: { status: 'suspended' },
    });
    let refusedOnB: { status: number; body: any } | undefined;
    // The bus message is asynchronous: poll until it is applied, bounded well below the 30 s cache lifetime.
    for (const started = Date.now(); Date.now() - started < 5_000;) {
      refusedOnB = await call(gateways[1], demo, 'GET', '/v1/templates');
      if (refusedOnB.status === 403) break;
    }
    expect(refusedOnB).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN', message: "Tenant 'demo' is suspended" } } });
  }, 120_000);
});
