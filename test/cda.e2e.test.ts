import { XMLParser } from 'fast-xml-parser';
import { startTestPlatform, backendName, type TestPlatform, type TestResponse } from './harness';
import { ENCOUNTER, LAB, NOTE, ORDER, VITALS } from './ehr-fixtures';
import { SchematronThread } from './support/cda-schematron-thread';
import { cdaSchemaErrors } from './support/cda-xsd';

const XML = /^application\/xml/;
const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml).ClinicalDocument;
const sections = (doc: any): any[] => [doc.component.structuredBody.component].flat().map((c: any) => c.section);
const section = (doc: any, loinc: string) => sections(doc).find((s) => s.code.code === loinc);
const entries = (s: any): any[] => (s.entry === undefined ? [] : [s.entry].flat());

describe(`CDA export /api/ehr/…/cda (${backendName})`, () => {
  let t: TestPlatform;
  let tokens: Record<string, string>;
  const uids: Record<string, string> = {};

  /** Every document answered (the same document once), its Schematron check started on another thread; the last test collects them. */
  const schematron = new SchematronThread();
  const answered = new Map<string, { path: string; errors: Promise<string[]> }>();

  /** A CDA answer: XML, valid against HL7's CDA R2 (SDTC) schema, parsed; sent to the Schematron check. */
  const cda = async (path: string, token?: string): Promise<{ res: TestResponse; doc: any }> => {
    const res = await t.request('GET', path, { token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(XML);
    expect(cdaSchemaErrors(res.text)).toBe('');
    if (!answered.has(res.text)) {
      const errors = schematron.errors(res.text);
      // Awaited by the last test; a check that fails before it runs must not count as an unhandled rejection.
      errors.catch(() => {});
      answered.set(res.text, { path, errors });
    }
    return { res, doc: parse(res.text) };
  };

  beforeAll(async () => {
    t = await startTestPlatform();
    tokens = {
      clinician: await t.token({ roles: ['clinician'], sub: 'dr-jones' }),
      receptionist: await t.token({ roles: ['receptionist'], sub: 'desk-1' }),
      integration: await t.token({ roles: ['integration'], sub: 'lab-system' }),
      p1003: await t.token({ roles: ['patient'], patientId: 'p-1003', sub: 'p3' }),
      acme: await t.token({ tenants: ['acme'], sub: 'acme-admin' }),
    };
    const records: Array<[string, string, unknown]> = [
      ['vitals', 'vital_signs.v1', VITALS],
      ['lab', 'lab_result.v1', LAB],
      ['order', 'medication_order.v1', ORDER],
      ['encounter', 'encounter.v1', ENCOUNTER],
      ['note', 'clinical_note.v1', NOTE('Feeling better; BP < 130 & stable')],
    ];
    for (const [name, templateId, content] of records) {
      const res = await t.request('POST', '/api/ehr/compositions', { body: { templateId, ehrId: 'ehr-p-1001', content }, token: tokens.clinician });
      expect(res.status).toBe(201);
      uids[name] = res.body.uid;
    }
  });
  afterAll(async () => {
    await schematron.close();
    await t?.stop();
  });

  it("exports a patient's record as a C-CDA 2.1 CCD: header, coded sections, LOINC and UCUM", async () => {
    const { res, doc } = await cda('/api/ehr/patients/p-1001/cda', tokens.clinician);
    expect(res.headers.get('content-disposition')).toContain('ccd-p-1001.xml');
    expect([doc.templateId].flat()).toContainEqual({ root: '2.16.840.1.113883.10.20.22.1.2', extension: '2015-08-01' });
    expect(doc.code).toMatchObject({ code: '34133-9', codeSystem: '2.16.840.1.113883.6.1' });
    expect(doc.confidentialityCode.code).toBe('N');
    expect(doc.languageCode.code).toBe('en-US');
    expect(doc.versionNumber.value).toBe('1');
    expect(doc.recordTarget.patientRole.patient.name).toMatchObject({ family: 'de Vries', given: 'Anna' });
    expect(doc.recordTarget.patientRole.id.extension).toBe('p-1001');
    expect(doc.custodian.assignedCustodian.representedCustodianOrganization.id.extension).toBe('demo');
    // Sections from the record, and "no information" for what it does not hold.
    expect(section(doc, '48765-2').nullFlavor).toBe('NI');
    expect(section(doc, '11450-4').nullFlavor).toBe('NI');
    const vitals = entries(section(doc, '8716-3')).map((e) => e.organizer);
    expect(vitals.length).toBeGreaterThanOrEqual(2);
    expect(vitals.every((v) => v.code.code === '46680005')).toBe(true);
    const bp = vitals.find((v) => [v.component].flat().some((c: any) => c.observation.code.code === '8480-6'));
    expect([bp.component].flat().map((c: any) => [c.observation.code.code, c.observation.value.value, c.observation.value.unit])).toEqual([
      ['8480-6', '120', 'mm[Hg]'],
      ['8462-4', '80', 'mm[Hg]'],
    ]);
    const result = entries(section(doc, '30954-2'))[0].organizer.component.observation;
    expect(result.code.code).toBe('2345-7');
    expect(result.value).toMatchObject({ value: '5.4', unit: 'mmol/L' });
    const med = entries(section(doc, '10160-0'))[0].substanceAdministration;
    expect(med.doseQuantity).toMatchObject({ value: '500', unit: 'mg' });
    expect(entries(section(doc, '46240-8'))[0].encounter.code.code).toBe('AMB');
    expect(entries(section(doc, '11488-4'))[0].act.text).toBe('Feeling better; BP < 130 & stable');
  });

  it('[XCH-009] exports a valid CCD for every demo patient, in their own tenant', async () => {
    for (const id of ['p-1001', 'p-1002', 'p-1003']) {
      const { doc } = await cda(`/api/ehr/patients/${id}/cda`, tokens.clinician);
      expect(doc.recordTarget.patientRole.id.extension).toBe(id);
    }
    const { doc } = await cda('/api/ehr/patients/p-2001/cda', tokens.acme);
    expect(doc.custodian.assignedCustodian.representedCustodianOrganization.id.extension).toBe('acme');
  });

  it('exports one composition as a document of its own: setId the composition, versionNumber its version', async () => {
    const { doc } = await cda(`/api/ehr/compositions/${encodeURIComponent(uids.vitals)}/cda`, tokens.clinician);
    const compositionId = uids.vitals.split('::')[0];
    expect(doc.setId.root).toBe(compositionId.toUpperCase());
    expect(doc.versionNumber.value).toBe('1');
    expect(entries(section(doc, '8716-3')).length).toBe(2);
    expect(section(doc, '30954-2').nullFlavor).toBe('NI');
    // The same version is the same document.
    const again = await cda(`/api/ehr/compositions/${encodeURIComponent(uids.vitals)}/cda`, tokens.clinician);
    expect(again.doc.id.root).toBe(doc.id.root);
    const note = await cda(`/api/ehr/compositions/${encodeURIComponent(uids.note)}/cda`, tokens.clinician);
    expect(entries(section(note.doc, '11488-4'))).toHaveLength(1);
  });

  it('[LOG-001] logs the export in the patient access log', async () => {
    await cda('/api/ehr/patients/p-1002/cda', tokens.clinician);
    const log = await t.graphql('{ accessLog(patientId: "p-1002", limit: 100) { data { actor entityType } } }');
    expect(log.body.data.accessLog.data).toContainEqual({ actor: 'dr-jones', entityType: 'Patient' });
  });

  it("answers 404 for an unknown patient or composition and for another tenant's patient, 400 for a malformed id", async () => {
    const codes = async (path: string, token?: string) => {
      const res = await t.request('GET', path, { token });
      return [res.status, res.body?.error?.code];
    };
    expect(await codes('/api/ehr/patients/p-9999/cda', tokens.clinician)).toEqual([404, 'NOT_FOUND']);
    expect(await codes('/api/ehr/patients/p-1001/cda', tokens.acme)).toEqual([404, 'NOT_FOUND']);
    expect(await codes(`/api/ehr/compositions/${encodeURIComponent(uids.vitals)}/cda`, tokens.acme)).toEqual([404, 'NOT_FOUND']);
    expect(await codes('/api/ehr/compositions/00000000-0000-4000-8000-000000000000/cda', tokens.clinician)).toEqual([404, 'NOT_FOUND']);
    expect(await codes('/api/ehr/patients/..%2Fx/cda', tokens.clinician)).toEqual([400, 'VALIDATION_ERROR']);
    expect(await codes('/api/ehr/patients/p-1001/cda?format=json', tokens.clinician)).toEqual([400, 'VALIDATION_ERROR']);
  });

  it("refuses roles without clinical access, other patients' records, and integrations without data-sharing consent", async () => {
    const status = async (path: string, token: string) => (await t.request('GET', path, { token })).status;
    expect(await status('/api/ehr/patients/p-1001/cda', tokens.receptionist)).toBe(403);
    expect(await status(`/api/ehr/compositions/${encodeURIComponent(uids.vitals)}/cda`, tokens.receptionist)).toBe(403);
    expect(await status('/api/ehr/patients/p-1001/cda', tokens.p1003)).toBe(404);
    expect(await status('/api/ehr/patients/p-1003/cda', tokens.integration)).toBe(403);
    const grant = await t.graphql('mutation { grantConsent(patientId: "p-1003", purpose: DATA_SHARING, note: "GP exchange") { granted } }', undefined, {
      token: tokens.p1003,
    });
    expect(grant.body.data.grantConsent.granted).toBe(true);
    await cda('/api/ehr/patients/p-1003/cda', tokens.integration);
    // The patient reads their own record's document.
    await cda('/api/ehr/patients/p-1003/cda', tokens.p1003);
  });

  // Last: every document the tests above were answered.
  it('[XCH-009] answered only documents that pass the C-CDA 2.1 Schematron (errors phase)', async () => {
    expect(answered.size).toBeGreaterThanOrEqual(6);
    for (const { path, errors } of answered.values()) expect({ path, errors: await errors }).toEqual({ path, errors: [] });
  });
});
