import { readFileSync } from 'node:fs';
import path from 'node:path';
import { clinicalPatientId } from '../bench/lib/clinical-load';
import { ENCOUNTER, LAB, NOTE, ORDER } from './ehr-fixtures';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { compositionDecrypts, loadCompositions } from './support/clinical-load';
import { provideBundle, uid } from './support/mhd-bundle';

/**
 * FHIR searches the clinical index answers (fhir/indexed-search.ts) give the
 * same Bundles as the in-memory path, decrypting only the page. Each search
 * runs first in SQL, then again after a CareGraph JSON template joins each
 * area (its content is not indexed leaf by leaf, so every search of the area
 * then decrypts and matches its candidates in memory); the Bundles must be
 * equal, links, totals and order included.
 */
const PATIENTS = 40;
const PER_PATIENT = 10;
const NOW = new Date('2026-06-30T00:00:00Z');
const P = clinicalPatientId(3);
const Q = clinicalPatientId(7);
/** A patient with a clinical note and, once the cases have run in SQL, a document in the XDS registry. */
const R = clinicalPatientId(11);
/** A patient with a typed note, a typed note whose title is coded text (LOINC 11506-3), and a note without a type. */
const S = clinicalPatientId(13);
const UCUM = 'http://unitsofmeasure.org';

interface Measured {
  bundle: any;
  decrypted: number;
}

