import { clinicalContent, clinicalPatientId } from '../bench/lib/clinical-load';
import { NOTE } from './ehr-fixtures';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { compositionDecrypts, loadCompositions } from './support/clinical-load';

/** Bulk-loaded as the benchmark's scenario 6 loads them: 300 patients × 10 compositions. */
const PATIENTS = 300;
const PER_PATIENT = 10;
const DAYS = 365;
/**
 * Compositions a search may decrypt beyond those its page holds: none. The index selects the page in SQL;
 * each of the page's compositions is decrypted once, and nothing else is.
 */
const DECRYPT_OVERHEAD = 0;
const HEART_RATE = encodeURIComponent('http://loinc.org|8867-4');
/** Clinical notes of patient 1, each its own composition. */
const NOTES = 6;

/** Distinct compositions behind a page of Observations (`<composition uuid>.<slot>`). */
const compositionsOf = (bundle: any) => new Set((bundle.entry ?? []).map((e: any) => String(e.resource.id).split('.')[0])).size;

describe(`clinical queries decrypt only what they return, over ${PATIENTS * PER_PATIENT} bulk-loaded compositions (${backendName})`, () => {
  let t: TestPlatform;
  const now = new Date();
  // Patients from the start, the middle and the end of the load.
  const sampled = [0, 1, 149, 298, 299];

  beforeAll(async () => {
    t = await startTestPlatform();
    const written = await loadCompositions(t, { patients: PATIENTS, perPatient: PER_PATIENT, now, days: DAYS });
    expect(written).toBe(PATIENTS * PER_PATIENT);
    for (let day = 1; day <= NOTES; day++) {
      const content = { note: { ...NOTE(`Note ${day}`).note, authored_at: `2026-11-0${day}T10:00:00Z` } };
      const res = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'clinical_note.v1', ehrId: `ehr-${clinicalPatientId(1)}`, content } });
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => {
    await t?.stop();
  });

  /** A search, with the compositions it decrypted. */
  const measured = async (query: string, resourceType = 'Observation') => {
    const before = await compositionDecrypts(t);
    const res = await t.request('GET', `/fhir/R4/${resourceType}?${query}`);
    expect(res.status).toBe(200);
    return { bundle: res.body, decrypted: (await compositionDecrypts(t)) - before };
  };

  /** What the loader wrote for patient `p`: each vital-signs composition's time and pulse. */
  const vitalsOf = (p: number) =>
    Array.from({ length: PER_PATIENT }, (_, k) => clinicalContent(p, k, { now, days: DAYS }))
      .filter((c) => c.templateId === 'vital_signs.v1')
      .map((c) => ({ at: c.content.recorded_at as string, rate: (c.content.pulse as any).rate.magnitude as number }))
      .sort((a, b) => b.at.localeCompare(a.at));

  it("a patient's latest vitals (category=vital-signs, _sort=-date, _count=10)", async () => {
    for (const p of sampled) {
      const { bundle, decrypted } = await measured(`patient=Patient/${clinicalPatientId(p)}&category=vital-signs&_sort=-date&_count=10`);
      const vitals = vitalsOf(p);
      // Each vital-signs composition is two Observations: the blood pressure panel and the heart rate.
      expect(bundle.total).toBe(2 * vitals.length);
      expect(bundle.entry).toHaveLength(10);
      expect(bundle.entry.map((e: any) => e.resource.effectiveDateTime)).toEqual(vitals.slice(0, 5).flatMap((v) => [v.at, v.at]));
      expect(decrypted).toBeGreaterThan(0);
      expect(decrypted).toBeLessThanOrEqual(compositionsOf(bundle) + DECRYPT_OVERHEAD);
    }
  });

  it("a patient's latest heart rates (code=<LOINC>, _sort=-date, _count=10), values as loaded", async () => {
    for (const p of sampled) {
      const { bundle, decrypted } = await measured(`patient=Patient/${clinicalPatientId(p)}&code=${HEART_RATE}&_sort=-date&_count=10`);
      const vitals = vitalsOf(p);
      expect(bundle.total).toBe(vitals.length);
      expect(bundle.entry.map((e: any) => e.resource.valueQuantity.value)).toEqual(vitals.map((v) => v.rate));
      expect(decrypted).toBeGreaterThan(0);
      expect(decrypted).toBeLessThanOrEqual(compositionsOf(bundle) + DECRYPT_OVERHEAD);
    }
  });

  it("a patient's Observations without a value (value-quantity:missing=true, lab results among them), in SQL", async () => {
    for (const p of sampled) {
      // The loader's lab results have one analyte each, so a value: only the blood pressure panels (one per vital-signs composition) match.
      const { bundle, decrypted } = await measured(`patient=Patient/${clinicalPatientId(p)}&value-quantity:missing=true&_count=3`);
      expect(bundle.total).toBe(vitalsOf(p).length);
      expect(bundle.entry.map((e: any) => e.resource.code.coding[0].code)).toEqual(['85354-9', '85354-9', '85354-9']);
      expect(decrypted).toBeLessThanOrEqual(compositionsOf(bundle) + DECRYPT_OVERHEAD);
    }
  });

  it("a patient's notes of a type (type=<LOINC>) in SQL; the decrypts of a search the index does not serve: every candidate", async () => {
    const query = `patient=Patient/${clinicalPatientId(1)}&type=11506-3&_count=2`;
    const indexed = await measured(query, 'DocumentReference');
    expect(indexed.bundle.total).toBe(NOTES);
    expect(indexed.bundle.entry).toHaveLength(2);
    expect(indexed.decrypted).toBeLessThanOrEqual(2 + DECRYPT_OVERHEAD);
    // A CareGraph JSON template's content is not indexed leaf by leaf: once one is in the area, its searches decrypt every note of the patient.
    const definition = { type: 'object', children: { weight: { type: 'quantity', required: true, units: [{ unit: 'kg', min: 0, max: 500 }] } } };
    const uploaded = await t.graphql('mutation($i: UploadTemplateInput!) { uploadTemplate(input: $i) { id } }', {
      i: { id: 'scan_document.v1', name: 'Not indexed', area: 'DOCUMENT', definition },
    });
    expect(uploaded.body.errors).toBeUndefined();
    const scanned = await measured(query, 'DocumentReference');
    expect(scanned.bundle.entry).toEqual(indexed.bundle.entry);
    expect(scanned.decrypted).toBeGreaterThanOrEqual(NOTES);
  });
});
