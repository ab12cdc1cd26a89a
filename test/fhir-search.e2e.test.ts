import { startTestPlatform, backendName, type TestPlatform, type TestResponse } from './harness';
import { LAB } from './ehr-fixtures';
import { validateFhir } from './fhir-support';

const LOINC = 'http://loinc.org';

/** Paths of empty arrays, objects or strings anywhere in a JSON value (FHIR JSON forbids them). */
function empties(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.length === 0 ? [path] : value.flatMap((v, i) => empties(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length === 0 ? [path] : entries.flatMap(([k, v]) => empties(v, `${path}.${k}`));
  }
  return value === '' ? [path] : [];
}

describe(`FHIR R4 search, conditional interactions and HTTP semantics (${backendName})`, () => {
  let t: TestPlatform;
  let validated = 0;
  const observations: Record<string, string> = {};
  let before: string;

  /** Every FHIR answer is checked against the FHIR R4 StructureDefinitions and for empty arrays. */
  const http = async (method: string, path: string, options: Parameters<TestPlatform['request']>[2] = {}): Promise<TestResponse> => {
    const res = await t.request(method, `/fhir/R4${path}`, options);
    if (res.text) {
      expect(res.headers.get('content-type')).toMatch(/^application\/fhir\+json/);
      validated += validateFhir(res.body);
      expect(empties(res.body)).toEqual([]);
    }
    return res;
  };
  const search = async (query: string, headers: Record<string, string> = {}) => {
    const res = await http('GET', `/${query}`, { headers });
    expect([query, res.status]).toEqual([query, 200]);
    return res.body;
  };
  const ids = (bundle: any, mode = 'match') => (bundle.entry ?? []).filter((e: any) => e.search.mode === mode).map((e: any) => e.resource.id);
  const pulse = (rate: number, at: string) => ({
    templateId: 'vital_signs.v1',
    ehrId: 'ehr-p-1003',
    content: {
      blood_pressure: { systolic: { magnitude: 110 + rate / 10, unit: 'mm[Hg]' }, diastolic: { magnitude: 70, unit: 'mm[Hg]' } },
      pulse: { rate: { magnitude: rate, unit: '/min' } },
      recorded_at: at,
    },
  });

  beforeAll(async () => {
    t = await startTestPlatform();
    before = new Date(Date.now() - 1000).toISOString();
    for (const [rate, at] of [
      [60, '2026-11-20T08:00:00Z'],
      [75, '2026-11-21T08:00:00Z'],
      [90, '2026-11-22T08:00:00Z'],
    ] as const) {
      const res = await t.request('POST', '/api/ehr/compositions', { body: pulse(rate, at) });
      expect(res.status).toBe(201);
      observations[rate] = `${res.body.id}.pulse`;
    }
    const lab = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'lab_result.v1', ehrId: 'ehr-p-1003', content: LAB } });
    expect(lab.status).toBe(201);
    observations.lab = lab.body.id;
  });
  afterAll(async () => {
    await t?.stop();
  });

  describe('/metadata and content negotiation', () => {
    it('publishes the CapabilityStatement without a token, with conditional interactions and includes', async () => {
      const res = await http('GET', '/metadata', { token: null });
      expect(res.status).toBe(200);
      const observation = res.body.rest[0].resource.find((r: any) => r.type === 'Observation');
      expect(observation).toMatchObject({
        conditionalCreate: true,
        conditionalUpdate: true,
        searchInclude: ['Observation:patient', 'Observation:subject'],
      });
      expect(observation.searchParam.find((p: any) => p.name === 'value-quantity').type).toBe('quantity');
      expect(res.body.rest[0].resource.find((r: any) => r.type === 'Patient').searchRevInclude).toContain('Observation:subject');
      expect(res.body.rest[0].searchParam.map((p: any) => p.name)).toEqual(['_count', '_offset', '_sort', '_summary', '_elements', '_include', '_revinclude']);
      expect(res.body.implementation.url).toBe(`${t.url}/fhir/R4`);
      // Everything else still needs a token.
      expect((await http('GET', '/Patient/p-1003', { token: null })).status).toBe(401);
    });

    it('answers 406 with an OperationOutcome when Accept names only XML, and JSON when JSON is acceptable at all', async () => {
      for (const accept of ['application/fhir+xml', 'application/xml, text/xml']) {
        const res = await http('GET', '/Patient/p-1003', { headers: { accept } });
        expect([accept, res.status, res.body.resourceType, res.body.issue[0].code]).toEqual([accept, 406, 'OperationOutcome', 'not-supported']);
      }
      expect((await http('GET', '/metadata', { token: null, headers: { accept: 'application/fhir+xml' } })).status).toBe(406);
      for (const accept of ['application/fhir+xml;q=1, application/fhir+json;q=0.5', 'application/json', '*/*']) {
        expect([accept, (await http('GET', '/Patient/p-1003', { headers: { accept } })).status]).toEqual([accept, 200]);
      }
    });

    it('answers 404 for a resource that never existed', async () => {
      expect((await http('GET', '/Observation/00000000-0000-4000-8000-000000000000.pulse')).status).toBe(404);
      expect((await http('GET', '/Patient/p-9999')).status).toBe(404);
    });
  });

  describe('search parameters', () => {
    it('[XCH-004] finds by subject as by patient, by _id and by _lastUpdated with prefixes', async () => {
      const byPatient = await search('Observation?patient=Patient/p-1003&code=8867-4');
      const bySubject = await search(`Observation?subject=Patient/p-1003&code=${encodeURIComponent(`${LOINC}|8867-4`)}`);
      expect(ids(bySubject)).toEqual(ids(byPatient));
      expect(ids(bySubject).sort()).toEqual([observations[60], observations[75], observations[90]].sort());
      expect(ids(await search(`Observation?subject:Patient=p-1003&_id=${observations[75]}`))).toEqual([observations[75]]);
      expect((await search(`Observation?patient=p-1003&_lastUpdated=ge${before}`)).total).toBe(7);
      expect((await search(`Observation?patient=p-1003&_lastUpdated=lt${before}`)).total).toBe(0);
      expect((await search(`Observation?patient=p-1003&_lastUpdated=gt2100-01-01`)).total).toBe(0);
    });

    it('[XCH-004] applies quantity prefixes and token/date modifiers', async () => {
      const rates = async (q: string) => ids(await search(`Observation?patient=p-1003&${q}`)).sort();
      expect(await rates('value-quantity=gt70')).toEqual([observations[75], observations[90]].sort());
      expect(await rates('value-quantity=le75||/min')).toEqual([observations[60], observations[75]].sort());
      expect(await rates('value-quantity=75')).toEqual([observations[75]]);
      expect(await rates('value-quantity=ne75&code=8867-4')).toEqual([observations[60], observations[90]].sort());
      expect(await rates('value-quantity=75|http://unitsofmeasure.org|mm[Hg]')).toEqual([]);
      expect(await rates('value-quantity=lt6&category=laboratory')).toEqual([observations.lab]);
      // Blood pressure panels have components, no valueQuantity.
      expect((await search('Observation?patient=p-1003&value-quantity:missing=true')).total).toBe(3);
      expect((await search('Observation?patient=p-1003&value-quantity:missing=false')).total).toBe(4);
      expect(await rates('category:not=vital-signs')).toEqual([observations.lab]);
      expect(await rates('date=ge2026-11-21&date=lt2026-11-22&code=8867-4')).toEqual([observations[75]]);
      expect(await rates('date=ne2026-11-21&code=8867-4')).toEqual([observations[60], observations[90]].sort());
      expect((await search('Observation?patient=p-1003&date:missing=true')).total).toBe(0);
      // Patients: :missing, :not and :exact in SQL.
      const patients = async (q: string) => ids(await search(`Patient?${q}`)).sort();
      expect(await patients('gender:not=female')).toEqual(['p-1002']);
      expect(await patients('birthdate:missing=false&gender=female')).toEqual(['p-1001', 'p-1003']);
      expect(await patients('birthdate:missing=true')).toEqual([]);
      expect(await patients('name:exact=Bakker')).toEqual(['p-1003']);
    });

    it('[XCH-004] sorts by _sort (date, -date, _lastUpdated, patient name and birthdate)', async () => {
      const order = [observations[60], observations[75], observations[90]];
      expect(ids(await search('Observation?patient=p-1003&code=8867-4&_sort=date'))).toEqual(order);
      expect(ids(await search('Observation?patient=p-1003&code=8867-4&_sort=-date'))).toEqual([...order].reverse());
      // Default: newest clinical time first.
      expect(ids(await search('Observation?patient=p-1003&code=8867-4'))).toEqual([...order].reverse());
      // Committed in the order 60, 75, 90.
      expect(ids(await search('Observation?patient=p-1003&code=8867-4&_sort=_lastUpdated'))).toEqual(order);
      expect(ids(await search('Observation?patient=p-1003&code=8867-4&_sort=-_lastUpdated'))).toEqual([...order].reverse());
      expect(ids(await search('Patient?_sort=-birthdate'))).toEqual(['p-1003', 'p-1001', 'p-1002']);
      expect(ids(await search('Patient?_id=p-1002,p-1003&_sort=-name'))).toEqual(['p-1002', 'p-1003']);
      expect(ids(await search('Patient?_id=p-1002,p-1003&_sort=name'))).toEqual(['p-1003', 'p-1002']);
      expect((await http('GET', '/Observation?_sort=value-quantity')).status).toBe(400);
    });

    it('[XCH-004] pages with _count and next/previous links that repeat the applied parameters', async () => {
      const first = await search('Observation?patient=p-1003&_sort=date&_count=3');
      expect(first.total).toBe(7);
      expect(first.entry).toHaveLength(3);
      const link = (bundle: any, relation: string) => bundle.link.find((l: any) => l.relation === relation)?.url as string | undefined;
      expect(link(first, 'previous')).toBeUndefined();
      const seen = [...ids(first)];
      let next = link(first, 'next');
      while (next) {
        expect(next.startsWith(`${t.url}/fhir/R4/Observation?`)).toBe(true);
        expect(new URL(next).searchParams.get('_sort')).toBe('date');
        const page = await search(next.slice(`${t.url}/fhir/R4/`.length));
        expect(link(page, 'previous')).toBeDefined();
        seen.push(...ids(page));
        next = link(page, 'next');
      }
      expect(seen).toHaveLength(7);
      expect(new Set(seen).size).toBe(7);
    });

    it('answers _summary=count with the total only, _summary=true and _elements with SUBSETTED resources', async () => {
      const count = await search('Observation?patient=p-1003&_summary=count');
      expect(count.total).toBe(7);
      expect(count.entry).toBeUndefined();
      const summary = await search(`Observation?_id=${observations[60]}&patient=p-1003&_summary=true`);
      const resource = summary.entry[0].resource;
      expect(resource.meta.tag).toEqual([expect.objectContaining({ code: 'SUBSETTED' })]);
      // Observation.category and note are not summary elements in FHIR R4; code, subject, effective[x], value[x] are.
      expect(resource.category).toBeUndefined();
      expect(resource).toMatchObject({ code: { coding: [{ code: '8867-4' }] }, subject: { reference: 'Patient/p-1003' }, valueQuantity: { value: 60 } });
      expect(resource.effectiveDateTime).toBeDefined();
      const elements = await search(`Observation?_id=${observations[60]}&patient=p-1003&_elements=code,value[x]`);
      // Mandatory elements (Observation.status) come too.
      expect(Object.keys(elements.entry[0].resource).sort()).toEqual(['code', 'id', 'meta', 'resourceType', 'status', 'valueQuantity']);
      expect((await http('GET', '/Observation?_summary=text')).status).toBe(400);
    });

    it('[XCH-004] includes the referenced Patients (_include) and the resources referencing Patients (_revinclude)', async () => {
      const withPatient = await search('Observation?patient=p-1003&code=8867-4&_include=Observation:patient');
      expect(ids(withPatient)).toHaveLength(3);
      expect(ids(withPatient, 'include')).toEqual(['p-1003']);
      expect(withPatient.total).toBe(3);
      expect(ids(await search('Encounter?subject=p-1003&_include=Encounter:subject', {}))).toEqual([]);
      const withObservations = await search('Patient?_id=p-1003&_revinclude=Observation:subject');
      expect(ids(withObservations)).toEqual(['p-1003']);
      expect(ids(withObservations, 'include')).toHaveLength(7);
      expect((await http('GET', '/Observation?_revinclude=Observation:patient')).status).toBe(400);
      expect((await http('GET', '/Observation?_include=Encounter:patient')).status).toBe(400);
    });

    it('ignores and reports unknown parameters by default, and refuses them under Prefer: handling=strict', async () => {
      const lenient = await search('Observation?patient=p-1003&code=8867-4&colour=blue&code:text=x');
      expect(lenient.total).toBe(3);
      const outcome = lenient.entry.find((e: any) => e.search.mode === 'outcome');
      expect(outcome.resource.resourceType).toBe('OperationOutcome');
      expect(outcome.resource.issue.map((i: any) => i.diagnostics)).toEqual([expect.stringContaining('colour=blue'), expect.stringContaining('code:text=x')]);
      const self = new URL(lenient.link.find((l: any) => l.relation === 'self').url);
      expect([...self.searchParams.keys()]).toEqual(['patient', 'code', '_count', '_offset']);
      const strict = await http('GET', '/Observation?patient=p-1003&colour=blue', { headers: { prefer: 'handling=strict' } });
      expect([strict.status, strict.body.resourceType]).toEqual([400, 'OperationOutcome']);
      // A malformed value of a supported parameter is an error either way.
      expect((await http('GET', '/Observation?value-quantity=gtx')).status).toBe(400);
      expect((await http('GET', '/Observation?code:missing=maybe')).status).toBe(400);
    });

    it('never sends empty arrays: an empty searchset has no entry', async () => {
      const empty = await search('Observation?patient=p-1003&code=0000-0');
      expect(empty).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 0 });
      expect(empty.entry).toBeUndefined();
    });
  });

  describe('conditional create and update', () => {
    const patient = (family: string, gender = 'other') => ({ resourceType: 'Patient', name: [{ family, given: ['Test'] }], gender, birthDate: '2000-01-01' });
    const fhirJson = { 'content-type': 'application/fhir+json' };

    it('[XCH-005] creates with If-None-Exist on no match (201), returns the one match (200), refuses several (412)', async () => {
      const created = await http('POST', '/Patient', { body: patient('Conditional'), headers: { ...fhirJson, 'if-none-exist': 'name:exact=Conditional' } });
      expect(created.status).toBe(201);
      const again = await http('POST', '/Patient', { body: patient('Conditional'), headers: { ...fhirJson, 'if-none-exist': 'name:exact=Conditional' } });
      expect([again.status, again.body.id]).toEqual([200, created.body.id]);
      expect((await search('Patient?name:exact=Conditional')).total).toBe(1);
      const several = await http('POST', '/Patient', { body: patient('Other'), headers: { ...fhirJson, 'if-none-exist': 'gender=female' } });
      expect([several.status, several.body.issue[0].code]).toEqual([412, 'conflict']);
      expect((await search('Patient?name:exact=Other')).total).toBe(0);
      // An unknown parameter in a condition is refused, never ignored (it would widen the match).
      expect((await http('POST', '/Patient', { body: patient('Other'), headers: { ...fhirJson, 'if-none-exist': 'colour=blue' } })).status).toBe(400);
      expect((await http('POST', '/Patient', { body: patient('Other'), headers: { ...fhirJson, 'if-none-exist': '_count=1' } })).status).toBe(400);
    });

    it('[XCH-005] updates the one match of PUT [type]?[search], creates on no match, refuses several (412)', async () => {
      const created = await http('PUT', '/Patient?name:exact=Upserted', { body: patient('Upserted'), headers: fhirJson });
      expect(created.status).toBe(201);
      const id = created.body.id;
      const updated = await http('PUT', `/Patient?_id=${id}`, { body: { ...patient('Upserted'), birthDate: '2000-02-02' }, headers: fhirJson });
      expect([updated.status, updated.body.id, updated.body.birthDate, updated.body.meta.versionId]).toEqual([200, id, '2000-02-02', '2']);
      const wrongId = await http('PUT', `/Patient?_id=${id}`, { body: { ...patient('Upserted'), id: 'p-1001' }, headers: fhirJson });
      expect(wrongId.status).toBe(400);
      expect((await http('PUT', '/Patient?gender=female', { body: patient('X', 'female'), headers: fhirJson })).status).toBe(412);
      expect((await http('PUT', '/Patient', { body: patient('X'), headers: fhirJson })).status).toBe(400);
      expect((await search('Patient?name:exact=X')).total).toBe(0);
    });
  });

  it('[XCH-002] validated every resource it received against the FHIR R4 definitions', () => {
    expect(validated).toBeGreaterThan(50);
  });
});
