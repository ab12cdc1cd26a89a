import { startTestPlatform, backendName, type TestPlatform } from './harness';

describe(`platform foundation (${backendName})`, () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(() => t?.stop());

  it('[OPS-001] is alive, ready and exposes metrics without a token', async () => {
    expect((await t.request('GET', '/healthz', { token: null })).status).toBe(200);
    const ready = await t.request('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ supergraph: 'ok', database: 'ok' });
    const metrics = await t.request('GET', '/metrics', { token: null });
    expect(metrics.text).toContain('process_cpu_seconds_total');
  });

  it('answers one query from both subgraphs', async () => {
    const res = await t.graphql('{ patient(id: "p-1001") { id ehrId name { family } preferences { channels { sms email } } } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.patient).toEqual({
      id: 'p-1001',
      ehrId: 'ehr-p-1001',
      name: { family: 'de Vries' },
      preferences: { channels: { sms: true, email: true } },
    });
  });

  it('resolves entities across subgraphs in both directions', async () => {
    const res = await t.graphql('{ appointments { data { id patient { id preferences { channels { sms } } } } } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.appointments.data).toContainEqual({ id: 'appt-1001', patient: { id: 'p-1001', preferences: { channels: { sms: true } } } });
  });

  it('[SEC-001] refuses calls without a valid token with the contract body', async () => {
    const missing = await t.request('GET', '/v1/templates', { token: null });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: { code: 'UNAUTHENTICATED', message: expect.any(String) } });
    const garbage = await t.request('GET', '/v1/templates', { token: 'not-a-jwt' });
    expect(garbage.status).toBe(401);
    const expired = await t.request('GET', '/v1/templates', { token: await t.token({ ttlSeconds: -10 }) });
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toMatch(/expired/);
    const graphql = await t.graphql('{ templates { data { id } } }', undefined, { token: null });
    expect(graphql.status).toBe(401);
    expect(graphql.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('[SEC-016] answers unknown routes with 404 and the contract body', async () => {
    const res = await t.request('GET', '/no/such/path');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });

  it('[SEC-003] applies the tenant rule of docs/api.md §3', async () => {
    const both = await t.token({ tenants: ['demo', 'acme'] });
    const ambiguous = await t.request('GET', '/v1/templates', { token: both });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.code).toBe('TENANT_REQUIRED');
    const chosen = await t.request('GET', '/v1/patients/p-2001', { token: both, headers: { 'X-Tenant-Id': 'acme' } });
    expect(chosen.status).toBe(200);
    const foreign = await t.request('GET', '/v1/templates', { headers: { 'X-Tenant-Id': 'acme' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('FORBIDDEN');
  });

  it("[SEC-004] hides other tenants' records behind 404", async () => {
    const res = await t.request('GET', '/api/ehr/patients/p-2001', { headers: { 'X-Tenant-Id': 'demo' } });
    expect(res.status).toBe(404);
    const missingHeader = await t.request('GET', '/api/ehr/patients/p-1001');
    expect(missingHeader.status).toBe(400);
    const own = await t.request('GET', '/api/ehr/patients/p-1001', { headers: { 'X-Tenant-Id': 'demo' } });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      id: 'p-1001',
      ehrId: 'ehr-p-1001',
      name: { given: ['Anna'], family: 'de Vries' },
      contact: { phone: expect.any(String) },
    });
  });

  it('refuses subgraph calls that do not come from the gateway', async () => {
    const res = await fetch(t.platform.subgraphUrls.ehr, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-caregraph-identity': 'forged' },
      body: JSON.stringify({ query: '{ patient(id: "p-1001") { id } }' }),
    });
    const body = (await res.json()) as any;
    expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(JSON.stringify(body)).not.toContain('de Vries');
  });
});
