import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEhrCalls } from './support/openehr-oas';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { DOCUMENTED_ENCOUNTER } from './ehr-fixtures';

/**
 * Operational templates and composition formats over /openehr/v1, with the
 * third-party artefacts vendored under test/fixtures/openehr (EHRbase SDK
 * OPTs, their published web templates and FLAT / canonical examples).
 */
const FIXTURES = join(__dirname, 'fixtures/openehr/ehrbase-sdk');
const read = (path: string) => readFileSync(join(FIXTURES, path), 'utf8');
const readJson = (path: string) => JSON.parse(read(path));

const MULTI = {
  id: 'ehrbase_multi_occurrence.de.v1',
  opt: read('operationaltemplate/ehrbase_multi_occurrence.de.opt'),
  flat: readJson('composition/flat/simSDT/multi_occurrence.json'),
  canonical: readJson('composition/canonical_json/multi_occurrence.json'),
  webTemplate: readJson('webtemplate/multi_occurrence.json'),
};
const EVENTS = {
  id: 'AlternativeEvents',
  opt: read('operationaltemplate/AlternativeEvents.opt'),
  flat: readJson('composition/flat/simSDT/AlternativeEvents.json'),
  canonical: readJson('composition/canonical_json/alternative_events.json'),
};
const xml = { 'content-type': 'application/xml' };
const json = { 'content-type': 'application/json' };
const representation = { ...json, prefer: 'return=representation' };
const VERSION_UID = /^[0-9a-f-]{36}::caregraph\.local::1$/;
/** ISO 8601 date-times with a decimal comma or point are the same value. */
const points = (flat: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(flat).map(([k, v]) => [k, typeof v === 'string' ? v.replace(/(\d{2}:\d{2}:\d{2}),(\d)/, '$1.$2') : v]));
/** FLAT without the `_uid`: the server assigns version uids. */
const withoutUid = (flat: Record<string, unknown>) => Object.fromEntries(Object.entries(flat).filter(([k]) => !k.endsWith('/_uid')));

