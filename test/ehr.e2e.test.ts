import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { ENCOUNTER, LAB, NOTE, ORDER, VITALS } from './ehr-fixtures';
import { EXAMPLE_PATIENT } from '../gateway/openapi/messaging';

const UID = /^[0-9a-f-]{36}::caregraph\.local::(\d+)$/;
const demo = { 'X-Tenant-Id': 'demo' };

describe(`clinical record REST and GraphQL (${backendName})`, () => {
  let t: TestPlatform;
  let tokens: Record<string, string>;

  const post = (body: unknown, options: { token?: string; headers?: Record<string, string> } = {}) =>
    t.request('POST', '/api/ehr/compositions', { body, ...options });
  const gql = async (token: string, query: string, variables?: Record<string, unknown>) => (await t.graphql(query, variables, { token })).body;

  beforeAll(async () => {
    t = await startTestPlatform();
    tokens = {
      admin: await t.token(),
      clinician: await t.token({ roles: ['clinician'], sub: 'dr-jones' }),
      nurse: await t.token({ roles: ['nurse'], sub: 'nurse-ann' }),
      receptionist: await t.token({ roles: ['receptionist'], sub: 'desk-1' }),
      integration: await t.token({ roles: ['integration'], sub: 'lab-system' }),
      patient: await t.token({ roles: ['patient'], patientId: 'p-1001', sub: 'anna' }),
      acme: await t.token({ tenants: ['acme'], sub: 'acme-admin' }),
    };
  });
  afterAll(() => t?.stop());

  describe('GET /api/ehr/patients/{id}', () => {
    it('[EHR-001] answers the demographics with decrypted contact details', async () => {
      const res = await t.request('GET', '/api/ehr/patients/p-1001', { headers: demo });
      expect(res.status).toBe(200);
      // The OpenAPI document's example is this seeded patient's answer.
      expect(res.body).toEqual(EXAMPLE_PATIENT);
    });

    it.each([
      ['no token', { token: null, headers: demo }, 401, 'UNAUTHENTICATED'],
      ['no X-Tenant-Id', {}, 400, 'TENANT_REQUIRED'],
      ['a tenant outside the token', { headers: { 'X-Tenant-Id': 'acme' } }, 403, 'FORBIDDEN'],
    ])('refuses %s', async (_name, options, status, code) => {
      const res = await t.request('GET', '/api/ehr/patients/p-1001', options);
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
    });

    it('[SEC-004, EHR-001] answers 404 for unknown and other-tenant patients alike', async () => {
      for (const id of ['p-9999', 'p-2001']) {
        const res = await t.request('GET', `/api/ehr/patients/${id}`, { headers: demo });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
      }
    });
  });

  describe('POST /api/ehr/compositions', () => {
    it('[EHR-002] commits version 1 and answers 201 with uid, Location and the content', async () => {
      const res = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS }, { token: tokens.nurse });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ ehrId: 'ehr-p-1001', templateId: 'vital_signs.v1', version: 1, committer: 'nurse-ann', content: VITALS });
      expect(res.body.uid).toMatch(UID);
      expect(new Date(res.body.committedAt).getTime()).not.toBeNaN();
      expect(res.headers.get('location')).toBe(`/api/ehr/compositions/${encodeURIComponent(res.body.uid)}`);
      const read = await t.request('GET', res.headers.get('location')!);
      expect(read.status).toBe(200);
      expect(read.body.content).toEqual(VITALS);
    });

    it('[EHR-003] answers 422 UNKNOWN_TEMPLATE for a template the tenant does not have', async () => {
      const res = await post({ templateId: 'vital_signs.v9', ehrId: 'ehr-p-1001', content: VITALS });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('UNKNOWN_TEMPLATE');
    });

    it('[SEC-004] answers 404 for unknown and other-tenant EHRs', async () => {
      for (const ehrId of ['ehr-nope', 'ehr-p-2001']) {
        const res = await post({ templateId: 'vital_signs.v1', ehrId, content: VITALS });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
      }
    });

    it('answers 400 for missing, wrong and unknown fields, and for malformed JSON', async () => {
      const missing = await post({ ehrId: 'ehr-p-1001', content: 'x', extra: 1 });
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('VALIDATION_ERROR');
      expect(missing.body.error.details.map((d: any) => d.path).sort()).toEqual(['content', 'extra', 'templateId']);
      const malformed = await t.request('POST', '/api/ehr/compositions', { rawBody: '{"templateId":', headers: { 'content-type': 'application/json' } });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.code).toBe('VALIDATION_ERROR');
    });

    it('answers 415 for non-JSON bodies, 413 for bodies over 1 MiB and 401 without a token', async () => {
      const text = await t.request('POST', '/api/ehr/compositions', { rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
      expect(text.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      const big = await post({ templateId: 'clinical_note.v1', ehrId: 'ehr-p-1001', content: NOTE('x'.repeat(1_100_000)) });
      expect(big.status).toBe(413);
      expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
      const anonymous = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS }, { token: null as any });
      expect(anonymous.status).toBe(401);
    });

    const bp = VITALS.blood_pressure;
    it.each([
      ['required element (occurrences)', 'vital_signs.v1', { ...VITALS, recorded_at: undefined }, 'recorded_at'],
      [
        'quantity magnitude required',
        'vital_signs.v1',
        { ...VITALS, blood_pressure: { ...bp, systolic: { unit: 'mm[Hg]' } } },
        'blood_pressure.systolic.magnitude',
      ],
      ['quantity unit', 'vital_signs.v1', { ...VITALS, blood_pressure: { ...bp, diastolic: { magnitude: 80, unit: 'kPa' } } }, 'blood_pressure.diastolic.unit'],
      [
        'quantity range',
        'vital_signs.v1',
        { ...VITALS, blood_pressure: { ...bp, systolic: { magnitude: -5, unit: 'mm[Hg]' } } },
        'blood_pressure.systolic.magnitude',
      ],
      ['coded text value set', 'vital_signs.v1', { ...VITALS, blood_pressure: { ...bp, position: { code: 'upside-down' } } }, 'blood_pressure.position.code'],
      ['date-time', 'vital_signs.v1', { ...VITALS, recorded_at: 'yesterday' }, 'recorded_at'],
      ['boolean', 'vital_signs.v1', { ...VITALS, pulse: { regular: 'yes' } }, 'pulse.regular'],
      ['element not in the template', 'vital_signs.v1', { ...VITALS, mood: 'fine' }, 'mood'],
      ['list cardinality', 'lab_result.v1', { lab_result: { ...LAB.lab_result, results: [] } }, 'lab_result.results'],
      [
        'item inside a list',
        'lab_result.v1',
        { lab_result: { ...LAB.lab_result, results: [{ analyte: 'Glucose', value: { magnitude: 5, unit: 'mmol' } }] } },
        'lab_result.results[0].value.unit',
      ],
      ['count range', 'medication_order.v1', { medication_order: { ...ORDER.medication_order, doses_per_day: 0 } }, 'medication_order.doses_per_day'],
      ['date', 'medication_order.v1', { medication_order: { ...ORDER.medication_order, start_date: '2026-02-30' } }, 'medication_order.start_date'],
      ['text length', 'clinical_note.v1', NOTE(''), 'note.body'],
    ])('answers 422 COMPOSITION_INVALID naming the path for a broken %s', async (_kind, templateId, content, path) => {
      const res = await post({ templateId, ehrId: 'ehr-p-1001', content });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('COMPOSITION_INVALID');
      expect(res.body.error.details).toContainEqual({ path, message: expect.any(String) });
    });
  });

  describe('versioning', () => {
    it('[EHR-004] updates with If-Match, keeps old versions readable, deletes logically and keeps the history', async () => {
      const created = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS });
      const v1 = created.body.uid as string;
      const id = v1.split('::')[0];
      const changed = { ...VITALS, pulse: { rate: { magnitude: 88, unit: '/min' } } };

      const missing = await t.request('PUT', `/api/ehr/compositions/${id}`, { body: { content: changed } });
      expect(missing.status).toBe(400);

      const updated = await t.request('PUT', `/api/ehr/compositions/${id}`, {
        body: { content: changed },
        headers: { 'If-Match': `"${v1}"`, 'X-Change-Reason': 'pulse re-measured' },
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ id, version: 2, content: changed });
      const v2 = updated.body.uid as string;
      expect(v2).toBe(`${id}::caregraph.local::2`);
      expect(updated.headers.get('etag')).toBe(`"${v2}"`);

      const stale = await t.request('PUT', `/api/ehr/compositions/${id}`, { body: { content: VITALS }, headers: { 'If-Match': v1 } });
      expect(stale.status).toBe(412);
      expect(stale.body.error.code).toBe('PRECONDITION_FAILED');

      const invalid = await t.request('PUT', `/api/ehr/compositions/${id}`, {
        body: { content: { ...changed, recorded_at: 'now' } },
        headers: { 'If-Match': v2 },
      });
      expect(invalid.status).toBe(422);
      expect(invalid.body.error.details).toContainEqual({ path: 'recorded_at', message: expect.any(String) });

      expect((await t.request('GET', `/api/ehr/compositions/${encodeURIComponent(v1)}`)).body).toMatchObject({ version: 1, content: VITALS });
      expect((await t.request('GET', `/api/ehr/compositions/${id}`)).body).toMatchObject({ version: 2, content: changed });

      const staleDelete = await t.request('DELETE', `/api/ehr/compositions/${id}`, { headers: { 'If-Match': v1 } });
      expect(staleDelete.status).toBe(412);
      const deleted = await t.request('DELETE', `/api/ehr/compositions/${id}`, {
        headers: { 'If-Match': v2, 'X-Change-Reason': 'entered in the wrong record' },
      });
      expect(deleted.status).toBe(204);
      expect((await t.request('GET', `/api/ehr/compositions/${id}`)).status).toBe(404);
      expect((await t.request('GET', `/api/ehr/compositions/${encodeURIComponent(v2)}`)).status).toBe(200);
      const afterDelete = await t.request('PUT', `/api/ehr/compositions/${id}`, { body: { content: VITALS }, headers: { 'If-Match': v2 } });
      expect(afterDelete.status).toBe(409);

      const history = await t.request('GET', `/api/ehr/compositions/${id}/history`);
      expect(history.status).toBe(200);
      expect(history.body.data.map((v: any) => [v.version, v.changeType, v.lifecycleState])).toEqual([
        [1, 'creation', 'complete'],
        [2, 'modification', 'complete'],
        [3, 'deleted', 'deleted'],
      ]);

      const audit = await t.request('GET', `/api/ehr/audit?entityId=${id}`);
      expect(audit.status).toBe(200);
      expect(audit.body.data.map((r: any) => [r.action, r.reason])).toEqual([
        ['delete', 'entered in the wrong record'],
        ['update', 'pulse re-measured'],
        ['create', null],
      ]);
      const update = audit.body.data[1];
      expect(update).toMatchObject({ tenantId: 'demo', actor: 'test-user', entityType: 'Composition', entityId: id, before: { uid: v1 }, after: { uid: v2 } });
      expect(JSON.stringify(audit.body)).not.toContain('"magnitude"');
    });

    it("lists a patient's compositions with filters and paging", async () => {
      const res = await t.request('GET', '/api/ehr/patients/p-1001/compositions?area=observation&templateId=vital_signs.v1&limit=1');
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.pagination).toMatchObject({ limit: 1, offset: 0, total: expect.any(Number) });
      expect(res.body.pagination.total).toBeGreaterThanOrEqual(1);
      expect((await t.request('GET', '/api/ehr/patients/p-1001/compositions?limit=0')).status).toBe(400);
      expect((await t.request('GET', '/api/ehr/patients/p-1001/compositions?area=x')).status).toBe(400);
      expect((await t.request('GET', '/api/ehr/patients/p-2001/compositions')).status).toBe(404);
    });
  });

  describe('tenant isolation', () => {
    it("answers 404 to reads and writes of another tenant's compositions", async () => {
      const created = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS });
      const uid = encodeURIComponent(created.body.uid);
      expect((await t.request('GET', `/api/ehr/compositions/${uid}`, { token: tokens.acme })).status).toBe(404);
      expect(
        (await t.request('PUT', `/api/ehr/compositions/${uid}`, { token: tokens.acme, body: { content: VITALS }, headers: { 'If-Match': created.body.uid } }))
          .status,
      ).toBe(404);
      expect((await t.request('DELETE', `/api/ehr/compositions/${uid}`, { token: tokens.acme })).status).toBe(404);
      expect((await t.request('GET', `/api/ehr/compositions/${uid}/history`, { token: tokens.acme })).status).toBe(404);
      const acmeWrite = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS }, { token: tokens.acme });
      expect(acmeWrite.status).toBe(404);
      const acmeOwn = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-2001', content: VITALS }, { token: tokens.acme });
      expect(acmeOwn.status).toBe(201);
      const body = await gql(tokens.admin, '{ patient(id: "p-2001") { id } ehrs: compositions(filter: { patientId: "p-1001" }) { data { patientId } } }');
      expect(body.data.patient).toBeNull();
      expect(body.data.ehrs.data.every((c: any) => c.patientId === 'p-1001')).toBe(true);
    });
  });

  describe('access control', () => {
    it('[SEC-007] lets a patient token read only its own record', async () => {
      const own = await t.request('GET', '/api/ehr/patients/p-1001', { token: tokens.patient, headers: demo });
      expect(own.status).toBe(200);
      const other = await t.request('GET', '/api/ehr/patients/p-1002', { token: tokens.patient, headers: demo });
      expect(other.status).toBe(404);
      const theirs = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1002', content: VITALS });
      expect((await t.request('GET', `/api/ehr/compositions/${encodeURIComponent(theirs.body.uid)}`, { token: tokens.patient })).status).toBe(404);
      expect((await t.request('GET', '/api/ehr/patients/p-1002/compositions', { token: tokens.patient })).status).toBe(404);
      const mine = await t.request('GET', '/api/ehr/patients/p-1001/compositions', { token: tokens.patient });
      expect(mine.status).toBe(200);
      expect(mine.body.data.every((c: any) => c.patientId === 'p-1001')).toBe(true);
      const list = await gql(tokens.patient, '{ compositions { data { patientId } } patients { data { id } } }');
      expect(list.errors[0].extensions.code).toBe('FORBIDDEN');
      const write = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS }, { token: tokens.patient });
      expect(write.status).toBe(403);
      const foreignWrite = await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1002', content: VITALS }, { token: tokens.patient });
      expect(foreignWrite.status).toBe(404);
    });

    it('[SEC-006] does not let a nurse change access policies; an admin can, and it takes effect', async () => {
      const mutation =
        'mutation($read: Boolean!) { setAccessPolicy(role: RECEPTIONIST, area: DOCUMENT, canRead: $read, canWrite: false, reason: "front desk sends letters") { role area canRead source } }';
      const nurse = await gql(tokens.nurse, mutation, { read: true });
      expect(nurse.errors[0].extensions.code).toBe('FORBIDDEN');
      const before = await gql(tokens.receptionist, '{ patient(id: "p-1001") { documents { data { uid } } } }');
      expect(before.errors[0].extensions.code).toBe('FORBIDDEN');
      const admin = await gql(tokens.admin, mutation, { read: true });
      expect(admin.data.setAccessPolicy).toEqual({ role: 'RECEPTIONIST', area: 'DOCUMENT', canRead: true, source: 'tenant' });
      const after = await gql(tokens.receptionist, '{ patient(id: "p-1001") { documents { data { uid } } } }');
      expect(after.errors).toBeUndefined();
      const audit = await t.request('GET', '/api/ehr/audit?entityType=AccessPolicy');
      expect(audit.body.data[0]).toMatchObject({
        action: 'update',
        entityId: 'receptionist:document',
        before: { canRead: false },
        after: { canRead: true },
        reason: 'front desk sends letters',
      });
      expect((await t.request('GET', '/api/ehr/audit', { token: tokens.nurse })).status).toBe(403);
      await gql(tokens.admin, mutation, { read: false });
    });

    it('[SEC-006] keeps nurses from writing orders but lets them record observations', async () => {
      expect((await post({ templateId: 'medication_order.v1', ehrId: 'ehr-p-1001', content: ORDER }, { token: tokens.nurse })).status).toBe(403);
      expect((await post({ templateId: 'lab_result.v1', ehrId: 'ehr-p-1001', content: LAB }, { token: tokens.nurse })).status).toBe(201);
    });

    it('[SEC-015] lets integrations read clinical data only while the patient consents to data sharing', async () => {
      const read = () => t.request('GET', '/api/ehr/patients/p-1003/compositions?area=observation', { token: tokens.integration });
      expect((await read()).status).toBe(403);
      const granted = await gql(tokens.patient, 'mutation { grantConsent(patientId: "p-1001", purpose: DATA_SHARING, reason: "app") { granted recorded } }');
      expect(granted.data.grantConsent).toEqual({ granted: true, recorded: true });
      const p3 = await t.token({ roles: ['patient'], patientId: 'p-1003' });
      await gql(p3, 'mutation { grantConsent(patientId: "p-1003", purpose: DATA_SHARING, note: "GP exchange") { granted } }');
      expect((await read()).status).toBe(200);
      const revoked = await gql(
        tokens.receptionist,
        'mutation { revokeConsent(patientId: "p-1003", purpose: DATA_SHARING, reason: "patient called") { granted } }',
      );
      expect(revoked.data.revokeConsent.granted).toBe(false);
      expect((await read()).status).toBe(403);
      const consents = await gql(tokens.admin, '{ patient(id: "p-1003") { consents { purpose granted recorded } } }');
      expect(consents.data.patient.consents).toEqual(
        expect.arrayContaining([
          { purpose: 'MESSAGING', granted: true, recorded: false },
          { purpose: 'DATA_SHARING', granted: false, recorded: true },
        ]),
      );
      const foreign = await gql(p3, 'mutation { grantConsent(patientId: "p-1001", purpose: RESEARCH) { granted } }');
      expect(foreign.errors[0].extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('templates and EHRs', () => {
    it('[EHR-005] adds template versions without changing old ones', async () => {
      const v1 = await gql(tokens.admin, '{ clinicalTemplate(id: "vital_signs.v1") { definition } }');
      const definition = {
        type: 'object',
        children: { ...v1.data.clinicalTemplate.definition.children, temperature: { type: 'quantity', units: [{ unit: 'Cel', min: 25, max: 45 }] } },
      };
      const upload = 'mutation($input: UploadTemplateInput!) { uploadTemplate(input: $input) { id area createdBy } }';
      const nurse = await gql(tokens.nurse, upload, { input: { id: 'vital_signs.v2', name: 'Vital signs', area: 'OBSERVATION', definition } });
      expect(nurse.errors[0].extensions.code).toBe('FORBIDDEN');
      const v2 = await gql(tokens.admin, upload, { input: { id: 'vital_signs.v2', name: 'Vital signs', area: 'OBSERVATION', definition } });
      expect(v2.data.uploadTemplate).toEqual({ id: 'vital_signs.v2', area: 'OBSERVATION', createdBy: 'test-user' });
      const overwrite = await gql(tokens.admin, upload, { input: { id: 'vital_signs.v1', name: 'Vital signs', area: 'OBSERVATION', definition } });
      expect(overwrite.errors[0].extensions.code).toBe('CONFLICT');
      const bad = await gql(tokens.admin, upload, {
        input: { id: 'vitals', name: 'x', area: 'OBSERVATION', definition: { type: 'object', children: { t: { type: 'quantity', units: [] } } } },
      });
      expect(bad.errors[0].extensions.code).toBe('VALIDATION_ERROR');
      expect(bad.errors[0].extensions.details.map((d: any) => d.path)).toEqual(['id', 'definition.children.t.units']);
      const withTemp = { ...VITALS, temperature: { magnitude: 37.2, unit: 'Cel' } };
      expect((await post({ templateId: 'vital_signs.v2', ehrId: 'ehr-p-1001', content: withTemp })).status).toBe(201);
      expect((await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: withTemp })).body.error.details).toEqual([
        { path: 'temperature', message: expect.any(String) },
      ]);
      const acme = await gql(tokens.acme, '{ clinicalTemplates { id } }');
      expect(acme.data.clinicalTemplates.map((x: any) => x.id)).not.toContain('vital_signs.v2');
      expect(acme.data.clinicalTemplates.map((x: any) => x.id)).toEqual([
        'clinical_note.v1',
        'encounter.v1',
        'lab_result.v1',
        'medication_order.v1',
        'vital_signs.v1',
      ]);
    });

    it('registers patients with an EHR, honours EHR_STATUS and keeps contact changes to the patient', async () => {
      const created = await gql(
        tokens.receptionist,
        'mutation { createPatient(input: { id: "p-1050", givenNames: ["Eva"], family: "Smit", birthDate: "2001-02-03", gender: "female", phone: "+31611112222" }) { id ehrId ehr { id status { isModifiable } } } }',
      );
      // A new patient's EHR gets a UUID, like any EHR created after the seed.
      const ehrId: string = created.data.createPatient.ehrId;
      expect(ehrId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(created.data.createPatient).toEqual({ id: 'p-1050', ehrId, ehr: { id: ehrId, status: { isModifiable: true } } });
      const duplicate = await gql(tokens.receptionist, 'mutation { createPatient(input: { id: "p-1050", givenNames: ["Eva"], family: "Smit" }) { id } }');
      expect(duplicate.errors[0].extensions.code).toBe('CONFLICT');
      const invalid = await gql(
        tokens.receptionist,
        'mutation { createPatient(input: { givenNames: [], family: "X", birthDate: "2001-13-01", phone: "0612" }) { id } }',
      );
      expect(invalid.errors[0].extensions.code).toBe('VALIDATION_ERROR');
      expect(invalid.errors[0].extensions.details.map((d: any) => d.path).sort()).toEqual(['birthDate', 'givenNames', 'phone']);

      const patientToken = await t.token({ roles: ['patient'], patientId: 'p-1050' });
      const phone = await gql(
        patientToken,
        'mutation { updatePatient(id: "p-1050", input: { phone: "+31633334444" }, reason: "moved") { contact { phone } } }',
      );
      expect(phone.data.updatePatient.contact.phone).toBe('+31633334444');
      const name = await gql(patientToken, 'mutation { updatePatient(id: "p-1050", input: { family: "Jong" }) { id } }');
      expect(name.errors[0].extensions.code).toBe('FORBIDDEN');

      const frozen = await gql(
        tokens.clinician,
        `mutation { updateEhrStatus(ehrId: "${ehrId}", isModifiable: false, reason: "record closed") { status { isModifiable isQueryable } } }`,
      );
      expect(frozen.data.updateEhrStatus.status).toEqual({ isModifiable: false, isQueryable: true });
      expect((await post({ templateId: 'vital_signs.v1', ehrId, content: VITALS })).status).toBe(409);
      const receptionist = await gql(tokens.receptionist, `mutation { updateEhrStatus(ehrId: "${ehrId}", isModifiable: true) { id } }`);
      expect(receptionist.errors[0].extensions.code).toBe('FORBIDDEN');
    });

    it('[EHR-013] serves the data areas per patient with filters and paging', async () => {
      for (const [templateId, content] of [
        ['encounter.v1', ENCOUNTER],
        ['medication_order.v1', ORDER],
        ['clinical_note.v1', NOTE('Feels well.')],
      ] as const) {
        expect((await post({ templateId, ehrId: 'ehr-p-1003', content }, { token: tokens.clinician })).status).toBe(201);
      }
      expect((await post({ templateId: 'vital_signs.v1', ehrId: 'ehr-p-1003', content: VITALS })).status).toBe(201);
      expect((await post({ templateId: 'lab_result.v1', ehrId: 'ehr-p-1003', content: LAB })).status).toBe(201);
      const body = await gql(
        tokens.clinician,
        `{ patient(id: "p-1003") {
        encounters { data { templateId content } pagination { total } }
        orders { data { templateId } }
        documents { data { content } }
        observations(limit: 1) { data { templateId } pagination { limit total } }
        labs: observations(templateId: "lab_result.v1") { data { templateId } }
        future: observations(from: "2999-01-01") { pagination { total } }
        appointments { data { id } pagination { total } }
        ehr { id status { isQueryable } }
      } p1: patient(id: "p-1001") { appointments(status: "booked") { data { id status } } } }`,
      );
      expect(body.errors).toBeUndefined();
      const p = body.data.patient;
      expect(p.encounters).toEqual({ data: [{ templateId: 'encounter.v1', content: ENCOUNTER }], pagination: { total: 1 } });
      expect(p.orders.data).toEqual([{ templateId: 'medication_order.v1' }]);
      expect(p.documents.data[0].content.note.body).toBe('Feels well.');
      expect(p.observations.pagination).toEqual({ limit: 1, total: 2 });
      expect(p.labs.data).toEqual([{ templateId: 'lab_result.v1' }]);
      expect(p.future.pagination.total).toBe(0);
      expect(p.appointments.pagination.total).toBe(0);
      expect(body.data.p1.appointments.data).toEqual([{ id: 'appt-1001', status: 'booked' }]);
      const rejected = await gql(tokens.clinician, '{ patient(id: "p-1003") { observations(limit: 500) { data { uid } } } }');
      expect(rejected.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    });

    it('[LOG-001] logs reads of patient records (NEN 7513) for admins and the patient', async () => {
      await t.request('GET', '/api/ehr/patients/p-1001', { token: tokens.clinician, headers: demo });
      const log = await gql(tokens.patient, '{ accessLog(patientId: "p-1001", limit: 100) { data { actor action entityType } pagination { total } } }');
      expect(log.data.accessLog.data).toContainEqual({ actor: 'dr-jones', action: 'read', entityType: 'Patient' });
      const other = await gql(tokens.patient, '{ accessLog(patientId: "p-1002") { data { actor } } }');
      expect(other.errors[0].extensions.code).toBe('NOT_FOUND');
    });
  });

  describe('deeply nested input', () => {
    // Built as text: JSON.stringify itself overflows the stack on such values.
    const nest = (depth: number, open: string, leaf: string, close: string) => `${open.repeat(depth)}${leaf}${close.repeat(depth)}`;
    const templateLevels = (depth: number) => nest(depth, '{"type":"object","children":{"a":', '{"type":"text"}', '}}');
    const raw = (method: string, path: string, body: string, contentType = 'application/json') =>
      t.request(method, path, { rawBody: body, headers: { 'content-type': contentType } });
    const graphqlRaw = (query: string, variables: string) => raw('POST', '/graphql', `{"query":${JSON.stringify(query)},"variables":${variables}}`);
    const upload = 'mutation($input: UploadTemplateInput!) { uploadTemplate(input: $input) { id } }';
    const refusedAsTooDeep = (res: { status: number; body: any }) => {
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'VALIDATION_ERROR', message: 'The request body nests deeper than 64 levels' });
    };

    it('refuses a 5,000-level template definition with 400 VALIDATION_ERROR, over GraphQL and openEHR', async () => {
      const graphql = await graphqlRaw(upload, `{"input":{"id":"deep.v1","name":"Deep","area":"OBSERVATION","definition":${templateLevels(5000)}}}`);
      refusedAsTooDeep(graphql);
      expect(graphql.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
      refusedAsTooDeep(
        await raw(
          'POST',
          '/openehr/v1/definition/template/adl1.4',
          `{"template_id":"deep.v1","name":"Deep","area":"observation","definition":${templateLevels(5000)}}`,
        ),
      );
      // Shallow enough for the request, too deep for a template: the template's own limit names the field.
      const twenty = await gql(tokens.admin, upload, {
        input: { id: 'deep.v1', name: 'Deep', area: 'OBSERVATION', definition: JSON.parse(templateLevels(20)) },
      });
      expect(twenty.errors[0].extensions).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ path: 'definition', message: 'nests deeper than 12 levels' }],
      });
      expect((await gql(tokens.admin, '{ clinicalTemplates { id } }')).data.clinicalTemplates.map((x: any) => x.id)).not.toContain('deep.v1');
    });

    it('refuses deeply nested composition content: 400 past the request limit, 422 COMPOSITION_INVALID within it', async () => {
      const composition = (pulse: string) =>
        `{"templateId":"vital_signs.v1","ehrId":"ehr-p-1001","content":{"recorded_at":"2026-11-22T09:00:00Z","pulse":${pulse}}}`;
      refusedAsTooDeep(await raw('POST', '/api/ehr/compositions', composition(nest(5000, '{"rate":', '1', '}'))));
      // Arrays nest two bytes a level: 500,000 levels fit in the 1 MiB body limit.
      refusedAsTooDeep(await raw('POST', '/api/ehr/compositions', composition(nest(500_000, '[', '', ']'))));
      const within = await raw('POST', '/api/ehr/compositions', composition(nest(40, '{"rate":', '1', '}')));
      expect(within.status).toBe(422);
      expect(within.body.error.code).toBe('COMPOSITION_INVALID');
      refusedAsTooDeep(await raw('POST', '/openehr/v1/ehr/ehr-p-1001/composition', nest(5000, '{"content":[', '{}', ']}')));
      const viaGraphql = await graphqlRaw(
        'mutation($c: JSONObject!) { createComposition(input: {templateId: "vital_signs.v1", ehrId: "ehr-p-1001", content: $c}) { uid } }',
        `{"c":${nest(100_000, '[', '', ']')}}`,
      );
      refusedAsTooDeep(viaGraphql);
    });

    it('refuses deeply nested JSON on the other surfaces: messaging REST, FHIR, JSON in query strings', async () => {
      refusedAsTooDeep(
        await raw('POST', '/v1/messages', `{"patientId":"p-1001","templateId":"appointment_reminder","variables":${nest(5000, '{"a":', '1', '}')}}`),
      );
      const fhir = await raw(
        'POST',
        '/fhir/R4/Observation',
        `{"resourceType":"Observation","extension":${nest(5000, '[{"extension":', '[]', '}]')}}`,
        'application/fhir+json',
      );
      expect(fhir.status).toBe(400);
      expect(fhir.body).toMatchObject({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', diagnostics: 'The request body nests deeper than 64 levels' }],
      });
      const aql = `/openehr/v1/query/aql?q=${encodeURIComponent('SELECT c/uid/value FROM COMPOSITION c')}`;
      // JSON in a query string: 1,000 levels fit in a URL.
      const viaGet = await t.request('GET', `${aql}&query_parameters=${encodeURIComponent(`{"x":${nest(1000, '[', '', ']')}}`)}`);
      expect(viaGet.status).toBe(400);
      expect(JSON.stringify(viaGet.body)).toMatch(/query_parameters nests deeper than 64 levels/);
      const query = 'query($p: JSONObject) { aqlQuery(q: "SELECT c/uid/value FROM COMPOSITION c", parameters: $p) }';
      const graphqlGet = await t.request(
        'GET',
        `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(`{"p":{"x":${nest(1000, '[', '', ']')}}}`)}`,
        {
          headers: { 'apollo-require-preflight': 'true' },
        },
      );
      expect(graphqlGet.status).toBe(400);
      expect(graphqlGet.body.errors[0]).toEqual({ message: 'The variables parameter nests deeper than 64 levels', extensions: { code: 'VALIDATION_ERROR' } });
    });

    it('refuses deeply nested GraphQL literals and AQL expressions with VALIDATION_ERROR', async () => {
      const literal = await t.graphql(`{ aqlQuery(q: "SELECT c/uid/value FROM COMPOSITION c", parameters: {x: ${nest(4900, '[', '', ']')}}) }`);
      expect(literal.status).toBe(400);
      expect(literal.body.errors[0]).toMatchObject({ message: 'The GraphQL document nests deeper than 64 levels', extensions: { code: 'VALIDATION_ERROR' } });
      for (const where of [nest(4900, '(', "c/uid/value = 'x'", ')'), `${'NOT '.repeat(2400)}c/uid/value = 'x'`]) {
        const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q: `SELECT c/uid/value FROM COMPOSITION c WHERE ${where}` } });
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body)).toMatch(/AQL: the WHERE condition nests deeper than 64 levels/);
      }
    });
  });
});
