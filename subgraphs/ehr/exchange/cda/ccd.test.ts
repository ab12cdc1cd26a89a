import { XMLParser } from 'fast-xml-parser';
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

describe('CCD builder', () => {
  it('makes a schema-valid document with every section, empty ones flagged "no information"', () => {
    const xml = buildCcd(input([]));
    expect(cdaSchemaErrors(xml)).toBe('');
    const doc = parse(xml);
    expect(sections(doc).map((s: any) => [s.code.code, s.nullFlavor])).toEqual(
      ['48765-2', '11450-4', '10160-0', '8716-3', '30954-2', '46240-8', '11488-4'].map((code) => [code, 'NI']),
    );
    expect(doc.setId.root).toBe(nameUuid('set'));
    expect(doc.versionNumber.value).toBe('3');
  });

  it('codes vital signs with LOINC and UCUM, keeps note text escaped, and names record ids under the tenant namespace', () => {
    const xml = buildCcd(input([vitals, note]));
    expect(cdaSchemaErrors(xml)).toBe('');
    const doc = parse(xml);
    const [, , , vital, , , notes] = sections(doc);
    expect(vital.nullFlavor).toBeUndefined();
    const organizer = vital.entry.organizer;
    expect(organizer.id).toEqual({ root: nameUuid('tenant:demo'), extension: vitals.id });
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
    expect(cdaSchemaErrors(xml)).toBe('');
    const doc = parse(xml);
    const administration = sections(doc)[2].entry.substanceAdministration;
    expect(administration.effectiveTime[0]).toMatchObject({ 'xsi:type': 'IVL_TS', low: { value: '20261122' }, high: { nullFlavor: 'NI' } });
    expect(administration.consumable.manufacturedProduct.manufacturedMaterial.code).toEqual({ nullFlavor: 'OTH', originalText: 'Metformin 500 mg tablet' });
    expect(administration.routeCode).toMatchObject({ code: '20053000', codeSystem: '0.4.0.127.0.16.1.1.2.1' });
    for (const s of sections(doc)) {
      const ids = [s.templateId].flat();
      for (const id of ids.filter((i: any) => i.extension)) expect(ids).toContainEqual({ root: id.root });
    }
  });

  it('is found invalid by the schema check when the document is broken (the check can fail)', () => {
    const xml = buildCcd(input([])).replace('<languageCode', '<notACdaElement/><languageCode');
    expect(cdaSchemaErrors(xml)).toMatch(/notACdaElement/);
  });
});