describe(`openEHR operational templates and composition formats (${backendName})`, () => {
  let t: TestPlatform;
  /** `checked` answers are checked against the openEHR OAS: for canonical compositions (FLAT and STRUCTURED are not in it). */
  const { checked, raw: api } = openEhrCalls(() => t);
  const template = (id: string) => `/definition/template/adl1.4/${encodeURIComponent(id)}`;

  beforeAll(async () => {
    t = await startTestPlatform();
    for (const opt of [MULTI.opt, EVENTS.opt]) expect((await api('POST', '/definition/template/adl1.4', { rawBody: opt, headers: xml })).status).toBe(201);
  });
  afterAll(() => t?.stop());

  describe('DEFINITION', () => {
    it('[EHR-006] uploads an OPT (201 and Location), refuses the same template_id again (409), lists it and returns the XML', async () => {
      const renamed = MULTI.opt.replace('<value>ehrbase_multi_occurrence.de.v1</value>', '<value>multi occurrence.v2</value>');
      const created = await api('POST', '/definition/template/adl1.4', { rawBody: renamed, headers: { ...xml, prefer: 'return=representation' } });
      expect(created.status).toBe(201);
      expect(created.headers.get('location')).toBe(`${t.url}/openehr/v1/definition/template/adl1.4/multi%20occurrence.v2`);
      expect(created.body).toMatchObject({ template_id: 'multi occurrence.v2', format: 'OPT 1.4' });
      const again = await api('POST', '/definition/template/adl1.4', { rawBody: MULTI.opt, headers: xml });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('CONFLICT');
      const list = await api('GET', '/definition/template/adl1.4');
      expect(list.body).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ template_id: MULTI.id, archetype_id: 'openEHR-EHR-COMPOSITION.encounter.v1', format: 'OPT 1.4', area: 'encounter' }),
          expect.objectContaining({ template_id: EVENTS.id, archetype_id: 'openEHR-EHR-COMPOSITION.report.v1', area: 'observation' }),
        ]),
      );
      const got = await api('GET', template(MULTI.id), { headers: { accept: 'application/xml' } });
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toMatch(/^application\/xml/);
      // The parser drops the byte order mark the fixture starts with; the document is otherwise byte for byte the upload.
      expect(got.text).toBe(MULTI.opt.replace(/^\uFEFF/, ''));
    });

    it('[EHR-006] answers the web template EHRbase publishes for the OPT', async () => {
      const web = await api('GET', template(MULTI.id), { headers: { accept: 'application/openehr.wt+json' } });
      expect(web.status).toBe(200);
      expect(web.headers.get('content-type')).toMatch(/^application\/openehr\.wt\+json/);
      const paths = (node: any): string[] => [`${node.aqlPath} ${node.id} ${node.rmType} ${node.min}..${node.max}`, ...(node.children ?? []).flatMap(paths)];
      expect(paths(web.body.tree)).toEqual(paths(MULTI.webTemplate.tree));
    });

    it('generates an example composition in each format, and the example is valid', async () => {
      const canonical = await api('GET', `${template(MULTI.id)}/example`);
      expect(canonical.status).toBe(200);
      expect(canonical.body).toMatchObject({ _type: 'COMPOSITION', archetype_details: { template_id: { value: MULTI.id } } });
      const flat = await api('GET', `${template(MULTI.id)}/example?format=FLAT`);
      expect(flat.body['encounter/body_temperature:0/any_event:0/temperature|unit']).toBe('Cel');
      const structured = await api('GET', `${template(MULTI.id)}/example?format=STRUCTURED`);
      expect(structured.body.encounter.body_temperature[0].any_event[0].temperature[0]['|unit']).toBe('Cel');
      const posted = await api('POST', '/ehr/ehr-p-1001/composition', { body: canonical.body, headers: json });
      expect(posted.status).toBe(201);
    });

    it('refuses malformed XML and documents that are no OPT with 400, and other content types with 415; only admins upload', async () => {
      const broken = await api('POST', '/definition/template/adl1.4', { rawBody: '<template><template_id>', headers: xml });
      expect(broken.status).toBe(400);
      expect(broken.body.error.message).toMatch(/not well-formed XML/);
      expect((await api('POST', '/definition/template/adl1.4', { rawBody: '<x/>', headers: xml })).status).toBe(400);
      expect((await api('POST', '/definition/template/adl1.4', { rawBody: 'opt', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
      const nurse = await t.token({ roles: ['nurse'] });
      const other = MULTI.opt.replace('<value>ehrbase_multi_occurrence.de.v1</value>', '<value>nurse_upload.v1</value>');
      expect((await api('POST', '/definition/template/adl1.4', { rawBody: other, headers: xml, token: nurse })).status).toBe(403);
    });

    it('keeps templates per tenant', async () => {
      const acme = await t.token({ tenants: ['acme'], sub: 'acme-admin' });
      expect((await api('GET', template(MULTI.id), { token: acme })).status).toBe(404);
    });
  });

  describe('COMPOSITION formats', () => {
    it.each([MULTI, EVENTS])('stores the published canonical composition of $id and reads it back canonical, FLAT and STRUCTURED', async (f) => {
      const created = await api('POST', '/ehr/ehr-p-1001/composition', { body: f.canonical, headers: representation });
      expect(created.status).toBe(201);
      const uid = created.body.uid.value as string;
      expect(uid).toMatch(VERSION_UID);
      expect(created.body.content).toEqual(f.canonical.content);
      expect(created.body.context).toEqual(f.canonical.context);

      const asFlat = await api('GET', `/ehr/ehr-p-1001/composition/${uid}?format=FLAT`);
      expect(asFlat.status).toBe(200);
      const root = Object.keys(asFlat.body)[0].split('/')[0];
      expect(asFlat.body[`${root}/_uid`]).toBe(uid);
      if (f === MULTI) expect(points(withoutUid(asFlat.body))).toEqual(points(withoutUid(f.flat)));

      const asStructured = await api('GET', `/ehr/ehr-p-1001/composition/${uid}?format=STRUCTURED`);
      expect(Object.keys(asStructured.body)).toEqual([root]);
      // EHRbase's multi-occurrence example writes date-times without an offset, which the OAS's date-time format requires.
      const canonical = await (f === MULTI ? api : checked)('GET', `/ehr/ehr-p-1001/composition/${uid}`);
      expect(canonical.body).toMatchObject({ _type: 'COMPOSITION', uid: { value: uid }, archetype_node_id: f.canonical.archetype_node_id });
    });

    it.each([MULTI, EVENTS])('stores the published FLAT composition of $id and answers it back in FLAT unchanged', async (f) => {
      const created = await api('POST', `/ehr/ehr-p-1001/composition?templateId=${encodeURIComponent(f.id)}&format=FLAT`, {
        body: f.flat,
        headers: representation,
      });
      expect(created.status).toBe(201);
      expect(points(withoutUid(created.body))).toEqual(points(withoutUid(f.flat)));
      const uid = created.headers.get('etag')!.replace(/"/g, '');
      const canonical = await (f === MULTI ? api : checked)('GET', `/ehr/ehr-p-1001/composition/${uid}`);
      expect(canonical.body._type).toBe('COMPOSITION');
      expect(Array.isArray(canonical.body.content)).toBe(true);
    });

    it('[EHR-007] takes STRUCTURED input and updates a composition in FLAT', async () => {
      const structured = await api('GET', `${template(MULTI.id)}/example?format=STRUCTURED`);
      const created = await api('POST', `/ehr/ehr-p-1001/composition?templateId=${MULTI.id}&format=STRUCTURED`, { body: structured.body, headers: json });
      expect(created.status).toBe(201);
      const uid = created.headers.get('etag')!.replace(/"/g, '');
      const flat = { ...withoutUid(MULTI.flat), 'encounter/body_temperature:0/any_event:0/temperature|magnitude': 37.5 };
      const updated = await api('PUT', `/ehr/ehr-p-1001/composition/${uid.split('::')[0]}?format=FLAT&templateId=${MULTI.id}`, {
        body: flat,
        headers: { ...representation, 'if-match': `"${uid}"` },
      });
      expect(updated.status).toBe(200);
      expect(updated.body['encounter/body_temperature:0/any_event:0/temperature|magnitude']).toBe(37.5);
      expect(updated.body['encounter/_uid']).toBe(uid.replace(/::1$/, '::2'));
    });

    it('[EHR-003] answers 422 with an error per path (archetype path and web-template path) and stores nothing', async () => {
      const flat = {
        ...MULTI.flat,
        'encounter/body_temperature:0/any_event:1/temperature|magnitude': 250,
        'encounter/body_temperature:0/location_of_measurement|code': 'at9999',
      };
      const before = await t.request('GET', '/api/ehr/patients/p-1001/compositions?limit=100', { headers: { 'x-tenant-id': 'demo' } });
      const res = await api('POST', `/ehr/ehr-p-1001/composition?templateId=${MULTI.id}&format=FLAT`, { body: flat, headers: json });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('COMPOSITION_INVALID');
      expect(res.body.error.details).toEqual([
        {
          path: '/content[openEHR-EHR-OBSERVATION.body_temperature.v2]/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value/magnitude',
          webTemplatePath: 'encounter/body_temperature:0/any_event:1/temperature',
          message: '250 is above the exclusive maximum 100 Cel',
        },
        expect.objectContaining({
          path: '/content[openEHR-EHR-OBSERVATION.body_temperature.v2]/protocol[at0020]/items[at0021]/value/defining_code',
          webTemplatePath: 'encounter/body_temperature:0/location_of_measurement',
        }),
      ]);
      const after = await t.request('GET', '/api/ehr/patients/p-1001/compositions?limit=100', { headers: { 'x-tenant-id': 'demo' } });
      expect(after.body.pagination.total).toBe(before.body.pagination.total);
      const unknownFlat = await api('POST', `/ehr/ehr-p-1001/composition?templateId=${MULTI.id}&format=FLAT`, { body: { 'encounter/nope': 1 }, headers: json });
      expect(unknownFlat.status).toBe(400);
      expect((await api('POST', `/ehr/ehr-p-1001/composition?format=XML`, { body: MULTI.canonical, headers: json })).status).toBe(400);
    });

    it('keeps the content encrypted at rest and audits the commit', async () => {
      const created = await api('POST', '/ehr/ehr-p-1001/composition', { body: MULTI.canonical, headers: json });
      const uid = created.headers.get('etag')!.replace(/"/g, '');
      const [row] = (await t.platform.db!.query<{ contentEnc: string }>('SELECT "contentEnc" FROM ehr."CompositionVersion" WHERE uid = $1', [uid])).rows;
      expect(row.contentEnc).toMatch(/^v1\./);
      expect(row.contentEnc).not.toContain('body_temperature');
      const audit = await t.request('GET', `/api/ehr/audit?entityId=${uid.split('::')[0]}&entityType=Composition`);
      expect(audit.body.data).toHaveLength(1);
    });
  });

  describe('the demo templates (operational templates shipped with CareGraph)', () => {
    const DEMO = [
      ['vital_signs.v1', 'observation'],
      ['encounter.v1', 'encounter'],
      ['lab_result.v1', 'observation'],
      ['medication_order.v1', 'order'],
      ['clinical_note.v1', 'document'],
    ];
    const demo = { 'x-tenant-id': 'demo' };
    /** Commits content of a demo template to ehr-p-1003 through /api/ehr/compositions. */
    const post = (templateId: string, content: unknown) =>
      t.request('POST', '/api/ehr/compositions', { body: { templateId, ehrId: 'ehr-p-1003', content }, headers: demo });
    /** A composition of ehr-p-1003 in FLAT. */
    const flatOf = async (uid: string) => (await api('GET', `/ehr/ehr-p-1003/composition/${uid}?format=FLAT`)).body;

    it.each(DEMO)('%s is an OPT with a web template; its FLAT and canonical compositions are stored and read back', async (id, area) => {
      const xml = await api('GET', template(id), { headers: { accept: 'application/xml' } });
      expect(xml.status).toBe(200);
      expect(xml.text).toContain(`<value>${id}</value>`);
      const list = await api('GET', '/definition/template/adl1.4');
      expect(list.body).toEqual(expect.arrayContaining([expect.objectContaining({ template_id: id, format: 'OPT 1.4', area })]));
      const web = await api('GET', template(id), { headers: { accept: 'application/openehr.wt+json' } });
      expect(web.body).toMatchObject({ templateId: id, tree: { rmType: 'COMPOSITION' } });

      const example = (await api('GET', `${template(id)}/example?format=FLAT`)).body;
      const fromFlat = await api('POST', `/ehr/ehr-p-1003/composition?templateId=${id}&format=FLAT`, { body: example, headers: representation });
      expect(fromFlat.status).toBe(201);
      expect(points(withoutUid(fromFlat.body))).toEqual(points(withoutUid(example)));
      const uid = fromFlat.headers.get('etag')!.replace(/"/g, '');
      expect(points(withoutUid(await flatOf(uid)))).toEqual(points(withoutUid(example)));

      // vital_signs.v1's example holds a DV_PROPORTION (SpO₂), whose `type` the OAS, written against a later RM,
      // names `semantic_type`; EHRbase and the openEHR SDK read and write `type`, as CareGraph does.
      const rm = id === 'vital_signs.v1' ? api : checked;
      const canonical = (await rm('GET', `/ehr/ehr-p-1003/composition/${uid}`)).body;
      expect(canonical).toMatchObject({ _type: 'COMPOSITION', archetype_details: { template_id: { value: id } } });
      const fromCanonical = await rm('POST', '/ehr/ehr-p-1003/composition', { body: canonical, headers: representation });
      expect(fromCanonical.status).toBe(201);
      expect(fromCanonical.body.content).toEqual(canonical.content);
      const structured = await api('GET', `/ehr/ehr-p-1003/composition/${fromCanonical.body.uid.value}?format=STRUCTURED`);
      expect(Object.keys(structured.body)).toEqual([web.body.tree.id]);
    });

    it('stores the documented vital-signs body as RM at the archetype paths, and maps it to FHIR Observations with LOINC and UCUM', async () => {
      const body = {
        blood_pressure: { systolic: { magnitude: 132, unit: 'mm[Hg]' }, diastolic: { magnitude: 85, unit: 'mm[Hg]' }, position: { code: 'at1001' } },
        pulse: { rate: { magnitude: 68, unit: '/min' }, regular: true },
        recorded_at: '2026-11-22T09:00:00Z',
      };
      const created = await post('vital_signs.v1', body);
      expect(created.status).toBe(201);
      expect(created.body.content).toEqual({ ...body, blood_pressure: { ...body.blood_pressure, position: { code: 'at1001', value: 'Sitting' } } });
      const id = created.body.uid.split('::')[0];
      const rm = (await checked('GET', `/ehr/ehr-p-1003/composition/${created.body.uid}`)).body;
      const bp = rm.content.find((e: any) => e.archetype_node_id === 'openEHR-EHR-OBSERVATION.blood_pressure.v2');
      const event = bp.data.events.find((e: any) => e.archetype_node_id === 'at0006');
      expect(event.data.items.find((i: any) => i.archetype_node_id === 'at0004').value).toEqual({ _type: 'DV_QUANTITY', magnitude: 132, units: 'mm[Hg]' });
      expect(rm.composer).toMatchObject({ _type: 'PARTY_IDENTIFIED', name: 'test-user' });

      const observation = await t.request('GET', `/fhir/R4/Observation/${id}.blood-pressure`, { headers: demo });
      expect(observation.status).toBe(200);
      expect(observation.body).toMatchObject({
        resourceType: 'Observation',
        status: 'final',
        category: [{ coding: [{ code: 'vital-signs' }] }],
        code: { coding: [{ system: 'http://loinc.org', code: '85354-9' }] },
        subject: { reference: 'Patient/p-1003' },
        effectiveDateTime: '2026-11-22T09:00:00Z',
        component: [
          {
            code: { coding: [{ system: 'http://loinc.org', code: '8480-6' }] },
            valueQuantity: { value: 132, unit: 'mm[Hg]', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
          },
          {
            code: { coding: [{ system: 'http://loinc.org', code: '8462-4' }] },
            valueQuantity: { value: 85, unit: 'mm[Hg]', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
          },
        ],
        note: [{ text: 'Position: Sitting' }],
      });
      const pulse = await t.request('GET', `/fhir/R4/Observation/${id}.pulse`, { headers: demo });
      expect(pulse.body).toMatchObject({
        code: { coding: [{ code: '8867-4' }] },
        valueQuantity: { value: 68, code: '/min' },
        note: [{ text: 'Regular rhythm' }],
      });
    });

    it('maps the other vital signs of a canonical composition to FHIR, and shows it canonical where the simple form cannot hold it', async () => {
      const example = (await api('GET', `${template('vital_signs.v1')}/example?format=FLAT`)).body;
      const flat = {
        ...example,
        'vital_signs/blood_pressure/any_event:0/systolic|magnitude': 118,
        'vital_signs/blood_pressure/any_event:0/diastolic|magnitude': 76,
        'vital_signs/body_temperature/any_event:0/temperature|magnitude': 37.4,
        'vital_signs/body_weight/any_event:0/weight|magnitude': 71.5,
      };
      const created = await post('vital_signs.v1', flat);
      expect(created.status).toBe(201);
      expect(created.body.content._type).toBe('COMPOSITION');
      const id = created.body.uid.split('::')[0];
      const temperature = await t.request('GET', `/fhir/R4/Observation/${id}.body-temperature`, { headers: demo });
      expect(temperature.body).toMatchObject({
        code: { coding: [{ system: 'http://loinc.org', code: '8310-5' }] },
        valueQuantity: { value: 37.4, unit: 'Cel', system: 'http://unitsofmeasure.org', code: 'Cel' },
      });
      const weight = await t.request('GET', `/fhir/R4/Observation/${id}.body-weight`, { headers: demo });
      expect(weight.body).toMatchObject({ code: { coding: [{ code: '29463-7' }] }, valueQuantity: { value: 71.5, code: 'kg' } });
    });

    it('maps a lab result composition to a laboratory Observation read from its archetype paths', async () => {
      const lab = {
        lab_result: {
          test_name: { code: '2160-0' },
          status: { code: 'preliminary' },
          specimen_collected_at: '2026-11-22T07:30:00Z',
          results: [{ analyte: 'Creatinine', value: { magnitude: 140, unit: 'umol/L' }, interpretation: { code: 'H' }, reference_range: '60-110 umol/L' }],
          conclusion: 'Raised creatinine.',
        },
      };
      const created = await post('lab_result.v1', lab);
      expect(created.status).toBe(201);
      const flat = await flatOf(created.body.uid);
      expect(flat).toMatchObject({
        'laboratory_result/laboratory_test_result/overall_test_status|code': 'at0120',
        'laboratory_result/laboratory_test_result/laboratory_analyte_result:0/analyte_result|normal_status': 'H',
        'laboratory_result/laboratory_test_result/time': '2026-11-22T07:30:00Z',
      });
      const observation = await t.request('GET', `/fhir/R4/Observation/${created.body.uid.split('::')[0]}`, { headers: demo });
      expect(observation.body).toMatchObject({
        status: 'preliminary',
        category: [{ coding: [{ code: 'laboratory' }] }],
        code: { coding: [{ system: 'http://loinc.org', code: '2160-0', display: 'Creatinine' }] },
        effectiveDateTime: '2026-11-22T07:30:00Z',
        valueQuantity: { value: 140, unit: 'umol/L', system: 'http://unitsofmeasure.org' },
        interpretation: [{ coding: [{ code: 'H' }] }],
        referenceRange: [{ text: '60-110 umol/L' }],
        note: [{ text: 'Raised creatinine.' }],
      });
    });

    it('stores the documented medication-order body at the CKM archetype paths and maps it to a FHIR MedicationRequest', async () => {
      const order = {
        medication_order: {
          medication: 'Amoxicillin 500 mg capsule',
          route: { code: '20053000' },
          dose: { magnitude: 500, unit: 'mg' },
          doses_per_day: 3,
          as_needed: true,
          start_date: '2026-10-01',
          end_date: '2026-10-08',
          instructions: 'Complete the course.',
        },
      };
      const created = await post('medication_order.v1', order);
      expect(created.status).toBe(201);
      expect(created.body.content).toEqual({ medication_order: { ...order.medication_order, route: { code: '20053000', value: 'Oral' } } });
      const flat = await flatOf(created.body.uid);
      expect(flat).toMatchObject({
        'prescription/medication_order/order/medication_item': 'Amoxicillin 500 mg capsule',
        'prescription/medication_order/order/route|code': '20053000',
        'prescription/medication_order/order/therapeutic_direction/dosage/dose|magnitude': 500,
        'prescription/medication_order/order/therapeutic_direction/dosage/timing_daily/frequency|magnitude': 3,
        'prescription/medication_order/order/therapeutic_direction/dosage/timing_daily/as_required': true,
        'prescription/medication_order/order/order_details/order_stop_date_time': '2026-10-08T00:00:00Z',
      });
      const request = await t.request('GET', `/fhir/R4/MedicationRequest/${created.body.uid.split('::')[0]}`, { headers: demo });
      expect(request.status).toBe(200);
      expect(request.body).toMatchObject({
        resourceType: 'MedicationRequest',
        status: 'completed',
        intent: 'order',
        medicationCodeableConcept: { text: 'Amoxicillin 500 mg capsule' },
        subject: { reference: 'Patient/p-1003' },
        dosageInstruction: [
          {
            text: 'Complete the course.',
            timing: { repeat: { boundsPeriod: { start: '2026-10-01', end: '2026-10-08' }, frequency: 3, period: 1, periodUnit: 'd' } },
            asNeededBoolean: true,
            route: { coding: [{ system: 'http://standardterms.edqm.eu', code: '20053000', display: 'Oral' }] },
            doseAndRate: [{ doseQuantity: { value: 500, unit: 'mg', system: 'http://unitsofmeasure.org', code: 'mg' } }],
          },
        ],
      });
    });

    it('stores the documented clinical-note body in a CKM report composition and maps it to a FHIR DocumentReference from the RM', async () => {
      const note = {
        title: 'Discharge letter',
        note_type: { code: '18842-5' },
        authored_at: '2026-11-21T16:00:00Z',
        author: 'Dr. A. Jones',
        body: 'Home; BP < 130 & stable.',
      };
      const created = await post('clinical_note.v1', { note });
      expect(created.status).toBe(201);
      expect(created.body.content).toEqual({ note: { ...note, note_type: { code: '18842-5', value: 'Discharge summary' } } });
      const rm = (await checked('GET', `/ehr/ehr-p-1003/composition/${created.body.uid}`)).body;
      expect(rm.archetype_details.archetype_id.value).toBe('openEHR-EHR-COMPOSITION.report.v1');
      expect(rm.composer).toEqual({ _type: 'PARTY_IDENTIFIED', name: 'Dr. A. Jones' });
      const flat = await flatOf(created.body.uid);
      expect(flat).toMatchObject({
        'clinical_note/context/title': 'Discharge letter',
        'clinical_note/context/document_type|code': '18842-5',
        'clinical_note/context/document_type|terminology': 'LOINC',
        'clinical_note/context/start_time': '2026-11-21T16:00:00Z',
        'clinical_note/clinical_synopsis/synopsis': 'Home; BP < 130 & stable.',
      });
      // Unauthored, the writing user composes it, and is not read back as an author.
      const { author: _author, ...unauthored } = note;
      const byUser = await post('clinical_note.v1', { note: unauthored });
      expect(byUser.body.content.note).not.toHaveProperty('author');
      const reference = await t.request('GET', `/fhir/R4/DocumentReference/${created.body.uid.split('::')[0]}`, { headers: demo });
      expect(reference.status).toBe(200);
      expect(reference.body).toMatchObject({
        resourceType: 'DocumentReference',
        status: 'current',
        type: { coding: [{ system: 'http://loinc.org', code: '18842-5', display: 'Discharge summary' }] },
        category: [{ coding: [{ code: 'clinical-note' }] }],
        subject: { reference: 'Patient/p-1003' },
        date: '2026-11-21T16:00:00.000Z',
        author: [{ display: 'Dr. A. Jones' }],
        description: 'Discharge letter',
        content: [{ attachment: { contentType: 'text/plain; charset=utf-8', data: Buffer.from(note.body).toString('base64'), title: 'Discharge letter' } }],
        context: { period: { start: '2026-11-21T16:00:00Z' } },
      });
      const other = await t.request('GET', `/fhir/R4/DocumentReference/${byUser.body.uid.split('::')[0]}`, { headers: demo });
      expect(other.body.author).toBeUndefined();
      // AQL tells the two named context elements apart by name.
      const q =
        "SELECT c/context/other_context[at0001]/items[at0007,'Document type']/value/defining_code/code_string AS type, " +
        "c/context/other_context[at0001]/items[at0007,'Title']/value/value AS title FROM EHR e CONTAINS COMPOSITION c " +
        "WHERE c/archetype_details/template_id/value = 'clinical_note.v1' AND c/name/value = 'Clinical note'";
      const aql = await api('POST', '/query/aql', { body: { q }, headers: json });
      expect(aql.status).toBe(200);
      expect(aql.body.rows).toEqual(expect.arrayContaining([['18842-5', 'Discharge letter']]));
    });

    it('stores the documented encounter body in the COMPOSITION context and CKM archetypes and maps it to a FHIR Encounter', async () => {
      const created = await post('encounter.v1', DOCUMENTED_ENCOUNTER);
      expect(created.status).toBe(201);
      expect(created.body.content).toEqual(DOCUMENTED_ENCOUNTER);
      const rm = (await checked('GET', `/ehr/ehr-p-1003/composition/${created.body.uid}`)).body;
      expect(rm.context).toMatchObject({
        start_time: { value: '2026-11-22T09:30:00Z' },
        end_time: { value: '2026-11-22T10:00:00Z' },
        health_care_facility: { _type: 'PARTY_IDENTIFIED', name: 'Clinic Amstel, room 2' },
        participations: [{ _type: 'PARTICIPATION', function: { value: 'performer' }, performer: { _type: 'PARTY_IDENTIFIED', name: 'Dr. Jones' } }],
      });
      expect(rm.content[0].archetype_node_id).toBe('openEHR-EHR-EVALUATION.reason_for_encounter.v1');
      const flat = await flatOf(created.body.uid);
      expect(flat).toMatchObject({
        'encounter/context/_participation:0|function': 'performer',
        'encounter/context/_participation:0|name': 'Dr. Jones',
        'encounter/context/encounter_details/encounter_id|id': 'apt-42',
        'encounter/reason_for_encounter/contact_type|code': 'AMB',
        'encounter/reason_for_encounter/presenting_problem': 'Follow-up of raised blood pressure',
      });
      // STRUCTURED shares the simple body's root key `encounter`, and is told apart by its template nodes.
      const structured = (await api('GET', `/ehr/ehr-p-1003/composition/${created.body.uid}?format=STRUCTURED`)).body;
      const fromStructured = await post('encounter.v1', structured);
      expect(fromStructured.status).toBe(201);
      expect(fromStructured.body.content).toEqual(DOCUMENTED_ENCOUNTER);
      // The same FLAT posted back is the same encounter.
      const again = await t.request('POST', `/openehr/v1/ehr/ehr-p-1003/composition?templateId=encounter.v1&format=FLAT`, {
        body: withoutUid(flat),
        headers: { ...demo, prefer: 'return=representation' },
      });
      expect(again.status).toBe(201);
      const fhir = await t.request('GET', `/fhir/R4/Encounter/${created.body.uid.split('::')[0]}`, { headers: demo });
      expect(fhir.status).toBe(200);
      expect(fhir.body).toMatchObject({
        resourceType: 'Encounter',
        status: 'finished',
        class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'Ambulatory' },
        subject: { reference: 'Patient/p-1003' },
        period: { start: '2026-11-22T09:30:00Z', end: '2026-11-22T10:00:00Z' },
        participant: [{ individual: { display: 'Dr. Jones' } }],
        reasonCode: [{ text: 'Follow-up of raised blood pressure' }],
        location: [{ location: { display: 'Clinic Amstel, room 2' } }],
        appointment: [{ reference: 'Appointment/apt-42' }],
      });
      const fromFlat = await t.request('GET', `/fhir/R4/Encounter/${again.headers.get('etag')!.replace(/"/g, '').split('::')[0]}`, { headers: demo });
      const { id: _id, meta: _meta, ...resource } = fhir.body;
      expect(fromFlat.body).toMatchObject(resource);
    });

    it('answers simple bodies that break the template with the simple paths', async () => {
      const broken = {
        blood_pressure: { systolic: { magnitude: 1200, unit: 'mm[Hg]' }, diastolic: { magnitude: 80, unit: 'mm[Hg]' } },
        recorded_at: '2026-11-22T09:00:00Z',
      };
      const res = await post('vital_signs.v1', broken);
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ path: 'blood_pressure.systolic.magnitude', message: expect.stringContaining('maximum 1000') }]);
    });
  });

  describe('beside the other APIs', () => {
    it('[EHR-007] POST /api/ehr/compositions takes a canonical or STRUCTURED composition of an OPT, and the demo vital-signs body still', async () => {
      const post = (templateId: string, content: unknown) =>
        t.request('POST', '/api/ehr/compositions', { body: { templateId, ehrId: 'ehr-p-1001', content }, headers: { 'x-tenant-id': 'demo' } });
      const canonical = await post(MULTI.id, MULTI.canonical);
      expect(canonical.status).toBe(201);
      expect(canonical.body.content).toMatchObject({ _type: 'COMPOSITION', content: MULTI.canonical.content });
      expect(canonical.body.content.uid).toBeUndefined();
      const structured = (await api('GET', `${template(MULTI.id)}/example?format=STRUCTURED`)).body;
      const fromStructured = await post(MULTI.id, structured);
      expect(fromStructured.status).toBe(201);
      expect(fromStructured.body.content._type).toBe('COMPOSITION');
      const broken = JSON.parse(JSON.stringify(structured));
      broken.encounter.body_temperature[0].any_event[0].temperature[0]['|unit'] = 'K';
      const invalid = await post(MULTI.id, broken);
      expect(invalid.status).toBe(422);
      expect(invalid.body.error.details[0]).toMatchObject({ webTemplatePath: 'encounter/body_temperature:0/any_event:0/temperature' });
      const demo = {
        blood_pressure: { systolic: { magnitude: 120, unit: 'mm[Hg]' }, diastolic: { magnitude: 80, unit: 'mm[Hg]' } },
        pulse: { rate: { magnitude: 72, unit: '/min' } },
        recorded_at: '2026-11-22T09:00:00Z',
      };
      expect((await post('vital_signs.v1', demo)).status).toBe(201);
    });

    it('leaves FHIR search and AQL working when the record holds compositions of operational templates', async () => {
      expect((await api('POST', '/ehr/ehr-p-1001/composition', { body: MULTI.canonical, headers: json })).status).toBe(201);
      const fhir = await t.request('GET', '/fhir/R4/Observation?patient=p-1001', { headers: { 'x-tenant-id': 'demo' } });
      expect(fhir.status).toBe(200);
      const aql = await api('POST', '/query/aql', { body: { q: 'SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c' }, headers: json });
      expect(aql.status).toBe(200);
    });
  });
});
