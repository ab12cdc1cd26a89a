import { XMLParser } from 'fast-xml-parser';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cdaSchematronErrors, SCHEMATRON } from '../../../../test/support/cda-schematron';
import { cdaSchemaErrors } from '../../../../test/support/cda-xsd';
import { buildCcd, nameUuid, type DocumentInput } from './ccd';

const LOINC = 'http://loinc.org';
const UCUM = 'http://unitsofmeasure.org';
const subject = { reference: 'Patient/p-1' };
const vitals = {
  resourceType: 'Observation',
  id: '0b8f5a52-6f0e-4a55-9a43-3a2b0f7b1c01.blood-pressure',
  status: 'final',
  category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs' }] }],
  code: { coding: [{ system: LOINC, code: '85354-9' }] },
  subject,
  effectiveDateTime: '2026-11-22T09:00:00Z',
  component: [
    { code: { coding: [{ system: LOINC, code: '8480-6' }] }, valueQuantity: { value: 120, unit: 'mm[Hg]', system: UCUM, code: 'mm[Hg]' } },
    { code: { coding: [{ system: LOINC, code: '8462-4' }] }, valueQuantity: { value: 80, unit: 'mm[Hg]', system: UCUM, code: 'mm[Hg]' } },
  ],
};
const glucose = {
  resourceType: 'Observation',
  id: '0b8f5a52-6f0e-4a55-9a43-3a2b0f7b1c03',
  status: 'final',
  category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
  code: { coding: [{ system: LOINC, code: '2345-7', display: 'Glucose' }] },
  subject,
  effectiveDateTime: '2026-11-22T08:00:00Z',
  valueQuantity: { value: 5.4, unit: 'mmol/L', system: UCUM, code: 'mmol/L' },
};
const pulse = {
  ...glucose,
  id: '0b8f5a52-6f0e-4a55-9a43-3a2b0f7b1c04.pulse',
  category: vitals.category,
  code: { coding: [{ system: LOINC, code: '8867-4' }] },
};
const note = {
  resourceType: 'DocumentReference',
  id: '0b8f5a52-6f0e-4a55-9a43-3a2b0f7b1c02',
  status: 'current',
  type: { coding: [{ system: LOINC, code: '11506-3', display: 'Progress note' }] },
  subject,
  date: '2026-11-22T10:00:00.000Z',
  description: 'Follow-up <review> & plan',
  content: [{ attachment: { contentType: 'text/plain', data: Buffer.from('Doing well; BP < 130 & stable').toString('base64') } }],
};
const input = (resources: DocumentInput['resources']): DocumentInput => ({
  tenantId: 'demo',
  documentId: nameUuid('doc'),
  setId: nameUuid('set'),
  version: 3,
  effectiveTime: new Date('2026-11-23T12:00:00Z'),
  title: 'Continuity of Care Document',
  patient: { resourceType: 'Patient', id: 'p-1', name: [{ family: 'Doe', given: ['Jane'] }], gender: 'female', birthDate: '1980-02-03' },
  resources,
});
const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml).ClinicalDocument;
const sections = (doc: any) => [doc.component.structuredBody.component].flat().map((c: any) => c.section);
/** Valid against the CDA R2 schema and the C-CDA 2.1 Schematron's errors phase. */
const expectValid = (xml: string) => {
  expect(cdaSchemaErrors(xml)).toBe('');
  expect(cdaSchematronErrors(xml)).toEqual([]);
};

