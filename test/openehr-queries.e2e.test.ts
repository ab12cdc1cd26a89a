import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { VITALS } from './ehr-fixtures';
import { openEhrCalls } from './support/openehr-oas';

const text = { 'content-type': 'text/plain' };
const BP = `SELECT c/uid/value AS uid, o/systolic/magnitude AS systolic
  FROM EHR e CONTAINS COMPOSITION c[vital_signs.v1] CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2]
  WHERE o/systolic/magnitude >= $min ORDER BY o/systolic/magnitude DESC`;
const BY_EHR = 'SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr_id] CONTAINS COMPOSITION c[vital_signs.v1] ORDER BY c/uid/value';

/**
 * openEHR stored queries: DEFINITION (PUT/GET /definition/query/{name}[/{version}])
 * and execution (GET/POST /query/{name}[/{version}]). Answers are checked
 * against the published ITS-REST OAS files; execution must answer exactly what
 * the same AQL answers ad hoc.
 */
describe(`openEHR stored queries (${backendName})`, () => {
  let t: TestPlatform;
  let acme: string;
  let clinician: string;
  const { checked: api, raw } = openEhrCalls(() => t);
  const put = (path: string, aql: string, token?: string) => api('PUT', `/definition/query/${path}`, { rawBody: aql, headers: text, token });
  const list = async (name = 'org.example::bp', token?: string) => (await api('GET', `/definition/query/${name}`, { token })).body;
  const adhoc = async (q: string, query_parameters: Record<string, unknown>) => (await api('POST', '/query/aql', { body: { q, query_parameters } })).body;
  const rowsOf = (body: { rows: unknown[][] }) => body.rows;

  beforeAll(async () => {
    t = await startTestPlatform();
    acme = await t.token({ tenants: ['acme'], sub: 'acme-admin' });
    clinician = await t.token({ roles: ['clinician'], sub: 'sq-clinician' });
    const bp = (systolic: number) => ({ ...VITALS, blood_pressure: { ...VITALS.blood_pressure, systolic: { magnitude: systolic, unit: 'mm[Hg]' } } });
    for (const [ehr, systolic] of [
      ['ehr-p-1002', 162],
      ['ehr-p-1002', 121],
      ['ehr-p-1003', 148],
    ] as const) {
      const res = await api('POST', `/ehr/${ehr}/composition`, {
        body: { _type: 'COMPOSITION', archetype_details: { template_id: { value: 'vital_signs.v1' } }, content: bp(systolic) },
      });
      expect(res.status).toBe(201);
    }
  });
  afterAll(() => t?.stop());

  describe('DEFINITION', () => {
    it('[EHR-012] stores a query at a version: 200 with its Location, the definition readable and audited', async () => {
      const res = await put('org.example::bp/1.0.0', BP);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(res.headers.get('location')).toBe(`${t.url}/openehr/v1/definition/query/org.example::bp/1.0.0`);
      const got = await api('GET', '/definition/query/org.example::bp/1.0.0');
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('application/json');
      expect(got.body).toEqual({ name: 'org.example::bp', type: 'AQL', version: '1.0.0', saved: expect.any(String), q: BP });
      expect(Date.now() - Date.parse(got.body.saved)).toBeLessThan(60_000);
      const audit = await t.request('GET', `/api/ehr/audit?entityType=StoredQuery&entityId=${encodeURIComponent('org.example::bp/1.0.0')}`);
      expect(audit.body.data).toEqual([expect.objectContaining({ action: 'create', entityType: 'StoredQuery', entityId: 'org.example::bp/1.0.0' })]);
    });

    it('versions: without a version the next patch version, a given version must be greater; 409 for an existing or smaller one', async () => {
      const next = await put('org.example::bp', BP.replace('DESC', 'ASC'));
      expect(next.status).toBe(200);
      expect(next.headers.get('location')).toMatch(/\/definition\/query\/org\.example::bp\/1\.0\.1$/);
      expect((await put('org.example::bp/2.0.0', `${BP} LIMIT 2`)).status).toBe(200);
      const before = await list();
      const existing = await put('org.example::bp/2.0.0', BP);
      expect(existing.status).toBe(409);
      expect(existing.body).toMatchObject({ message: expect.stringContaining('2.0.0'), error: { code: 'CONFLICT' } });
      const smaller = await put('org.example::bp/1.5.0', BP);
      expect(smaller.status).toBe(409);
      expect(smaller.body.message).toContain('greater than its latest, 2.0.0');
      expect(await list()).toEqual(before);
      // A new name starts at 1.0.0.
      const fresh = await put('plain_name', 'SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c');
      expect(fresh.headers.get('location')).toMatch(/\/definition\/query\/plain_name\/1\.0\.0$/);
    });

    it('refuses invalid AQL, names, versions, types and bodies with 400 and stores nothing', async () => {
      // The list of all queries is a path the OAS does not name.
      const before = (await raw('GET', '/definition/query')).body;
      const invalid = await put('org.example::broken/1.0.0', 'SELECT FROM');
      expect(invalid.status).toBe(400);
      expect(invalid.body).toMatchObject({ message: expect.stringContaining('AQL syntax error'), error: { code: 'VALIDATION_ERROR' } });
      const unsupported = await put('org.example::broken', 'SELECT p FROM EHR e CONTAINS PERSON p');
      expect(unsupported.status).toBe(400);
      expect(unsupported.body.message).toContain('FROM PERSON is not supported');
      for (const name of ['bad name', 'aql', 'org.example::AQL', '::x', 'org..example::x', 'a::b::c', 'x'.repeat(201)]) {
        const res = await put(encodeURIComponent(name), BP);
        expect({ name, status: res.status }).toEqual({ name, status: 400 });
        expect(res.body.validationErrors[0]).toMatch(/^qualified_query_name: /);
      }
      for (const version of ['1.0', 'v1.0.0', '1.0.0-beta', '01.0.0']) {
        const res = await put(`org.example::broken/${version}`, BP);
        expect({ version, status: res.status }).toEqual({ version, status: 400 });
      }
      expect((await api('PUT', '/definition/query/org.example::broken?query_type=SQL', { rawBody: BP, headers: text })).status).toBe(400);
      expect((await api('PUT', '/definition/query/org.example::broken', { rawBody: '', headers: text })).status).toBe(400);
      expect((await api('PUT', '/definition/query/org.example::broken', { rawBody: '   ', headers: text })).status).toBe(400);
      const json = await raw('PUT', '/definition/query/org.example::broken', { body: { q: BP } });
      expect(json.status).toBe(415);
      expect(json.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect((await raw('PUT', '/definition/query/org.example::broken', { rawBody: '<q/>', headers: { 'content-type': 'application/xml' } })).status).toBe(415);
      expect((await raw('GET', '/definition/query')).body).toEqual(before);
    });

    it('lets only admins store queries (403 for a clinician), 401 without a token', async () => {
      const forbidden = await raw('PUT', '/definition/query/org.example::mine', { rawBody: BP, headers: text, token: clinician });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.error.code).toBe('FORBIDDEN');
      expect((await raw('PUT', '/definition/query/org.example::mine', { rawBody: BP, headers: text, token: null })).status).toBe(401);
      expect(await list('org.example::mine')).toEqual([]);
      // Reading and running them is open to the roles that read records.
      expect((await api('GET', '/definition/query/org.example::bp', { token: clinician })).status).toBe(200);
    });

    it('lists every version by name or name prefix, and gets one by exact version or major[.minor] prefix (latest matching)', async () => {
      expect((await list()).map((q: { version: string }) => q.version)).toEqual(['1.0.0', '1.0.1', '2.0.0']);
      expect((await list('org.example')).map((q: { name: string }) => q.name)).toEqual(['org.example::bp', 'org.example::bp', 'org.example::bp']);
      const all = await raw('GET', '/definition/query');
      expect(all.status).toBe(200);
      expect(all.body.map((q: { name: string }) => q.name)).toEqual(expect.arrayContaining(['org.example::bp', 'plain_name']));
      expect(await list('org.nothing')).toEqual([]);
      expect((await api('GET', '/definition/query/org.example::bp/1')).body.version).toBe('1.0.1');
      expect((await api('GET', '/definition/query/org.example::bp/1.0')).body.version).toBe('1.0.1');
      expect((await api('GET', '/definition/query/org.example::bp/2')).body.q).toBe(`${BP} LIMIT 2`);
      for (const path of ['org.example::bp/3', 'org.example::bp/1.1', 'org.example::bp/1.0.7', 'org.example::none/1.0.0']) {
        const res = await api('GET', `/definition/query/${path}`);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expect(res.body.error.code).toBe('NOT_FOUND');
      }
      // 400s the OAS does not name.
      expect((await raw('GET', '/definition/query/org.example::bp/latest')).status).toBe(400);
      expect((await raw('GET', `/definition/query/${encodeURIComponent('bad name')}`)).status).toBe(400);
    });

    it('keeps stored queries per tenant', async () => {
      expect(await list('org.example', acme)).toEqual([]);
      expect((await api('GET', '/definition/query/org.example::bp/1.0.0', { token: acme })).status).toBe(404);
      expect((await api('GET', '/query/org.example::bp', { token: acme })).status).toBe(404);
      // The same name and version in another tenant is another query.
      expect((await put('org.example::bp/1.0.0', 'SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c', acme)).status).toBe(200);
      expect((await api('GET', '/query/org.example::bp/1.0.0', { token: acme })).body.rows).toEqual([]);
      expect((await api('GET', '/definition/query/org.example::bp/1.0.0')).body.q).toBe(BP);
    });
  });

  describe('QUERY', () => {
    it('[EHR-012] runs the latest version by GET with URL parameters, answering what the same AQL answers ad hoc (plus its name)', async () => {
      const res = await api('GET', '/query/org.example::bp?min=140');
      expect(res.status).toBe(200);
      const expected = await adhoc(`${BP} LIMIT 2`, { min: 140 });
      expect(res.body).toEqual({
        ...expected,
        name: 'org.example::bp',
        meta: { ...expected.meta, _created: expect.any(String), _href: `${t.url}/openehr/v1/query/org.example%3A%3Abp` },
      });
      expect(rowsOf(res.body).map((r) => r[1])).toEqual([162, 148]);
      // query_parameters as JSON, and paging.
      const paged = await api('GET', `/query/org.example::bp?query_parameters=${encodeURIComponent('{"min":100}')}&offset=1&fetch=1`);
      expect(rowsOf(paged.body).map((r) => r[1])).toEqual([148]);
    });

    it('runs a given version (exact or prefix) by POST with offset, fetch and query_parameters', async () => {
      const v100 = await api('POST', '/query/org.example::bp/1.0.0', { body: { offset: 0, fetch: 10, query_parameters: { min: 100 } } });
      expect(v100.status).toBe(200);
      expect(v100.body.q).toBe(BP);
      expect(rowsOf(v100.body).map((r) => r[1])).toEqual(expect.arrayContaining([162, 148, 121]));
      expect(rowsOf(v100.body).map((r) => r[1])).toEqual(rowsOf(await adhoc(BP, { min: 100 })).map((r) => r[1]));
      const ascending = await api('POST', '/query/org.example::bp/1', { body: { offset: 1, fetch: 2, query_parameters: { min: 100 } } });
      expect(ascending.body.q).toBe(BP.replace('DESC', 'ASC'));
      expect(rowsOf(ascending.body)).toEqual(rowsOf(await adhoc(BP.replace('DESC', 'ASC'), { min: 100 })).slice(1, 3));
    });

    it('runs within an EHR given as ehr_id (parameter or openehr-ehr-id header), which also answers $ehr_id', async () => {
      expect((await put('org.example::by_ehr/1.0.0', BY_EHR)).status).toBe(200);
      const viaParam = await api('GET', '/query/org.example::by_ehr?ehr_id=ehr-p-1003');
      expect(viaParam.status).toBe(200);
      expect(viaParam.body.rows).toEqual((await adhoc(BY_EHR, { ehr_id: 'ehr-p-1003' })).rows);
      expect(viaParam.body.rows.length).toBeGreaterThan(0);
      const viaHeader = await api('POST', '/query/org.example::by_ehr', {
        body: { offset: 0, fetch: 100, query_parameters: {} },
        headers: { 'content-type': 'application/json', 'openehr-ehr-id': 'ehr-p-1003' },
      });
      expect(viaHeader.body.rows).toEqual(viaParam.body.rows);
      // A population query run in one EHR sees only that EHR's compositions.
      const population = await api('GET', '/query/org.example::bp/1.0.0?min=100&ehr_id=ehr-p-1003');
      expect(rowsOf(population.body).map((r) => r[1])).toEqual([148]);
      // A query naming another EHR than its context matches nothing.
      const elsewhere = await api('POST', '/query/org.example::by_ehr?ehr_id=ehr-p-1003', { body: { query_parameters: { ehr_id: 'ehr-p-1002' } } });
      expect(elsewhere.body.rows).toEqual([]);
    });

    it('[LOG-001] logs the composition reads of a run like an ad-hoc query', async () => {
      const reader = await t.token({ roles: ['clinician'], sub: 'sq-reader' });
      const run = await api('GET', '/query/org.example::bp/1.0.0?min=160', { token: reader });
      expect(rowsOf(run.body)).toHaveLength(1);
      const [uid] = rowsOf(run.body)[0];
      const log = await t.graphql('{ accessLog(patientId: "p-1002", limit: 100) { data { actor action entityType entityId } } }');
      expect(log.body.data.accessLog.data).toContainEqual({ actor: 'sq-reader', action: 'list', entityType: 'Composition', entityId: uid });
    });

    it('answers 404 for an unknown query or version, 400 for bad names, parameters and paging', async () => {
      for (const path of ['/query/org.example::none', '/query/org.example::bp/9', '/query/org.example::bp/1.0.9']) {
        const get = await api('GET', path);
        expect({ path, status: get.status }).toEqual({ path, status: 404 });
        expect((await api('POST', path, { body: { offset: 0, fetch: 1, query_parameters: {} } })).status).toBe(404);
      }
      const missing = await api('GET', '/query/org.example::bp');
      expect(missing.status).toBe(400);
      expect(missing.body.message).toContain('$min');
      for (const path of [
        '/query/org.example::bp?min=1&offset=-1',
        '/query/org.example::bp?min=1&fetch=x',
        '/query/org.example::bp?query_parameters=%7Bx',
        '/query/bad%20name',
        '/query/org.example::bp/x.y',
      ]) {
        const res = await api('GET', path);
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
      }
      expect((await api('POST', '/query/org.example::bp', { body: { query_parameters: [1] } })).status).toBe(400);
      expect((await api('POST', '/query/org.example::bp', { body: { offset: 'one', query_parameters: { min: 1 } } })).status).toBe(400);
      expect((await api('POST', '/query/org.example::bp', { body: { fetch: 0, query_parameters: { min: 1 } } })).status).toBe(400);
      expect((await raw('POST', '/query/org.example::bp', { rawBody: 'min=1', headers: text })).status).toBe(415);
    });

    it('refuses a caller who reaches no records (403)', async () => {
      const support = await t.token({ roles: ['support'], sub: 'sq-support' });
      const res = await raw('GET', '/query/org.example::bp?min=1', { token: support });
      expect(res.status).toBe(403);
    });
  });
});