describe(`FHIR search from the clinical index answers as in memory (${backendName})`, () => {
  let t: TestPlatform;
  const sql = new Map<string, Measured>();
  /** Lab results of several analytes: no valueQuantity, a component each. */
  const panels: string[] = [];
  /** A lab result without analytes: no valueQuantity, no component. */
  const noAnalytes: string[] = [];
  /** S's notes: typed (34133-9), typed (34133-9) with a coded title (11506-3), untyped with a coded title (11506-3). */
  const notesOfS: string[] = [];
  /** Ids of resources found in the SQL pass, for `_id` searches. */
  const ids: Record<string, string[]> = {};

  const run = async (query: string): Promise<Measured> => {
    const before = await compositionDecrypts(t);
    const res = await t.request('GET', `/fhir/R4/${query}`);
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${query}`);
    return { bundle: res.body, decrypted: (await compositionDecrypts(t)) - before };
  };
  /** The newest registry audit record before and after a DocumentReference search the index answers. */
  let indexedAudit: { before: unknown; search: Measured; after: unknown } | undefined;
  const matches = (bundle: any) => (bundle.entry ?? []).filter((e: any) => e.search.mode === 'match');

  const cases: Array<[string, () => string]> = [
    ['Observation: heart rates over 100, newest first', () => `Observation?code=8867-4&value-quantity=gt100&_sort=-date&_count=10`],
    ['Observation: value-quantity with unit, page 2', () => `Observation?category=vital-signs&value-quantity=lt60||/min&_count=7&_offset=3`],
    ['Observation: value-quantity eq and ne with UCUM', () => `Observation?code=8867-4&value-quantity=72,ne80|${UCUM}|/min&_count=5`],
    ['Observation: value-quantity of another system', () => `Observation?code=8867-4&value-quantity=gt10|http://example.org|/min`],
    ['Observation: value-quantity of a wrong unit', () => `Observation?code=8867-4&value-quantity=gt10||mm[Hg]`],
    ['Observation: value-quantity and date for one patient', () => `Observation?patient=${P}&code=8867-4&value-quantity=ge70&date=ge2026-01&_sort=date`],
    ['Observation: value-quantity:missing=false', () => `Observation?category=vital-signs&value-quantity:missing=false&_count=3`],
    ['Observation: value-quantity:missing=true (panels)', () => `Observation?code=85354-9,8867-4&value-quantity:missing=true&_count=3&_sort=_lastUpdated`],
    ['Observation: code:not', () => `Observation?code:not=8867-4&_count=5`],
    ['Observation: code:not, two codes, _sort=_lastUpdated', () => `Observation?code:not=85354-9,8867-4&_sort=_lastUpdated&_count=5`],
    ['Observation: lab code:not', () => `Observation?code:not=2345-7&category=laboratory&_count=5&_sort=-_lastUpdated`],
    ['Observation: category:not, _sort=-_lastUpdated', () => `Observation?category:not=vital-signs&_sort=-_lastUpdated&_count=4`],
    ['Observation: lab codes and a date range', () => `Observation?code=2345-7,4548-4&date=ge2026-03&date=lt2026-05-15&_sort=date&_count=6`],
    ['Observation: date:missing=true', () => `Observation?date:missing=true`],
    ['Observation: code:missing=false, patient:missing=false', () => `Observation?code:missing=false&patient:missing=false&_count=2`],
    ['Observation: _sort=_id', () => `Observation?patient=${P}&_sort=_id&_count=4`],
    ['Observation: _sort=-_id', () => `Observation?patient=${P}&_sort=-_id&_count=6&_offset=2`],
    ['Observation: _sort=_lastUpdated,-date', () => `Observation?_sort=_lastUpdated,-date&_count=9&_offset=20`],
    ['Observation: _id', () => `Observation?_id=${ids.observation[0]},${ids.observation[3]},not-an-id&_sort=_id`],
    ['Observation: _id and code', () => `Observation?_id=${ids.observation.join(',')}&code=85354-9`],
    ['Observation: _lastUpdated', () => `Observation?_lastUpdated=ge2026-06-29T23:59:55Z&_sort=_lastUpdated,_id&_count=10&_offset=15`],
    ['Observation: _lastUpdated eq a second, one patient', () => `Observation?patient=${Q}&_lastUpdated=2026-06-29T23:59:52Z`],
    ['Observation: _lastUpdated lt, _sort=-_lastUpdated', () => `Observation?patient=${P}&_lastUpdated=lt2026-06-29T23:59:55Z&_sort=-_lastUpdated`],
    ['Observation: lab value-quantity gt, one patient', () => `Observation?patient=${P}&value-quantity=gt5`],
    ['Observation: lab value-quantity with UCUM unit', () => `Observation?code=2345-7,58410-2&value-quantity=ge5.5|${UCUM}|mmol/L&_sort=-date&_count=5`],
    ['Observation: lab value-quantity lt with unit, page 2', () => `Observation?category=laboratory&value-quantity=lt90||umol/L&_count=4&_offset=4`],
    ['Observation: value-quantity ne and le, labs and vitals', () => `Observation?value-quantity=ne5.4,le3&_sort=_id&_count=8&_offset=2`],
    ['Observation: lab value-quantity eq, a panel value', () => `Observation?patient=${Q}&value-quantity=eq9.9`],
    ['Observation: lab value-quantity of another system', () => `Observation?category=laboratory&value-quantity=gt0|http://example.org|mmol/L`],
    ['Observation: lab value-quantity:missing=false', () => `Observation?patient=${Q}&category=laboratory&value-quantity:missing=false&_sort=_id`],
    ['Observation: labs without valueQuantity (missing=true)', () => `Observation?category=laboratory&value-quantity:missing=true&_sort=_id`],
    ['Observation: missing=true, labs and panels of one patient', () => `Observation?patient=${Q}&value-quantity:missing=true&_sort=-date&_count=4`],
    ['Observation: missing=true, lab codes, page 2', () => `Observation?code=58410-2,2345-7&value-quantity:missing=true&_count=1&_offset=1`],
    ['Observation: missing=true and missing=false', () => `Observation?value-quantity:missing=true&value-quantity:missing=false`],
    ['Observation: _summary=count', () => `Observation?patient=${P}&code=8867-4&value-quantity=gt90&_summary=count`],
    [
      'Observation: _elements and _include',
      () => `Observation?subject=Patient/${Q}&code:not=85354-9&_elements=valueQuantity&_include=Observation:patient&_count=3`,
    ],
    ['Observation: two patients and an unknown one', () => `Observation?patient=${P},${Q},p-unknown&code=8867-4&_sort=-date&_count=8`],
    ['Encounter: one patient', () => `Encounter?patient=${P}`],
    ['Encounter: subject=a,b and patient=b (both apply)', () => `Encounter?subject=Patient/${P},Patient/${Q}&patient=${Q}`],
    ['Encounter: date range, ascending', () => `Encounter?date=ge2026-11-20&date=le2026-11-24&_sort=date`],
    ['Encounter: _sort=-_lastUpdated, page', () => `Encounter?_sort=-_lastUpdated&_count=2&_offset=1`],
    ['Encounter: _id, date:missing=false', () => `Encounter?_id=${ids.encounter.slice(0, 2).join(',')}&date:missing=false`],
    ['MedicationRequest: intent=order', () => `MedicationRequest?patient=${Q}&intent=order`],
    ['MedicationRequest: intent:not', () => `MedicationRequest?intent:not=order`],
    ['MedicationRequest: two patients, _sort=_id', () => `MedicationRequest?patient=${P},${Q}&_sort=_id`],
    ['MedicationRequest: status=completed', () => `MedicationRequest?status=completed`],
    ['MedicationRequest: status=active, _sort=_id', () => `MedicationRequest?status=active&_sort=_id`],
    ['MedicationRequest: status:not=active, one patient', () => `MedicationRequest?patient=${P}&status:not=active`],
    ['MedicationRequest: status=active,completed and status:missing=false', () => `MedicationRequest?status=active,completed&status:missing=false&_sort=_id`],
    ['MedicationRequest: status=stopped, of a system', () => `MedicationRequest?status=stopped,http://hl7.org/fhir/CodeSystem/medicationrequest-status|active`],
    ['MedicationRequest: intent=|order', () => `MedicationRequest?intent=|order`],
    ['MedicationRequest: _sort=_lastUpdated, _id', () => `MedicationRequest?_sort=_lastUpdated&_id=${ids.medication.slice(1).join(',')}`],
    ['MedicationRequest: _lastUpdated:missing=false', () => `MedicationRequest?_lastUpdated:missing=false&_count=2`],
    // The tenant-wide ones leave R's registry document out (its category and security label), so the in-memory pass, which has it, answers the same.
    ['DocumentReference: one patient', () => `DocumentReference?patient=${P}`],
    [
      'DocumentReference: two patients, category and status, by date',
      () => `DocumentReference?patient=${P},${Q}&category=clinical-note&status=current&_sort=date`,
    ],
    [
      'DocumentReference: category of its system, date range, page',
      () =>
        `DocumentReference?category=http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category|clinical-note&date=ge2026-11-12&date=lt2026-11-20&_count=2&_offset=1`,
    ],
    ['DocumentReference: category of another system', () => `DocumentReference?patient=${P}&category=http://loinc.org|clinical-note`],
    ['DocumentReference: status:not', () => `DocumentReference?patient=${Q}&status:not=current,superseded`],
    ['DocumentReference: security-label and format missing, _sort=_id', () => `DocumentReference?security-label:missing=true&format:missing=true&_sort=_id`],
    ['DocumentReference: security-label, format', () => `DocumentReference?patient=${P}&security-label=N`],
    [
      'DocumentReference: security-label:not, _lastUpdated',
      () => `DocumentReference?patient=${Q}&security-label:not=N&_lastUpdated=gt2026-01-01&_sort=-_lastUpdated`,
    ],
    ['DocumentReference: _id, date:missing=false', () => `DocumentReference?_id=${ids.document.slice(1, 4).join(',')}&date:missing=false&_sort=-_id`],
    ['DocumentReference: _summary=count', () => `DocumentReference?patient=${P}&date=le2026-11-12&_summary=count`],
    ['DocumentReference: _include, _elements', () => `DocumentReference?patient=${Q}&_include=DocumentReference:subject&_elements=date`],
    ['DocumentReference: type, newest first, page 2', () => `DocumentReference?type=11506-3&category=clinical-note&_sort=-date&_count=2&_offset=1`],
    ['DocumentReference: type, not a coded title', () => `DocumentReference?patient=${S}&type=11506-3`],
    ['DocumentReference: type of LOINC, two codes', () => `DocumentReference?patient=${P},${S}&type=http://loinc.org|34133-9,18842-5&_sort=_id`],
    ['DocumentReference: any LOINC type', () => `DocumentReference?patient=${S}&type=http://loinc.org|`],
    ['DocumentReference: type of another system or of none', () => `DocumentReference?patient=${Q},${S}&type=http://snomed.info/sct|11506-3,|57133-1`],
    ['DocumentReference: type:not, _sort=_id', () => `DocumentReference?type:not=11506-3,57133-1&category=clinical-note&_sort=_id`],
    ['DocumentReference: type:missing=true', () => `DocumentReference?type:missing=true&category=clinical-note`],
    ['DocumentReference: type:missing=false, _sort=-_lastUpdated', () => `DocumentReference?patient=${Q},${S}&type:missing=false&_sort=-_lastUpdated&_count=3`],
  ];
  /** Searches once R has a registry document (before the in-memory pass). */
  const registry = new Map<string, Measured>();

  beforeAll(async () => {
    t = await startTestPlatform();
    await loadCompositions(t, { patients: PATIENTS, perPatient: PER_PATIENT, now: NOW, days: 180 });
    // Encounters (two at the same start: ties) and medication orders of two patients.
    for (const [patient, day] of [
      [P, 20],
      [P, 22],
      [Q, 22],
      [Q, 25],
      [P, 23],
    ] as const) {
      const content = { encounter: { ...ENCOUNTER.encounter, start: `2026-11-${day}T09:30:00Z` } };
      expect((await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'encounter.v1', ehrId: `ehr-${patient}`, content } })).status).toBe(201);
    }
    // Orders that ended (completed), end in the future and have no end (both active).
    for (const [patient, end] of [
      [P, '2026-01-31'],
      [Q, '2999-12-31'],
      [Q, undefined],
    ] as const) {
      const content = { medication_order: { ...ORDER.medication_order, ...(end ? { end_date: end } : {}) } };
      expect((await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'medication_order.v1', ehrId: `ehr-${patient}`, content } })).status).toBe(
        201,
      );
    }
    // Panels of several analytes, their values chosen to meet the lab cases' value-quantity criteria.
    for (const [patient, values] of [
      [P, [7.2, 9.9]],
      [Q, [9.9, 6.1, 80]],
    ] as const) {
      const results = values.map((magnitude, i) => ({ analyte: `Analyte ${i}`, value: { magnitude, unit: magnitude === 80 ? 'umol/L' : 'mmol/L' } }));
      const content = { lab_result: { ...LAB.lab_result, test_name: { code: '58410-2', value: 'Complete blood count' }, results } };
      const res = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'lab_result.v1', ehrId: `ehr-${patient}`, content } });
      expect(res.status).toBe(201);
      panels.push(res.body.id);
    }
    // A lab result without analytes, under a tenant's variant of lab_result.v1 whose analytes are optional (0..100): the FLAT form of a glucose result less its analytes.
    const opt = readFileSync(path.join(__dirname, '../subgraphs/ehr/clinical/opt/demo/lab_result.v1.opt'), 'utf8')
      .replace('<value>lab_result.v1</value>', '<value>lab_result_any.v1</value>')
      .replace(/(<rm_type_name>CLUSTER<\/rm_type_name>\s*<occurrences>[\s\S]*?<lower>)1(<\/lower>)/, '$10$2');
    expect((await t.request('POST', '/openehr/v1/definition/template/adl1.4', { rawBody: opt, headers: { 'content-type': 'application/xml' } })).status).toBe(
      201,
    );
    const glucose = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'lab_result.v1', ehrId: `ehr-${Q}`, content: LAB } });
    expect(glucose.status).toBe(201);
    const flat = (await t.request('GET', `/openehr/v1/ehr/ehr-${Q}/composition/${glucose.body.uid}?format=FLAT`)).body;
    const content = Object.fromEntries(Object.entries(flat).filter(([key]) => !key.includes('/laboratory_analyte_result') && !key.endsWith('/_uid')));
    const unvalued = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'lab_result_any.v1', ehrId: `ehr-${Q}`, content } });
    expect(unvalued.status).toBe(201);
    noAnalytes.push(unvalued.body.id);
    // Clinical notes: P's on 10, 12 (tie with Q's) and 14 November, Q's on 12 and 20 November, R's on 16 November.
    for (const [patient, day, type] of [
      [P, 10, '11506-3'],
      [P, 12, '18842-5'],
      [Q, 12, '11506-3'],
      [P, 14, '11506-3'],
      [Q, 20, '57133-1'],
      [R, 16, '11488-4'],
    ] as const) {
      const note = NOTE(`Note of ${patient} on day ${day}`).note;
      const content = { note: { ...note, note_type: { code: type }, authored_at: `2026-11-${day}T10:00:00Z` } };
      expect((await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'clinical_note.v1', ehrId: `ehr-${patient}`, content } })).status).toBe(
        201,
      );
    }
    // S's notes: a typed one; one whose title is coded text, as the RM allows where the template has text (so two coded leaves share
    // the context element's node id); and, under a tenant's variant of clinical_note.v1 whose document type is optional, one without a type.
    const summary = { note: { ...NOTE(`Summary of ${S}`).note, note_type: { code: '34133-9' }, authored_at: '2026-11-18T10:00:00Z' } };
    const typed = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'clinical_note.v1', ehrId: `ehr-${S}`, content: summary } });
    expect(typed.status).toBe(201);
    notesOfS.push(typed.body.id);
    const canonical = (await t.request('GET', `/openehr/v1/ehr/ehr-${S}/composition/${typed.body.uid}`)).body;
    const contextItems = () => canonical.context.other_context.items as any[];
    contextItems().find((i) => i.name.value === 'Title').value = {
      _type: 'DV_CODED_TEXT',
      value: 'Progress note',
      defining_code: { _type: 'CODE_PHRASE', terminology_id: { _type: 'TERMINOLOGY_ID', value: 'LOINC' }, code_string: '11506-3' },
    };
    canonical.context.start_time.value = '2026-11-19T10:00:00Z';
    const codedTitle = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'clinical_note.v1', ehrId: `ehr-${S}`, content: canonical } });
    expect(codedTitle.status).toBe(201);
    notesOfS.push(codedTitle.body.id);
    const noteOpt = readFileSync(path.join(__dirname, '../subgraphs/ehr/clinical/opt/demo/clinical_note.v1.opt'), 'utf8').replace(
      '<value>clinical_note.v1</value>',
      '<value>clinical_note_untyped.v1</value>',
    );
    const documentType = noteOpt.lastIndexOf('<rm_type_name>ELEMENT</rm_type_name>', noteOpt.indexOf('<list>Document type</list>'));
    const untypedOpt = noteOpt.slice(0, documentType) + noteOpt.slice(documentType).replace(/(<occurrences>[\s\S]*?<lower>)1(<\/lower>)/, '$10$2');
    expect(
      (await t.request('POST', '/openehr/v1/definition/template/adl1.4', { rawBody: untypedOpt, headers: { 'content-type': 'application/xml' } })).status,
    ).toBe(201);
    canonical.archetype_details.template_id.value = 'clinical_note_untyped.v1';
    canonical.context.other_context.items = contextItems().filter((i) => i.name.value !== 'Document type');
    canonical.context.start_time.value = '2026-11-21T10:00:00Z';
    const untyped = await t.request('POST', '/api/ehr/compositions', {
      body: { templateId: 'clinical_note_untyped.v1', ehrId: `ehr-${S}`, content: canonical },
    });
    expect(untyped.status).toBe(201);
    notesOfS.push(untyped.body.id);
    const idsOf = async (query: string) => matches((await run(query)).bundle).map((e: any) => e.resource.id as string);
    ids.observation = await idsOf(`Observation?patient=${Q}&_count=6`);
    ids.encounter = await idsOf('Encounter?_sort=date');
    ids.medication = await idsOf('MedicationRequest');
    ids.completed = await idsOf(`MedicationRequest?status=completed`);
    ids.document = await idsOf('DocumentReference?_sort=date');
    for (const [name, query] of cases) sql.set(name, await run(query()));
    const newestXdsAudit = async () =>
      (await t.graphql(`{ auditRecords(entityType: "XdsTransaction", limit: 1) { data { action after } } }`)).body.data.auditRecords.data[0];
    const before = await newestXdsAudit();
    const search = await run(`DocumentReference?patient=${P}&date=le2026-11-12`);
    indexedAudit = { before, search, after: await newestXdsAudit() };
    // An MHD document of R's: the registry is not in the index, so R's DocumentReference searches (and the tenant's) merge both in memory.
    const provided = await t.request('POST', '/fhir/R4', {
      body: provideBundle({ patient: R, docUniqueId: uid(), document: Buffer.from('Discharge summary') }),
      headers: { 'content-type': 'application/fhir+json' },
    });
    expect(provided.status).toBe(200);
    for (const query of [
      `DocumentReference?patient=${R}`,
      `DocumentReference?patient=${P}`,
      `DocumentReference?patient=${P}&type=11506-3`,
      'DocumentReference?category=clinical-note',
    ])
      registry.set(query, await run(query));
    // From here on every search of these areas runs in memory.
    const definition = { type: 'object', children: { weight: { type: 'quantity', required: true, units: [{ unit: 'kg', min: 0, max: 500 }] } } };
    for (const area of ['OBSERVATION', 'ENCOUNTER', 'ORDER', 'DOCUMENT']) {
      const res = await t.graphql('mutation($i: UploadTemplateInput!) { uploadTemplate(input: $i) { id } }', {
        i: { id: `scan_${area.toLowerCase()}.v1`, name: 'Not indexed', area, definition },
      });
      expect(res.body.errors).toBeUndefined();
    }
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('found the resources the cases name', () => {
    expect(ids.observation).toHaveLength(6);
    expect(ids.encounter).toHaveLength(5);
    expect(ids.medication).toHaveLength(3);
    // One order ended before today.
    expect(ids.completed).toHaveLength(1);
    expect(ids.document).toHaveLength(9);
  });

  it.each(cases.map(([name]) => name))('%s', async (name) => {
    const query = cases.find(([n]) => n === name)![1]();
    const indexed = sql.get(name)!;
    const memory = await run(query);
    expect(indexed.bundle).toEqual(memory.bundle);
    // The index decrypts the page's compositions only; the in-memory path every candidate.
    expect(indexed.decrypted).toBeLessThanOrEqual(matches(indexed.bundle).length);
    expect(memory.decrypted).toBeGreaterThanOrEqual(Math.max(1, indexed.decrypted));
  });

  it("tells a note's type from a coded title, and finds the note without a type", () => {
    const found = (name: string) => matches(sql.get(name)!.bundle).map((e: any) => e.resource.id);
    const [typed, codedTitle, untyped] = notesOfS;
    expect(found('DocumentReference: type, not a coded title')).toEqual([]);
    expect(found('DocumentReference: any LOINC type').sort()).toEqual([typed, codedTitle].sort());
    expect(found('DocumentReference: type:missing=true')).toEqual([untyped]);
    expect(found('DocumentReference: type:not, _sort=_id')).toEqual(expect.arrayContaining([typed, codedTitle, untyped]));
  });

  it('has the panels as Observations of components, each analyte result a component', async () => {
    const panel = (await t.request('GET', `/fhir/R4/Observation/${panels[1]}`)).body;
    expect(panel.valueQuantity).toBeUndefined();
    expect(panel.component.map((c: any) => c.valueQuantity.value)).toEqual([9.9, 6.1, 80]);
    // No lab case found a panel by its analytes' values, and the single-analyte ones were found.
    const labCases = [...sql].filter(([name]) => name.includes('lab value-quantity')).map(([, m]) => matches(m.bundle).map((e: any) => e.resource.id));
    expect(labCases.flat().filter((id) => panels.includes(id))).toEqual([]);
    expect(labCases.flat().length).toBeGreaterThan(5);
  });

  it('finds exactly the lab results without a valueQuantity: the panels and the one without analytes', async () => {
    const lab = (await t.request('GET', `/fhir/R4/Observation/${noAnalytes[0]}`)).body;
    expect(lab.valueQuantity).toBeUndefined();
    expect(lab.component).toBeUndefined();
    const found = matches(sql.get('Observation: labs without valueQuantity (missing=true)')!.bundle).map((e: any) => e.resource.id);
    expect(found.sort()).toEqual([...panels, ...noAnalytes].sort());
  });

  it('audits a DocumentReference search answered from the index as an ITI-67 query that disclosed no registry document', () => {
    const { before, search, after } = indexedAudit!;
    expect(search.decrypted).toBe(2);
    expect(after).not.toEqual(before);
    expect(after).toEqual({ action: 'read', after: { transaction: 'ITI-67', query: 'DocumentReference', patientId: P, documents: [], submissionSets: [] } });
  });

  it("merges a patient's registry documents with the notes in memory, other patients' searches staying in SQL", () => {
    const docs = registry.get(`DocumentReference?patient=${R}`)!;
    expect(matches(docs.bundle).map((e: any) => e.resource.id.startsWith('xds-'))).toEqual([true, false]);
    expect(docs.decrypted).toBe(1);
    const notes = registry.get(`DocumentReference?patient=${P}`)!;
    expect(notes.bundle).toEqual(sql.get('DocumentReference: one patient')!.bundle);
    expect(notes.decrypted).toBe(3);
    // A note's type is in the index too: only the notes of the page are decrypted.
    const typed = registry.get(`DocumentReference?patient=${P}&type=11506-3`)!;
    expect(typed.bundle.total).toBe(2);
    expect(typed.decrypted).toBe(2);
    const tenant = registry.get('DocumentReference?category=clinical-note')!;
    expect(tenant.bundle.total).toBe(9);
    expect(tenant.decrypted).toBe(9);
  });
});
