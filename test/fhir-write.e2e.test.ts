import { startTestPlatform, backendName, type TestPlatform, type TestResponse } from './harness';
import { validateFhir } from './fhir-support';

const LOINC = 'http://loinc.org';
const FHIR_JSON = { 'content-type': 'application/fhir+json' };
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };

describe(`FHIR R4 writes: patch, delete, conditional delete, media-type versions (${backendName})`, () => {
  let t: TestPlatform;
  let validated = 0;

  /** Every FHIR answer with a body is checked against the FHIR R4 StructureDefinitions. */
  const http = async (method: string, path: string, options: Parameters<TestPlatform['request']>[2] = {}): Promise<TestResponse> => {
    const res = await t.request(method, `/fhir/R4${path}`, options);
    if (res.text) {
      expect(res.headers.get('content-type')).toMatch(/^application\/fhir\+json/);
      validated += validateFhir(res.body);
    }
    return res;
  };
  const read = async (path: string, token?: string) => {
    const res = await http('GET', path, token === undefined ? {} : { token });
    expect([path, res.status]).toEqual([path, 200]);
    return res.body;
  };
  const patch = (path: string, operations: unknown, headers: Record<string, string> = {}, token?: string) =>
    http('PATCH', path, { body: operations, headers: { ...JSON_PATCH, ...headers }, ...(token === undefined ? {} : { token }) });
  /** A failure answers an OperationOutcome (validated by http). */
  const refused = (res: TestResponse) => {
    expect(res.body?.resourceType).toBe('OperationOutcome');
    return res.status;
  };
  /** A vital-signs composition (blood pressure and heart rate) of a patient, through the clinical record's own API. */
  const vitals = async (ehrId: string, rate: number, at: string) => {
    const res = await t.request('POST', '/api/ehr/compositions', {
      body: {
        templateId: 'vital_signs.v1',
        ehrId,
        content: {
          blood_pressure: { systolic: { magnitude: 120, unit: 'mm[Hg]' }, diastolic: { magnitude: 80, unit: 'mm[Hg]' } },
          pulse: { rate: { magnitude: rate, unit: '/min' } },
          recorded_at: at,
        },
      },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const audit = async (entityId: string) => (await t.request('GET', `/api/ehr/audit?entityId=${entityId}`)).body.data.map((a: any) => a.action);

  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('[XCH-001] declares patch where update works, and delete and conditional delete for Observation only', async () => {
    const res = await http('GET', '/metadata', { token: null });
    expect(res.status).toBe(200);
    expect(res.body.patchFormat).toEqual(['application/json-patch+json']);
    const of = (type: string) => res.body.rest[0].resource.find((r: any) => r.type === type);
    expect(of('Patient').interaction.map((i: any) => i.code)).toEqual(['read', 'vread', 'history-instance', 'search-type', 'create', 'update', 'patch']);
    expect(of('Appointment').interaction.map((i: any) => i.code)).toEqual(['read', 'vread', 'history-instance', 'search-type', 'create', 'update', 'patch']);
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
    expect([of('Observation').conditionalDelete, of('Patient').conditionalDelete, of('Encounter').conditionalDelete]).toEqual([
      'single',
      'not-supported',
      'not-supported',
    ]);
  });

  describe('PATCH with JSON Patch', () => {
    let id: string;
    beforeAll(async () => {
      const created = await http('POST', '/Patient', {
        body: { resourceType: 'Patient', name: [{ family: 'Patchwork', given: ['Eva'] }], gender: 'female', birthDate: '1990-02-03' },
        headers: FHIR_JSON,
      });
      expect(created.status).toBe(201);
      id = created.body.id;
    });

    it('[XCH-014] patches a Patient: the version increments, If-Match is honoured (412 otherwise) and the change is audited', async () => {
      const patched = await patch(`/Patient/${id}`, [{ op: 'replace', path: '/birthDate', value: '1990-03-04' }], {
        'if-match': 'W/"1"',
        'x-change-reason': 'birth date corrected',
      });
      expect([patched.status, patched.headers.get('etag'), patched.body.meta.versionId, patched.body.birthDate]).toEqual([200, 'W/"2"', '2', '1990-03-04']);

      const stale = await patch(`/Patient/${id}`, [{ op: 'replace', path: '/gender', value: 'other' }], { 'if-match': 'W/"1"' });
      expect([refused(stale), stale.body.issue[0].code]).toEqual([412, 'conflict']);
      expect(await read(`/Patient/${id}`)).toMatchObject({ meta: { versionId: '2' }, gender: 'female' });

      // Without If-Match the patch applies to the current version; a test operation guards it.
      const again = await patch(`/Patient/${id}`, [
        { op: 'test', path: '/name/0/family', value: 'Patchwork' },
        { op: 'add', path: '/name/0/given/-', value: 'Maria' },
      ]);
      expect([again.status, again.body.meta.versionId, again.body.name[0].given]).toEqual([200, '3', ['Eva', 'Maria']]);
      // A patch that changes nothing writes no version.
      const same = await patch(`/Patient/${id}`, [{ op: 'replace', path: '/gender', value: 'female' }]);
      expect([same.status, same.body.meta.versionId]).toEqual([200, '3']);

      const history = (await read(`/Patient/${id}/_history`)).entry.map((e: any) => [e.resource.meta.versionId, e.request.method]);
      expect(history).toEqual([
        ['3', 'PUT'],
        ['2', 'PUT'],
        ['1', 'POST'],
      ]);
      const trail = (await t.request('GET', `/api/ehr/audit?entityId=${id}&entityType=Patient`)).body.data.map((a: any) => [a.action, a.reason]);
      expect(trail).toEqual([
        ['update', null],
        ['update', 'birth date corrected'],
        ['create', null],
      ]);
    });

    it('[XCH-014] refuses invalid patches, id or type changes, invalid results and other media types with an OperationOutcome, storing nothing', async () => {
      const before = await read(`/Patient/${id}`);
      const cases: Array<[string, unknown, Record<string, string>, number]> = [
        ['no body', '', JSON_PATCH, 400],
        ['not JSON', '[{"op":', JSON_PATCH, 400],
        ['not an array', { op: 'replace', path: '/gender', value: 'male' }, JSON_PATCH, 400],
        ['unknown op', [{ op: 'frobnicate', path: '/gender' }], JSON_PATCH, 400],
        ['no JSON Pointer', [{ op: 'replace', path: 'gender', value: 'male' }], JSON_PATCH, 400],
        ['missing path', [{ op: 'remove', path: '/telecom' }], JSON_PATCH, 400],
        [
          'failed test',
          [
            { op: 'test', path: '/gender', value: 'male' },
            { op: 'replace', path: '/gender', value: 'male' },
          ],
          JSON_PATCH,
          400,
        ],
        ['id change', [{ op: 'replace', path: '/id', value: 'p-1001' }], JSON_PATCH, 400],
        ['type change', [{ op: 'replace', path: '/resourceType', value: 'Practitioner' }], JSON_PATCH, 400],
        ['invalid gender', [{ op: 'replace', path: '/gender', value: 'banana' }], JSON_PATCH, 400],
        ['unsupported element', [{ op: 'add', path: '/address', value: [{ city: 'Utrecht' }] }], JSON_PATCH, 400],
        ['bad If-Match', [{ op: 'replace', path: '/gender', value: 'male' }], { ...JSON_PATCH, 'if-match': 'W/"x"' }, 400],
        ['FHIRPath Patch', { resourceType: 'Parameters', parameter: [] }, FHIR_JSON, 501],
        ['plain text', 'gender=male', { 'content-type': 'text/plain' }, 415],
        ['another FHIR version', [{ op: 'replace', path: '/gender', value: 'male' }], { 'content-type': 'application/json-patch+json; fhirVersion=3.0' }, 415],
      ];
      for (const [name, body, headers, status] of cases) {
        const res = await http('PATCH', `/Patient/${id}`, typeof body === 'string' ? { rawBody: body, headers } : { body, headers });
        expect([name, refused(res)]).toEqual([name, status]);
      }
      expect(await read(`/Patient/${id}`)).toEqual(before);
      expect((await read(`/Patient/${id}/_history`)).total).toBe(3);
      expect(refused(await patch('/Patient/p-9999', [{ op: 'replace', path: '/gender', value: 'male' }]))).toBe(404);
      expect(refused(await patch('/Encounter/x', [{ op: 'replace', path: '/status', value: 'finished' }]))).toBe(501);
    });

    it('[XCH-014] patches a vital-signs Observation (a new composition version) and an Appointment', async () => {
      const compositionId = await vitals('ehr-p-1002', 70, '2026-11-20T08:00:00Z');
      const pulse = await patch(`/Observation/${compositionId}.pulse`, [{ op: 'replace', path: '/valueQuantity/value', value: 64 }], { 'if-match': 'W/"1"' });
      expect([pulse.status, pulse.body.meta.versionId, pulse.body.valueQuantity.value]).toEqual([200, '2', 64]);
      const flat = await t.request('GET', `/openehr/v1/ehr/ehr-p-1002/composition/${compositionId}?format=FLAT`);
      expect(flat.body['vital_signs/pulse_heart_beat/any_event:0/rate|magnitude']).toBe(64);
      // The patched resource must still be a heart rate Observation.
      const recoded = await patch(`/Observation/${compositionId}.pulse`, [{ op: 'replace', path: '/code/coding/0/code', value: '2345-7' }]);
      expect(refused(recoded)).toBe(400);
      expect((await read(`/Observation/${compositionId}.pulse`)).meta.versionId).toBe('2');

      const cancelled = await patch('/Appointment/appt-1001', [{ op: 'replace', path: '/status', value: 'cancelled' }], { 'if-match': 'W/"1"' });
      expect([cancelled.status, cancelled.body.status, cancelled.body.meta.versionId]).toEqual([200, 'cancelled', '2']);
      expect((await read('/Appointment?patient=p-1001&status=cancelled')).entry.map((e: any) => e.resource.id)).toEqual(['appt-1001']);
      expect(await audit('appt-1001')).toEqual(['update', 'create']);
    });
  });

  describe('DELETE', () => {
    let compositionId: string;
    beforeAll(async () => {
      compositionId = await vitals('ehr-p-1003', 81, '2026-11-21T08:00:00Z');
    });

    it('[XCH-015] deletes an Observation as a new, audited version: read 410, absent from search, the DELETE in _history', async () => {
      const pulseId = `${compositionId}.pulse`;
      const bpId = `${compositionId}.blood-pressure`;
      const searchIds = async () =>
        ((await read('/Observation?patient=p-1003&_count=100')).entry ?? []).map((e: any) => e.resource.id).filter((i: string) => i.startsWith(compositionId));
      expect((await searchIds()).sort()).toEqual([bpId, pulseId]);

      // The heart rate is one of two entries: a new composition version without it.
      const stale = await http('DELETE', `/Observation/${pulseId}`, { headers: { 'if-match': 'W/"2"' } });
      expect(refused(stale)).toBe(412);
      const deleted = await http('DELETE', `/Observation/${pulseId}`, { headers: { 'if-match': 'W/"1"', 'x-change-reason': 'entered in error' } });
      expect([deleted.status, deleted.text]).toEqual([204, '']);
      const gone = await http('GET', `/Observation/${pulseId}`);
      expect([refused(gone), gone.body.issue[0].code]).toEqual([410, 'deleted']);
      expect(await searchIds()).toEqual([bpId]);
      expect((await read('/Observation?code=8867-4&patient=p-1003')).entry).toBeUndefined();
      const history = await read(`/Observation/${pulseId}/_history`);
      expect(history.entry.map((e: any) => [e.request.method, e.response.etag, e.resource?.meta.versionId])).toEqual([
        ['DELETE', 'W/"2"', undefined],
        ['POST', 'W/"1"', '1'],
      ]);
      expect((await read(`/Observation/${pulseId}/_history/1`)).valueQuantity.value).toBe(81);
      expect(refused(await http('GET', `/Observation/${pulseId}/_history/2`))).toBe(410);
      expect(refused(await patch(`/Observation/${pulseId}`, [{ op: 'replace', path: '/valueQuantity/value', value: 1 }]))).toBe(410);
      // Nothing is removed: the composition keeps every version, the blood pressure lives on.
      const flat = await t.request('GET', `/openehr/v1/ehr/ehr-p-1003/composition/${compositionId}?format=FLAT`);
      expect(Object.keys(flat.body).some((k) => k.startsWith('vital_signs/pulse_heart_beat/'))).toBe(false);
      expect((await read(`/Observation/${bpId}`)).meta.versionId).toBe('2');

      // The blood pressure is the composition's last entry: the composition is deleted (openEHR change type deleted).
      expect((await http('DELETE', `/Observation/${bpId}`)).status).toBe(204);
      expect(refused(await http('GET', `/Observation/${bpId}`))).toBe(410);
      // openEHR answers a deleted composition 204 without content.
      expect((await t.request('GET', `/openehr/v1/ehr/ehr-p-1003/composition/${compositionId}`)).status).toBe(204);
      const revisions = await t.request('GET', `/openehr/v1/ehr/ehr-p-1003/versioned_composition/${compositionId}/revision_history`);
      expect(revisions.body.items.map((r: any) => [r.version_id.value.split('::')[2], r.audits[0].change_type.value])).toEqual([
        ['1', 'creation'],
        ['2', 'modification'],
        ['3', 'deleted'],
      ]);
      expect(await audit(compositionId)).toEqual(['delete', 'update', 'create']);
      expect(await searchIds()).toEqual([]);
      // Deleting what is deleted changes nothing.
      expect((await http('DELETE', `/Observation/${bpId}`)).status).toBe(204);
      expect((await read(`/Observation/${bpId}/_history`)).total).toBe(3);
      expect(await audit(compositionId)).toHaveLength(3);
    });

    it('[XCH-015, XCH-006] refuses deletes of unknown resources and of types without delete', async () => {
      expect(refused(await http('DELETE', '/Observation/00000000-0000-4000-8000-000000000000.pulse'))).toBe(404);
      expect(refused(await http('DELETE', '/Patient/p-1001'))).toBe(501);
      expect(refused(await http('DELETE', '/Appointment/appt-1001'))).toBe(501);
      expect((await read('/Patient/p-1001')).id).toBe('p-1001');
    });

    it('[XCH-015] deletes the one match of DELETE [type]?[search], nothing on no match (204), and refuses several (412)', async () => {
      const first = await vitals('ehr-p-1001', 61, '2026-10-01T08:00:00Z');
      const second = await vitals('ehr-p-1001', 62, '2026-10-02T08:00:00Z');
      const several = await http('DELETE', `/Observation?patient=p-1001&code=${LOINC}|8867-4&date=ge2026-10-01&date=lt2026-10-03`);
      expect([refused(several), several.body.issue[0].code]).toEqual([412, 'conflict']);
      expect((await read(`/Observation/${first}.pulse`)).meta.versionId).toBe('1');

      const one = await http('DELETE', `/Observation?patient=p-1001&code=${LOINC}|8867-4&date=2026-10-01`);
      expect([one.status, one.text]).toEqual([204, '']);
      expect(refused(await http('GET', `/Observation/${first}.pulse`))).toBe(410);
      expect((await read(`/Observation/${second}.pulse`)).meta.versionId).toBe('1');
      expect(await audit(first)).toEqual(['update', 'create']);

      const none = await http('DELETE', `/Observation?_id=${first}.pulse`);
      expect([none.status, none.text]).toEqual([204, '']);
      expect(await audit(first)).toEqual(['update', 'create']);

      expect(refused(await http('DELETE', '/Observation'))).toBe(400);
      expect(refused(await http('DELETE', '/Observation?colour=blue'))).toBe(400);
      expect(refused(await http('DELETE', '/Observation?_count=1'))).toBe(400);
      expect(refused(await http('DELETE', '/Patient?name=Anna'))).toBe(501);
      expect((await read('/Patient?name=Anna')).total).toBe(1);
    });
  });

  it('[SEC-004, XCH-015] a staff token of another tenant cannot patch or delete: 404, nothing changed', async () => {
    const compositionId = await vitals('ehr-p-1002', 77, '2026-11-23T08:00:00Z');
    const pulseId = `${compositionId}.pulse`;
    const acme = await t.token({ tenants: ['acme'], roles: ['clinician'], sub: 'acme-clinician' });
    const both = await t.token({ tenants: ['demo', 'acme'], roles: ['clinician'], sub: 'both-clinician' });
    const asAcme = { 'x-tenant-id': 'acme' };
    const patientBefore = await read('/Patient/p-1002');

    const attacks: Array<[string, TestResponse, number]> = [
      ['patch', await patch('/Patient/p-1002', [{ op: 'replace', path: '/gender', value: 'other' }], {}, acme), 404],
      ['patch via X-Tenant-Id', await patch('/Patient/p-1002', [{ op: 'replace', path: '/gender', value: 'other' }], asAcme, both), 404],
      ['patch Observation', await patch(`/Observation/${pulseId}`, [{ op: 'replace', path: '/valueQuantity/value', value: 1 }], {}, acme), 404],
      ['delete', await http('DELETE', `/Observation/${pulseId}`, { token: acme }), 404],
      ['delete via X-Tenant-Id', await http('DELETE', `/Observation/${pulseId}`, { token: both, headers: asAcme }), 404],
      // The condition is searched in the caller's tenant: no match there, nothing deleted here.
      ['conditional delete', await http('DELETE', `/Observation?_id=${pulseId}`, { token: acme }), 204],
    ];
    for (const [name, res, status] of attacks) expect([name, res.status]).toEqual([name, status]);

    expect(await read('/Patient/p-1002')).toEqual(patientBefore);
    expect(await read(`/Observation/${pulseId}`)).toMatchObject({ meta: { versionId: '1' }, valueQuantity: { value: 77 } });
    expect(await audit(compositionId)).toEqual(['create']);
  });

  describe('media types', () => {
    it('[XCH-016] takes fhirVersion=4.0 in Accept and Content-Type, and refuses another version with 406 (Accept) or 415 (Content-Type)', async () => {
      for (const accept of ['application/fhir+json; fhirVersion=4.0', 'application/fhir+json;fhirVersion="4.0"', 'application/json; fhirVersion=4.0.1']) {
        const res = await http('GET', '/Patient/p-1001', { headers: { accept } });
        expect([accept, res.status]).toEqual([accept, 200]);
      }
      expect((await http('GET', '/metadata', { token: null, headers: { accept: 'application/fhir+json; fhirVersion=4.0' } })).status).toBe(200);
      for (const accept of ['application/fhir+json; fhirVersion=3.0', 'application/fhir+json; fhirVersion=5.0, application/json; fhirVersion=1.0']) {
        const res = await http('GET', '/Patient/p-1001', { headers: { accept } });
        expect([accept, refused(res), res.body.issue[0].code]).toEqual([accept, 406, 'not-supported']);
      }
      expect(refused(await http('GET', '/metadata', { token: null, headers: { accept: 'application/fhir+json; fhirVersion=3.0' } }))).toBe(406);
      // _format overrides Accept, with the same rule.
      expect((await http('GET', `/Patient/p-1001?_format=${encodeURIComponent('application/fhir+json;fhirVersion=4.0')}`)).status).toBe(200);
      expect(refused(await http('GET', `/Patient/p-1001?_format=${encodeURIComponent('application/fhir+json;fhirVersion=3.0')}`))).toBe(406);
      // A range of another version next to one that is acceptable: the acceptable one is served.
      expect(
        (await http('GET', '/Patient/p-1001', { headers: { accept: 'application/fhir+json; fhirVersion=3.0, application/fhir+json; fhirVersion=4.0' } }))
          .status,
      ).toBe(200);

      const patient = { resourceType: 'Patient', name: [{ family: 'Versioned', given: ['Vera'] }] };
      const created = await http('POST', '/Patient', { body: patient, headers: { 'content-type': 'application/fhir+json; fhirVersion=4.0' } });
      expect(created.status).toBe(201);
      const older = await http('POST', '/Patient', { body: patient, headers: { 'content-type': 'application/fhir+json; fhirVersion=3.0' } });
      expect([refused(older), older.body.issue[0].code]).toEqual([415, 'not-supported']);
      const put = await http('PUT', `/Patient/${created.body.id}`, {
        body: { ...patient, id: created.body.id },
        headers: { 'content-type': 'application/fhir+json; fhirVersion=5.0' },
      });
      expect(refused(put)).toBe(415);
      expect((await read('/Patient?name:exact=Versioned')).total).toBe(1);
    });
  });

  it('[XCH-017] registers a Patient without a name (Patient.name 0..*), and a name has both parts or none', async () => {
    const created = await http('POST', '/Patient', { body: { resourceType: 'Patient', gender: 'unknown', birthDate: '2026-11-30' }, headers: FHIR_JSON });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body.name).toBeUndefined();
    expect(await read(`/Patient/${id}`)).toMatchObject({ id, gender: 'unknown', birthDate: '2026-11-30' });
    const nameless = (await read('/Patient?name:missing=true')).entry.map((e: any) => e.resource.id);
    expect(nameless).toEqual([id]);
    expect((await read('/Patient?name:missing=false&_count=100')).entry.map((e: any) => e.resource.id)).not.toContain(id);
    const gql = await t.graphql(`query { patient(id: "${id}") { name { given family } } }`);
    expect(gql.body.data.patient.name).toEqual({ given: [], family: null });

    // Named by a patch, then nameless again by an update without a name; a name with one part only is refused.
    const named = await patch(`/Patient/${id}`, [{ op: 'add', path: '/name', value: [{ family: 'Baby', given: ['Noor'] }] }]);
    expect([named.status, named.body.name]).toEqual([200, [{ family: 'Baby', given: ['Noor'] }]]);
    expect(refused(await patch(`/Patient/${id}`, [{ op: 'remove', path: '/name/0/given' }]))).toBe(400);
    const put = await http('PUT', `/Patient/${id}`, { body: { resourceType: 'Patient', id, gender: 'unknown', birthDate: '2026-11-30' }, headers: FHIR_JSON });
    expect([put.status, put.body.name, put.body.meta.versionId]).toEqual([200, undefined, '3']);
    const history = (await read(`/Patient/${id}/_history`)).entry.map((e: any) => e.resource.name?.[0].family ?? null);
    expect(history).toEqual([null, 'Baby', null]);
    const familyOnly = await http('POST', '/Patient', { body: { resourceType: 'Patient', name: [{ family: 'Alone' }] }, headers: FHIR_JSON });
    expect(refused(familyOnly)).toBe(400);
    expect((await read('/Patient?name:exact=Alone')).total).toBe(0);
  });

  it('[XCH-002] validated every resource it received against the FHIR R4 definitions', () => {
    expect(validated).toBeGreaterThan(40);
  });
});
