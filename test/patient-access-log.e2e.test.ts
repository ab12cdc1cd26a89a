import { validateFhir } from './fhir-support';
import { backendName, startTestPlatform, type TestPlatform } from './harness';

/**
 * A patient's own access log (docs/security.md, "Access log"): who read the record, for the patient with a
 * `patient` token, over REST, GraphQL and FHIR (AuditEvent, checked against the R4 definitions), filtered by period; another patient's looks absent, as their record does.
 */
describe(`a patient's own access log (${backendName})`, () => {
  let t: TestPlatform;
  let patient: string;
  const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    t = await startTestPlatform();
    patient = await t.token({ tenants: ['demo'], roles: ['patient'], patientId: 'p-1001', sub: 'anna' });
    // A clinician reads the record, and another patient's.
    const clinician = await t.token({ tenants: ['demo'], roles: ['clinician'], sub: 'dr-jansen' });
    for (const id of ['p-1001', 'p-1002']) {
      expect((await t.request('GET', `/api/ehr/patients/${id}`, { token: clinician, headers: { 'X-Tenant-Id': 'demo' } })).status).toBe(200);
    }
  });
  afterAll(() => t?.stop());

  const log = (patientId: string, query = '', token = patient) => t.request('GET', `/api/ehr/patients/${patientId}/access-log${query}`, { token });

  it('[LOG-003] shows the patient who read their record, newest first, and only their own entries', async () => {
    const res = await log('p-1001');
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBeGreaterThan(0);
    expect(res.body.data.every((e: { patientId: string }) => e.patientId === 'p-1001')).toBe(true);
    expect(res.body.data).toContainEqual(
      expect.objectContaining({ actor: 'dr-jansen', roles: ['clinician'], action: 'read', entityType: 'Patient', patientId: 'p-1001' }),
    );
    const times = res.body.data.map((e: { at: string }) => e.at);
    expect([...times].sort().reverse()).toEqual(times);
    const viaGraphQL = await t.graphql('{ accessLog(patientId: "p-1001", limit: 100) { data { id } pagination { total } } }', {}, { token: patient });
    expect(viaGraphQL.body.data.accessLog.pagination.total).toBe(res.body.pagination.total);
  });

  it("[LOG-003] answers another patient's log as absent (404), over REST and GraphQL", async () => {
    const res = await log('p-1002');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    const viaGraphQL = await t.graphql('{ accessLog(patientId: "p-1002") { data { id } } }', {}, { token: patient });
    expect(viaGraphQL.body.errors[0].extensions.code).toBe('NOT_FOUND');
    // An admin sees both.
    expect((await log('p-1002', '', await t.token({ tenants: ['demo'], roles: ['admin'] }))).body.pagination.total).toBeGreaterThan(0);
  });

  it('[LOG-003] filters by period and refuses a malformed or inverted one with 400', async () => {
    const all = (await log('p-1001')).body.pagination.total;
    expect((await log('p-1001', `?from=${day(0)}&to=${day(0)}`)).body.pagination.total).toBe(all);
    expect((await log('p-1001', `?from=${day(1)}`)).body.pagination.total).toBe(0);
    expect((await log('p-1001', `?to=${day(-1)}`)).body.pagination.total).toBe(0);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    expect((await log('p-1001', `?from=${encodeURIComponent(since)}`)).body.pagination.total).toBe(all);
    for (const query of ['?from=yesterday', `?from=${day(1)}&to=${day(0)}`, '?since=2026-01-01']) {
      const res = await log('p-1001', query);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'VALIDATION_ERROR' });
    }
  });

  it('[LOG-004, XCH-002] serves the log as FHIR AuditEvents: searched by patient and date, read by id, valid R4', async () => {
    const fhir = (path: string, token = patient) => t.request('GET', `/fhir/R4/${path}`, { token });
    const all = (await log('p-1001')).body;
    const bundle = await fhir('AuditEvent?patient=Patient/p-1001&_count=100');
    expect(bundle.status).toBe(200);
    expect(bundle.body).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: all.pagination.total });
    expect(validateFhir(bundle.body)).toBe(1 + all.data.length);
    const events = bundle.body.entry.map((e: { resource: any }) => e.resource);
    expect(events.map((e: { id: string }) => e.id)).toEqual(all.data.map((e: { id: string }) => e.id));
    const read = events.find((e: any) => e.agent[0].who.identifier.value === 'dr-jansen');
    expect(read).toMatchObject({
      action: 'R',
      subtype: [{ code: 'read' }],
      agent: [{ requestor: true, role: [{ text: 'clinician' }] }],
      entity: [{ what: { reference: 'Patient/p-1001' } }, { what: { identifier: { value: 'Patient/p-1001' } } }],
    });
    const one = await fhir(`AuditEvent/${read.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(read);

    expect((await fhir(`AuditEvent?patient=p-1001&date=ge${day(1)}`)).body.total).toBe(0);
    expect((await fhir(`AuditEvent?patient=p-1001&date=le${day(0)}`)).body.total).toBe(all.pagination.total);
    expect((await fhir('AuditEvent?patient=p-1001&_summary=count')).body.total).toBe(all.pagination.total);
    // Another patient's: absent, by search and by id; a search must name one patient; entries have no versions.
    expect((await fhir('AuditEvent?patient=p-1002')).status).toBe(404);
    const other = (await log('p-1002', '', await t.token({ tenants: ['demo'], roles: ['admin'] }))).body.data[0];
    expect((await fhir(`AuditEvent/${other.id}`)).status).toBe(404);
    expect((await fhir('AuditEvent')).status).toBe(400);
    expect((await fhir(`AuditEvent/${read.id}/_history`)).status).toBe(501);
  });
});