describe('CCD builder', () => {
  it('makes a valid document with every section, empty ones flagged "no information"', () => {
    const xml = buildCcd(input([]));
    expectValid(xml);
    const doc = parse(xml);
    expect(sections(doc).map((s: any) => [s.code.code, s.nullFlavor])).toEqual(
      ['48765-2', '11450-4', '29762-2', '10160-0', '8716-3', '30954-2', '46240-8', '11488-4'].map((code) => [code, 'NI']),
    );
    expect(doc.setId.root).toBe(nameUuid('set'));
    expect(doc.versionNumber.value).toBe('3');
  });

  it('[XCH-009, XCH-017] makes a valid document for a patient registered without a name', () => {
    const { name: _name, ...nameless } = input([]).patient;
    const xml = buildCcd({ ...input([]), patient: nameless });
    expectValid(xml);
    expect(parse(xml).recordTarget.patientRole.patient.name).toEqual({ nullFlavor: 'UNK' });
  });

  it('codes vital signs with LOINC and UCUM, keeps note text escaped, and names record ids under the tenant namespace', () => {
    const xml = buildCcd(input([vitals, note]));
    expectValid(xml);
    const doc = parse(xml);
    const [, , , , vital, , , notes] = sections(doc);
    expect(vital.nullFlavor).toBeUndefined();
    const organizer = vital.entry.organizer;
    expect(organizer.id).toEqual({ root: nameUuid('tenant:demo'), extension: vitals.id });
    expect(organizer.code).toMatchObject({ code: '46680005', codeSystem: '2.16.840.1.113883.6.96', translation: { code: '74728-7' } });
    const systolic = [organizer.component].flat()[0].observation;
    expect(systolic.code.code).toBe('8480-6');
    expect(systolic.value).toMatchObject({ value: '120', unit: 'mm[Hg]' });
    expect(notes.entry.act.text).toBe('Doing well; BP < 130 & stable');
    expect(doc.recordTarget.patientRole.id).toEqual({ root: nameUuid('tenant:demo'), extension: 'p-1' });
  });

  it('gives medication activities their period and every versioned section its R1.1 templateId (C-CDA Schematron rules)', () => {
    const order = {
      resourceType: 'MedicationRequest',
      id: 'm-1',
      status: 'active',
      intent: 'order',
      medicationCodeableConcept: { text: 'Metformin 500 mg tablet' },
      subject,
      dosageInstruction: [
        {
          timing: { repeat: { boundsPeriod: { start: '2026-11-22' }, frequency: 2, period: 1, periodUnit: 'd' } },
          route: { coding: [{ system: 'http://standardterms.edqm.eu', code: '20053000' }] },
          doseAndRate: [{ doseQuantity: { value: 500, unit: 'mg', system: UCUM, code: 'mg' } }],
        },
      ],
    };
    const xml = buildCcd(input([order, vitals]));
    expectValid(xml);
    const doc = parse(xml);
    const administration = sections(doc)[3].entry.substanceAdministration;
    expect(administration.effectiveTime[0]).toMatchObject({ 'xsi:type': 'IVL_TS', low: { value: '20261122' }, high: { nullFlavor: 'NI' } });
    expect(administration.consumable.manufacturedProduct.manufacturedMaterial.code).toEqual({ nullFlavor: 'OTH', originalText: 'Metformin 500 mg tablet' });
    expect(administration.routeCode).toMatchObject({ code: '20053000', codeSystem: '0.4.0.127.0.16.1.1.2.1' });
    for (const s of sections(doc)) {
      const ids = [s.templateId].flat();
      for (const id of ids.filter((i: any) => i.extension)) expect(ids).toContainEqual({ root: id.root });
    }
  });

  it('puts single vital signs and results in the organizers C-CDA 2.1 requires', () => {
    const xml = buildCcd(input([pulse, glucose]));
    expectValid(xml);
    const [, , , , vital, results] = sections(parse(xml));
    const vitalOrganizer = vital.entry.organizer;
    expect([vitalOrganizer.templateId].flat()).toContainEqual({ root: '2.16.840.1.113883.10.20.22.4.26', extension: '2015-08-01' });
    expect(vitalOrganizer.code.code).toBe('46680005');
    expect(vitalOrganizer.component.observation.code.code).toBe('8867-4');
    const resultOrganizer = results.entry.organizer;
    expect([resultOrganizer.templateId].flat()).toContainEqual({ root: '2.16.840.1.113883.10.20.22.4.1', extension: '2015-08-01' });
    expect(resultOrganizer.code.code).toBe('2345-7');
    expect(resultOrganizer.component.observation.value).toMatchObject({ value: '5.4', unit: 'mmol/L' });
    expect(resultOrganizer.id.root).not.toBe(resultOrganizer.component.observation.id.root);
  });

  it("has every value set the Schematron's assertions read in the vendored value-set file", () => {
    const vocabulary = readFileSync(join(__dirname, '../../../../test/fixtures/cda/schematron/voc.xml'), 'utf8');
    const read = new Set([...SCHEMATRON.matchAll(/document\('voc\.xml'\)[^\]]*@valueSetOid='([0-9.]+)'/g)].map((m) => m[1]));
    expect(read.size).toBeGreaterThan(10);
    for (const oid of read) expect(vocabulary).toContain(`valueSetOid="${oid}"`);
  });

  it('is found invalid by the schema check when the document is broken (the check can fail)', () => {
    const xml = buildCcd(input([])).replace('<languageCode', '<notACdaElement/><languageCode');
    expect(cdaSchemaErrors(xml)).toMatch(/notACdaElement/);
  });

  it('is found non-conformant by the Schematron when a rule is broken, including the rule with variables', () => {
    const xml = buildCcd(input([vitals]));
    expect(cdaSchematronErrors(xml.replace('code="46680005"', 'code="12345"'))).toEqual([expect.stringMatching(/^a-1198-32741: .*46680005/)]);
    const withoutR11 = xml.replace(/<templateId root="2\.16\.840\.1\.113883\.10\.20\.22\.2\.4\.1"\/>/, '');
    expect(withoutR11).not.toBe(xml);
    expect(cdaSchematronErrors(withoutR11)).toEqual([
      expect.stringMatching(/^hasCompatibleR1\.1TemplateId: .* at 2\.16\.840\.1\.113883\.10\.20\.22\.2\.4\.1:2015-08-01$/),
    ]);
  });
});
