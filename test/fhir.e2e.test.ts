import { startTestPlatform, backendName, type TestPlatform, type TestResponse } from './harness';
import { ENCOUNTER, envelope, LAB, NOTE, ORDER, VITALS } from './ehr-fixtures';
import { loadFhirClient, validateFhir } from './fhir-support';

const LOINC = 'http://loinc.org';
const FHIR_JSON = /^application\/fhir\+json/;

describe(`FHIR R4 facade /fhir/R4 (${backendName})`, () => {
  let t: TestPlatform;
  let client: any;
  let acmeClient: any;
  /** Resources the facade emitted in this suite, each validated against the FHIR R4 definitions. */
  let validated = 0;

  /** Every answer of a FHIR client call is validated (results and OperationOutcomes alike). */
  const fhir = async <T = any>(call: Promise<T>): Promise<T> => {
    const result = await call;
    validated += validateFhir(result);
    return result;
  };
  /** A call expected to fail: returns status and the validated OperationOutcome. */
  const failing = async (call: Promise<unknown>): Promise<{ status: number; outcome: any }> => {
    try {
      await call;
    } catch (err: any) {
      const outcome = err.response?.data;
      expect(outcome?.resourceType).toBe('OperationOutcome');
      validated += validateFhir(outcome);
      return { status: err.response.status, outcome };
    }
    throw new Error('expected the FHIR call to fail');
  };
  /** Plain HTTP to /fhir/R4, for what a client library cannot express; FHIR answers are validated too. */
  const http = async (method: string, path: string, options: Parameters<TestPlatform['request']>[2] = {}): Promise<TestResponse> => {
    const res = await t.request(method, `/fhir/R4${path}`, options);
    if (res.text) {
      expect(res.headers.get('content-type')).toMatch(FHIR_JSON);
      validated += validateFhir(res.body);
    }
    return res;
  };
  const openehr = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.request(method, `/openehr/v1${path}`, { body, headers: { prefer: 'return=representation', ...headers } });

  beforeAll(async () => {
    t = await startTestPlatform();
    const Client = await loadFhirClient();
    client = new Client({ baseUrl: `${t.url}/fhir/R4`, bearerToken: await t.token({ roles: ['clinician'], sub: 'dr-jones' }) });
    acmeClient = new Client({ baseUrl: `${t.url}/fhir/R4`, bearerToken: await t.token({ tenants: ['acme'] }) });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('[XCH-001] publishes a CapabilityStatement listing exactly the supported interactions and search parameters', async () => {
    const cap = await fhir(client.capabilityStatement());
    expect(cap).toMatchObject({ resourceType: 'CapabilityStatement', fhirVersion: '4.0.1', format: expect.arrayContaining(['application/fhir+json']) });
    const resources = cap.rest[0].resource;
    expect(resources.map((r: any) => r.type)).toEqual([
      'Patient',
      'Encounter',
      'Observation',
      'MedicationRequest',
      'DocumentReference',
      'Appointment',
      'List',
      'Binary',
      'AuditEvent',
    ]);
    const of = (type: string) => resources.find((r: any) => r.type === type);
    expect(of('AuditEvent')).toMatchObject({ interaction: [{ code: 'read' }, { code: 'search-type' }], versioning: 'no-version', readHistory: false });
    expect(of('AuditEvent').searchParam.map((p: any) => p.name)).toEqual(['patient', 'date']);
    expect(of('Patient').interaction.map((i: any) => i.code)).toEqual(['read', 'vread', 'history-instance', 'search-type', 'create', 'update', 'patch']);
    expect(of('Observation').interaction.map((i: any) => i.code)).toEqual([
      'read',
      'vread',
      'history-instance',
      'search-type',
      'create',
      'update',
      'patch',
      'delete',
    ]);
    expect(of('Encounter').interaction.map((i: any) => i.code)).toEqual(['read', 'vread', 'history-instance', 'search-type']);
    expect(of('Patient').searchParam.map((p: any) => p.name)).toEqual(['_id', 'identifier', 'name', 'birthdate', 'gender']);
    expect(of('Observation').searchParam.map((p: any) => p.name)).toEqual([
      '_id',
      '_lastUpdated',
      'patient',
      'subject',
      'category',
      'code',
      'date',
      'value-quantity',
    ]);
    expect(of('MedicationRequest').searchParam.map((p: any) => p.name)).toEqual(['_id', '_lastUpdated', 'patient', 'subject', 'intent', 'status']);
    expect(of('DocumentReference').searchParam.map((p: any) => p.name)).toEqual([
      '_id',
      '_lastUpdated',
      'patient',
      'subject',
      'category',
      'type',
      'date',
      'status',
      'security-label',
      'format',
    ]);
    expect(of('Appointment').searchParam.map((p: any) => p.name)).toEqual(['_id', '_lastUpdated', 'patient', 'date', 'status']);
    expect(of('Patient').operation).toEqual([expect.objectContaining({ name: 'everything' })]);
  });

  describe('a vital-signs composition committed through openEHR REST', () => {
    let compositionId: string;
    let bpId: string;
    let hrId: string;

    beforeAll(async () => {
      const created = await openehr('POST', '/ehr/ehr-p-1001/composition', envelope(VITALS));
      expect(created.status).toBe(201);
      compositionId = created.body.uid.value.split('::')[0];
      bpId = `${compositionId}.blood-pressure`;
      hrId = `${compositionId}.pulse`;
    });

    it('[XCH-003] reads back as FHIR Observations with LOINC codes and UCUM units', async () => {
      const bp = await fhir(client.read({ resourceType: 'Observation', id: bpId }));
      expect(bp).toMatchObject({
        resourceType: 'Observation',
        id: bpId,
        meta: { versionId: '1' },
        status: 'final',
        category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }] }],
        code: { coding: [{ system: LOINC, code: '85354-9' }] },
        subject: { reference: 'Patient/p-1001' },
        effectiveDateTime: VITALS.recorded_at,
        component: [
          {
            code: { coding: [{ system: LOINC, code: '8480-6' }] },
            valueQuantity: { value: 120, unit: 'mm[Hg]', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
          },
          {
            code: { coding: [{ system: LOINC, code: '8462-4' }] },
            valueQuantity: { value: 80, unit: 'mm[Hg]', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
          },
        ],
      });
      const hr = await fhir(client.read({ resourceType: 'Observation', id: hrId }));
      expect(hr).toMatchObject({
        code: { coding: [{ system: LOINC, code: '8867-4' }] },
        valueQuantity: { value: 72, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' },
      });
      const raw = await http('GET', `/Observation/${bpId}`);
      expect(raw.headers.get('etag')).toBe('W/"1"');
      expect(new Date(raw.headers.get('last-modified')!).getTime()).not.toBeNaN();
    });

    it('is found by patient and date (and code, category) in searchset Bundles with total and next links', async () => {
      const byPatientDate = await fhir(client.search({ resourceType: 'Observation', searchParams: { patient: 'Patient/p-1001', date: '2026-11-22' } }));
      expect(byPatientDate).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 2 });
      expect(byPatientDate.entry.map((e: any) => e.resource.id).sort()).toEqual([bpId, hrId].sort());
      expect(byPatientDate.entry[0].fullUrl).toBe(`${t.url}/fhir/R4/Observation/${byPatientDate.entry[0].resource.id}`);
      const ranges = [
        [{ date: 'ge2026-11-22T09:00:00Z' }, 2],
        [{ date: 'gt2026-11-22' }, 0],
        [{ date: 'lt2026-11-22' }, 0],
        [{ date: 'le2026-11' }, 2],
        [{ date: '2026' }, 2],
        [{ code: `${LOINC}|85354-9` }, 1],
        [{ code: '8867-4' }, 1],
        [{ code: 'http://snomed.info/sct|8867-4' }, 0],
        [{ category: 'vital-signs' }, 2],
        [{ category: 'laboratory' }, 0],
      ] as const;
      for (const [params, total] of ranges) {
        const bundle = await fhir(client.search({ resourceType: 'Observation', searchParams: { patient: 'p-1001', ...params } }));
        expect([params, bundle.total]).toEqual([params, total]);
      }
      const page1 = await fhir(client.search({ resourceType: 'Observation', searchParams: { patient: 'Patient/p-1001', _count: 1 } }));
      expect(page1.total).toBe(2);
      expect(page1.entry).toHaveLength(1);
      const next = page1.link.find((l: any) => l.relation === 'next');
      expect(next.url).toContain('_offset=1');
      const page2 = await fhir(client.nextPage({ bundle: page1 }));
      expect(page2.entry).toHaveLength(1);
      expect(page2.entry[0].resource.id).not.toBe(page1.entry[0].resource.id);
      expect(page2.link.find((l: any) => l.relation === 'next')).toBeUndefined();
      const posted = await http('POST', '/Observation/_search', {
        rawBody: 'patient=Patient%2Fp-1001&date=2026-11-22&code=8867-4',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(posted.status).toBe(200);
      expect(posted.body.entry.map((e: any) => e.resource.id)).toEqual([hrId]);
    });

    it('shows the same version history in both APIs, and FHIR updates need the current If-Match', async () => {
      const v1 = (await openehr('GET', `/ehr/ehr-p-1001/composition/${compositionId}`)).body.uid.value;
      const changed = { ...VITALS, blood_pressure: { ...VITALS.blood_pressure, systolic: { magnitude: 142, unit: 'mm[Hg]' } } };
      const put = await openehr('PUT', `/ehr/ehr-p-1001/composition/${compositionId}`, envelope(changed), { 'if-match': `"${v1}"` });
      expect(put.status).toBe(200);

      const history = await fhir(client.history({ resourceType: 'Observation', id: bpId }));
      expect(history).toMatchObject({ resourceType: 'Bundle', type: 'history', total: 2 });
      expect(history.entry.map((e: any) => [e.resource.meta.versionId, e.resource.component[0].valueQuantity.value, e.request.method])).toEqual([
        ['2', 142, 'PUT'],
        ['1', 120, 'POST'],
      ]);
      const old = await fhir(client.vread({ resourceType: 'Observation', id: bpId, version: '1' }));
      expect(old.component[0].valueQuantity.value).toBe(120);

      // FHIR writes go the other way: version 3 of the same composition.
      const current = await fhir(client.read({ resourceType: 'Observation', id: bpId }));
      current.component[0].valueQuantity.value = 138;
      const stale = await failing(client.update({ resourceType: 'Observation', id: bpId, body: current, options: { headers: { 'If-Match': 'W/"1"' } } }));
      expect(stale.status).toBe(412);
      const updated = await fhir(client.update({ resourceType: 'Observation', id: bpId, body: current, options: { headers: { 'If-Match': 'W/"2"' } } }));
      expect(updated.meta.versionId).toBe('3');
      expect(updated.component[0].valueQuantity.value).toBe(138);
      const pulse = await fhir(client.read({ resourceType: 'Observation', id: hrId }));
      pulse.valueQuantity.value = 66;
      expect(
        (await fhir(client.update({ resourceType: 'Observation', id: hrId, body: pulse, options: { headers: { 'If-Match': 'W/"3"' } } }))).meta.versionId,
      ).toBe('4');

      const revisions = await openehr('GET', `/ehr/ehr-p-1001/versioned_composition/${compositionId}/revision_history`);
      expect(revisions.body.items.map((r: any) => [r.version_id.value.split('::')[2], r.audits[0].committer.name])).toEqual([
        ['1', 'test-user'],
        ['2', 'test-user'],
        ['3', 'dr-jones'],
        ['4', 'dr-jones'],
      ]);
      // vital_signs.v1 is an operational template: openEHR answers its standard forms.
      const flat = (await openehr('GET', `/ehr/ehr-p-1001/composition/${compositionId}?format=FLAT`)).body;
      expect(flat).toMatchObject({
        'vital_signs/blood_pressure/any_event:0/systolic|magnitude': 138,
        'vital_signs/pulse_heart_beat/any_event:0/rate|magnitude': 66,
      });
      const audit = await t.request('GET', `/api/ehr/audit?entityId=${compositionId}`);
      expect(audit.body.data.map((a: any) => [a.action, a.actor])).toEqual([
        ['update', 'dr-jones'],
        ['update', 'dr-jones'],
        ['update', 'test-user'],
        ['create', 'test-user'],
      ]);
    });

    it('is returned by an AQL query', async () => {
      const res = await t.request('POST', '/openehr/v1/query/aql', {
        body: {
          q: 'SELECT c/uid/value, o/systolic/magnitude FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2] WHERE o/systolic/magnitude = 138',
          query_parameters: { ehr: 'ehr-p-1001' },
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.rows).toEqual([[`${compositionId}::caregraph.local::4`, 138]]);
    });

    it('is deleted in FHIR when openEHR deletes it: read 410 Gone, history ends with a DELETE entry', async () => {
      const del = await t.request('DELETE', `/openehr/v1/ehr/ehr-p-1001/composition/${compositionId}::caregraph.local::4`);
      expect(del.status).toBe(204);
      const gone = await failing(client.read({ resourceType: 'Observation', id: bpId }));
      expect(gone.status).toBe(410);
      expect(gone.outcome.issue[0].code).toBe('deleted');
      // vread of the deletion version is Gone too; of an earlier version, the version.
      expect((await failing(client.vread({ resourceType: 'Observation', id: bpId, version: '5' }))).status).toBe(410);
      const history = await fhir(client.history({ resourceType: 'Observation', id: bpId }));
      expect(history.entry[0]).toMatchObject({ request: { method: 'DELETE' }, response: { status: '204' } });
      expect(history.entry[0].resource).toBeUndefined();
      expect((await fhir(client.vread({ resourceType: 'Observation', id: bpId, version: '2' }))).meta.versionId).toBe('2');
    });
  });

  describe('Patient', () => {
    it('reads, searches by every supported parameter, creates and updates with If-Match and history', async () => {
      const anna = await fhir(client.read({ resourceType: 'Patient', id: 'p-1001' }));
      expect(anna).toMatchObject({
        id: 'p-1001',
        meta: { versionId: '1' },
        identifier: [
          { system: 'urn:caregraph:patient-id', value: 'p-1001' },
          { system: 'urn:openehr:ehr-id', value: 'ehr-p-1001' },
        ],
        name: [{ family: 'de Vries', given: ['Anna'] }],
        gender: 'female',
        birthDate: '1984-03-12',
        telecom: [
          { system: 'phone', value: '+31612345671' },
          { system: 'email', value: 'anna.devries@example.org' },
        ],
      });
      const ids = async (searchParams: Record<string, string>) =>
        (await fhir(client.search({ resourceType: 'Patient', searchParams }))).entry?.map((e: any) => e.resource.id).sort() ?? [];
      expect(await ids({ _id: 'p-1002' })).toEqual(['p-1002']);
      expect(await ids({ identifier: 'urn:openehr:ehr-id|ehr-p-1003' })).toEqual(['p-1003']);
      expect(await ids({ identifier: 'p-1001' })).toEqual(['p-1001']);
      expect(await ids({ name: 'jan' })).toEqual(['p-1002']);
      expect(await ids({ name: 'vries' })).toEqual(['p-1001']);
      expect(await ids({ 'name:exact': 'Anna' })).toEqual(['p-1001']);
      expect(await ids({ gender: 'female' })).toEqual(['p-1001', 'p-1003']);
      expect(await ids({ birthdate: 'lt1980-01-01' })).toEqual(['p-1002']);
      expect(await ids({ birthdate: '1995-12' })).toEqual(['p-1003']);
      expect(await ids({ gender: 'female', birthdate: 'ge1990' })).toEqual(['p-1003']);
      expect(await ids({ _id: 'p-2001' })).toEqual([]);

      const created = await http('POST', '/Patient', {
        body: {
          resourceType: 'Patient',
          name: [{ family: 'Smit', given: ['Eva'] }],
          gender: 'female',
          birthDate: '1990-02-03',
          telecom: [{ system: 'phone', value: '+31611112222' }],
        },
        headers: { 'content-type': 'application/fhir+json', 'x-change-reason': 'registration' },
      });
      expect(created.status).toBe(201);
      const id = created.body.id;
      expect(created.headers.get('location')).toBe(`${t.url}/fhir/R4/Patient/${id}/_history/1`);
      expect(created.headers.get('etag')).toBe('W/"1"');
      const ehr = await t.request('GET', `/openehr/v1/ehr?subject_id=${id}&subject_namespace=caregraph`);
      expect(ehr.body.ehr_id.value).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

      const eva = await fhir(client.read({ resourceType: 'Patient', id }));
      eva.name = [{ family: 'Smit-de Boer', given: ['Eva'] }];
      const stale = await failing(client.update({ resourceType: 'Patient', id, body: eva, options: { headers: { 'If-Match': 'W/"5"' } } }));
      expect(stale.status).toBe(412);
      const updated = await fhir(client.update({ resourceType: 'Patient', id, body: eva, options: { headers: { 'If-Match': 'W/"1"' } } }));
      expect(updated).toMatchObject({ meta: { versionId: '2' }, name: [{ family: 'Smit-de Boer' }] });
      const history = await fhir(client.history({ resourceType: 'Patient', id }));
      expect(history.entry.map((e: any) => [e.resource.meta.versionId, e.resource.name[0].family])).toEqual([
        ['2', 'Smit-de Boer'],
        ['1', 'Smit'],
      ]);
      expect((await fhir(client.vread({ resourceType: 'Patient', id, version: '1' }))).name[0].family).toBe('Smit');
      const audit = await t.request('GET', `/api/ehr/audit?entityId=${id}&entityType=Patient`);
      expect(audit.body.data.map((a: any) => [a.action, a.actor, a.reason])).toEqual([
        ['update', 'dr-jones', null],
        ['create', 'test-user', 'registration'],
      ]);

      // A blood pressure Observation created in FHIR is an openEHR composition of the new patient.
      const observation = await fhir(
        client.create({
          resourceType: 'Observation',
          body: {
            resourceType: 'Observation',
            status: 'final',
            code: { coding: [{ system: LOINC, code: '85354-9' }] },
            subject: { reference: `Patient/${id}` },
            effectiveDateTime: '2026-11-21T10:15:00+01:00',
            component: [
              {
                code: { coding: [{ system: LOINC, code: '8480-6' }] },
                valueQuantity: { value: 128, unit: 'mm[Hg]', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
              },
              {
                code: { coding: [{ system: LOINC, code: '8462-4' }] },
                valueQuantity: { value: 84, unit: 'mm[Hg]', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
              },
            ],
          },
        }),
      );
      expect(observation.meta.versionId).toBe('1');
      const ehrId = (await t.request('GET', `/openehr/v1/ehr?subject_id=${id}&subject_namespace=caregraph`)).body.ehr_id.value;
      const composition = await t.request('GET', `/openehr/v1/ehr/${ehrId}/composition/${observation.id.split('.')[0]}?format=FLAT`);
      expect(composition.body).toMatchObject({
        'vital_signs/blood_pressure/any_event:0/systolic|magnitude': 128,
        'vital_signs/blood_pressure/any_event:0/systolic|unit': 'mm[Hg]',
        'vital_signs/blood_pressure/any_event:0/diastolic|magnitude': 84,
        'vital_signs/blood_pressure/any_event:0/time': '2026-11-21T10:15:00+01:00',
      });
      expect(Object.keys(composition.body).some((k) => k.startsWith('vital_signs/pulse_heart_beat/'))).toBe(false);
    });
  });

  describe('the other mapped records', () => {
    beforeAll(async () => {
      for (const [templateId, content] of [
        ['lab_result.v1', LAB],
        ['encounter.v1', ENCOUNTER],
        ['medication_order.v1', ORDER],
        ['clinical_note.v1', NOTE('Doing well.')],
      ] as const) {
        const res = await t.request('POST', '/api/ehr/compositions', { body: { templateId, ehrId: 'ehr-p-1002', content } });
        expect(res.status).toBe(201);
      }
    });

    it('[XCH-003] maps lab results, encounters, medication orders, notes and appointments, searchable by their parameters', async () => {
      const search = (resourceType: string, searchParams: Record<string, string>) => fhir(client.search({ resourceType, searchParams }));
      const lab = await search('Observation', { patient: 'p-1002', category: 'laboratory' });
      expect(lab.entry[0].resource).toMatchObject({
        code: { coding: [{ system: LOINC, code: '2345-7' }] },
        valueQuantity: { value: 5.4, code: 'mmol/L' },
        effectiveDateTime: '2026-11-22T08:00:00Z',
      });
      const encounter = await search('Encounter', { patient: 'Patient/p-1002', date: 'ge2026-11-22' });
      expect(encounter.entry[0].resource).toMatchObject({ status: 'in-progress', class: { code: 'AMB' }, period: { start: '2026-11-22T09:30:00Z' } });
      expect((await search('Encounter', { patient: 'Patient/p-1002', date: 'lt2026-11-22' })).total).toBe(0);
      const meds = await search('MedicationRequest', { patient: 'p-1002', intent: 'order', status: 'active' });
      expect(meds.entry[0].resource).toMatchObject({
        intent: 'order',
        medicationCodeableConcept: { text: 'Metformin 500 mg tablet' },
        dosageInstruction: [{ doseAndRate: [{ doseQuantity: { value: 500, code: 'mg' } }] }],
      });
      expect((await search('MedicationRequest', { patient: 'p-1002', status: 'completed' })).total).toBe(0);
      const notes = await search('DocumentReference', { patient: 'p-1002', type: `${LOINC}|11506-3`, category: 'clinical-note', date: '2026-11-22' });
      expect(Buffer.from(notes.entry[0].resource.content[0].attachment.data, 'base64').toString()).toBe('Doing well.');
      const appointments = await search('Appointment', { patient: 'p-1001', status: 'booked' });
      expect(appointments.entry.map((e: any) => e.resource.id)).toEqual(['appt-1001']);
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      expect((await search('Appointment', { date: tomorrow })).entry.map((e: any) => e.resource.id)).toEqual(['appt-1001']);
      expect((await search('Appointment', { patient: 'p-1001', status: 'cancelled' })).total).toBe(0);
      const appointment = await fhir(client.read({ resourceType: 'Appointment', id: 'appt-1001' }));
      expect(appointment).toMatchObject({
        status: 'booked',
        participant: [{ actor: { reference: 'Patient/p-1001' } }, { actor: { display: 'Clinic Amstel, room 2' } }],
      });
    });

    it('answers Patient/{id}/$everything with the patient and all their resources', async () => {
      const everything = await fhir(client.operation({ name: '$everything', resourceType: 'Patient', id: 'p-1002', method: 'GET' }));
      expect(everything.type).toBe('searchset');
      const types = everything.entry.map((e: any) => e.resource.resourceType);
      expect(types[0]).toBe('Patient');
      expect(types).toEqual(expect.arrayContaining(['Observation', 'Encounter', 'MedicationRequest', 'DocumentReference']));
      expect(everything.total).toBe(everything.entry.length);
    });
  });

  describe('errors', () => {
    it('[XCH-006] answers unsupported interactions with an OperationOutcome 501 or 400, never 500', async () => {
      const cases: Array<[string, string, Parameters<TestPlatform['request']>[2], number]> = [
        ['DELETE', '/Patient/p-1001', {}, 501],
        ['PATCH', '/Encounter/p-1001', { body: [], headers: { 'content-type': 'application/json-patch+json' } }, 501],
        ['PATCH', '/Patient/p-1001', { body: { resourceType: 'Parameters' }, headers: { 'content-type': 'application/fhir+json' } }, 501],
        ['POST', '/', { body: { resourceType: 'Bundle', type: 'batch' }, headers: { 'content-type': 'application/fhir+json' } }, 501],
        // A transaction is MHD ITI-65's (test/mhd.e2e.test.ts): one without its SubmissionSet List is invalid.
        ['POST', '/', { body: { resourceType: 'Bundle', type: 'transaction' }, headers: { 'content-type': 'application/fhir+json' } }, 400],
        ['GET', '/Condition', {}, 501],
        ['GET', '/Condition/1', {}, 501],
        ['GET', '/Patient/_history', {}, 501],
        ['GET', '/Patient/p-1001/$summary', {}, 501],
        ['POST', '/Encounter', { body: { resourceType: 'Encounter' }, headers: { 'content-type': 'application/fhir+json' } }, 501],
        ['GET', '/Patient?address=Amsterdam', { headers: { prefer: 'handling=strict' } }, 400],
        ['GET', '/Observation?_include=Observation:encounter', {}, 400],
        ['GET', '/Observation?date=sa2026', {}, 400],
        ['GET', '/Observation?date=yesterday', {}, 400],
        ['GET', '/Patient?name:contains=an', { headers: { prefer: 'handling=strict' } }, 400],
        ['GET', '/Patient/p-1001?_format=xml', {}, 406],
        [
          'POST',
          '/Patient',
          {
            body: { resourceType: 'Patient', name: [{ family: 'X', given: ['Y'] }], address: [{ city: 'Utrecht' }] },
            headers: { 'content-type': 'application/fhir+json' },
          },
          400,
        ],
        ['POST', '/Patient', { rawBody: '{not json', headers: { 'content-type': 'application/fhir+json' } }, 400],
        [
          'POST',
          '/Observation',
          {
            body: {
              resourceType: 'Observation',
              status: 'final',
              code: { coding: [{ system: LOINC, code: '2345-7' }] },
              subject: { reference: 'Patient/p-1001' },
              effectiveDateTime: '2026-11-22T09:00:00Z',
            },
            headers: { 'content-type': 'application/fhir+json' },
          },
          400,
        ],
        ['GET', '/Observation/not-a-composition', {}, 404],
        ['GET', '/Patient/p-1001/_history/9', {}, 404],
      ];
      for (const [method, path, options, status] of cases) {
        const res = await http(method, path, options);
        expect([method, path, res.status]).toEqual([method, path, status]);
        expect(res.body.resourceType).toBe('OperationOutcome');
      }
      const anonymous = await http('GET', '/Patient/p-1001', { token: null });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.issue[0].code).toBe('login');
    });

    it("[SEC-004] keeps tenants apart: another tenant's records answer 404 and are never found", async () => {
      expect((await failing(acmeClient.read({ resourceType: 'Patient', id: 'p-1001' }))).status).toBe(404);
      const observations = await fhir(client.search({ resourceType: 'Observation', searchParams: { patient: 'p-1002' } }));
      const id = observations.entry[0].resource.id;
      expect((await failing(acmeClient.read({ resourceType: 'Observation', id }))).status).toBe(404);
      expect((await failing(acmeClient.history({ resourceType: 'Observation', id }))).status).toBe(404);
      expect((await fhir(acmeClient.search({ resourceType: 'Observation', searchParams: { patient: 'p-1002' } }))).total).toBe(0);
      expect((await fhir(acmeClient.search({ resourceType: 'Patient', searchParams: { _id: 'p-1001' } }))).total).toBe(0);
      expect((await failing(acmeClient.operation({ name: '$everything', resourceType: 'Patient', id: 'p-1001', method: 'GET' }))).status).toBe(404);
    });
  });

  it('[XCH-002] validated every resource it received against the FHIR R4 definitions', () => {
    expect(validated).toBeGreaterThan(100);
  });
});
