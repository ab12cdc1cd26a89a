import { parseOpt } from '../opt/parse';
import { buildWebTemplate } from '../opt/web-template';
import { exampleFlat } from '../opt/example';
import { canonicalToFlat, flatToCanonical } from '../opt/flat';
import { validateComposition } from '../opt/validate';
import { compositionFromXml, compositionToXml } from '../opt/rm-xml';
import { SEED_TEMPLATES, demoOpt } from '../templates';
import { simpleFormOf, simpleView } from '.';
import { DOCUMENTED_ENCOUNTER } from '../../../../test/ehr-fixtures';

const VITALS = {
  blood_pressure: {
    systolic: { magnitude: 120, unit: 'mm[Hg]' },
    diastolic: { magnitude: 80, unit: 'mm[Hg]' },
    position: { code: 'at1001', value: 'Sitting' },
  },
  pulse: { rate: { magnitude: 72, unit: '/min' }, regular: false },
  recorded_at: '2026-11-22T09:00:00Z',
};
const LAB = {
  lab_result: {
    test_name: { code: '2345-7', value: 'Glucose' },
    status: { code: 'final' },
    specimen_collected_at: '2026-11-22T08:00:00Z',
    results: [
      { analyte: 'Glucose', value: { magnitude: 5.4, unit: 'mmol/L' }, interpretation: { code: 'N' }, reference_range: '3.9-5.5 mmol/L' },
      { analyte: 'Creatinine', value: { magnitude: 140, unit: 'umol/L' }, interpretation: { code: 'H' } },
    ],
    conclusion: 'Raised creatinine.',
  },
};

const ORDER = {
  medication_order: {
    medication: 'Metformin 500 mg tablet',
    route: { code: '20053000', value: 'Oral' },
    dose: { magnitude: 500, unit: 'mg' },
    doses_per_day: 2,
    as_needed: true,
    start_date: '2026-11-22',
    end_date: '2027-02-22',
    instructions: 'Take with food.',
  },
};
const NOTE = {
  note: {
    title: 'Progress note',
    note_type: { code: '11506-3', value: 'Progress note' },
    authored_at: '2026-11-22T10:00:00Z',
    body: 'Feels well.\nBP < 130 & stable.',
  },
};
const BODIES: Record<string, object> = {
  'vital_signs.v1': VITALS,
  'encounter.v1': DOCUMENTED_ENCOUNTER,
  'lab_result.v1': LAB,
  'medication_order.v1': ORDER,
  'clinical_note.v1': NOTE,
};

describe.each(SEED_TEMPLATES.map((t) => t.id))('demo OPT %s', (templateId) => {
  const opt = parseOpt(demoOpt(templateId));
  const wt = buildWebTemplate(opt);

  it('is an OPT 1.4 whose template_id is the contract id, with a valid example composition', () => {
    expect(opt.templateId).toBe(templateId);
    expect(opt.definition.rmType).toBe('COMPOSITION');
    const example = flatToCanonical(exampleFlat(wt, new Date('2026-11-22T09:00:00Z')), wt);
    expect(validateComposition(example, wt)).toEqual([]);
  });

  it('has a simple form that maps onto a valid composition and back', () => {
    const form = simpleFormOf(templateId, wt.tree.id)!;
    expect(form).toBeDefined();
    const body = BODIES[templateId];
    const canonical = flatToCanonical(form.toFlat(body, 'dr-jones'), wt);
    expect(validateComposition(canonical, wt)).toEqual([]);
    expect(canonical.composer).toMatchObject({ _type: 'PARTY_IDENTIFIED', name: 'dr-jones' });
    expect(simpleView(form, canonicalToFlat(canonical, wt))).toEqual(body);
  });
});

describe('the vital-signs simple form', () => {
  const wt = buildWebTemplate(parseOpt(demoOpt('vital_signs.v1')));
  const form = simpleFormOf('vital_signs.v1', wt.tree.id)!;

  it('puts the values at the archetype paths of the CKM archetypes', () => {
    const canonical = flatToCanonical(form.toFlat(VITALS, 'nurse-ann'), wt);
    const bp = canonical.content.find((e: any) => e.archetype_node_id === 'openEHR-EHR-OBSERVATION.blood_pressure.v2');
    const event = bp.data.events.find((e: any) => e.archetype_node_id === 'at0006');
    expect(event.time.value).toBe('2026-11-22T09:00:00Z');
    const systolic = event.data.items.find((i: any) => i.archetype_node_id === 'at0004');
    expect(systolic.value).toEqual({ _type: 'DV_QUANTITY', magnitude: 120, units: 'mm[Hg]' });
    const position = event.state.items.find((i: any) => i.archetype_node_id === 'at0008');
    expect(position.value.defining_code).toMatchObject({ code_string: 'at1001', terminology_id: { value: 'local' } });
  });

  it('does not claim a composition that holds more than the form can show', () => {
    const flat = { ...form.toFlat(VITALS, 'nurse-ann'), 'vital_signs/body_temperature/any_event:0/temperature|magnitude': 37.2 };
    expect(simpleView(form, flat)).toBeUndefined();
  });

  it('belongs to the demo OPT only, not to another template uploaded under the same id', () => {
    expect(simpleFormOf('vital_signs.v1', 'encounter')).toBeUndefined();
    expect(simpleFormOf('weight.v1', 'vital_signs')).toBeUndefined();
  });
});

describe('the medication-order simple form', () => {
  const wt = buildWebTemplate(parseOpt(demoOpt('medication_order.v1')));
  const form = simpleFormOf('medication_order.v1', wt.tree.id)!;

  it('puts the order at the paths of the CKM medication order, therapeutic direction, dosage and daily timing archetypes', () => {
    const canonical = flatToCanonical(form.toFlat(ORDER, 'dr-jones'), wt);
    const instruction = canonical.content[0];
    expect(instruction.archetype_node_id).toBe('openEHR-EHR-INSTRUCTION.medication_order.v3');
    expect(instruction.narrative.value).toBe('Metformin 500 mg tablet: 500 mg, 2 times a day, as required');
    expect(instruction.activities[0].action_archetype_id).toBe('/.*/');
    const items = instruction.activities[0].description.items;
    const item = (id: string, list = items) => list.find((i: any) => i.archetype_node_id === id);
    expect(item('at0070').value.value).toBe('Metformin 500 mg tablet');
    expect(item('at0091').value.defining_code).toMatchObject({ code_string: '20053000', terminology_id: { value: 'EDQM' } });
    const dosage = item('openEHR-EHR-CLUSTER.dosage.v2', item('openEHR-EHR-CLUSTER.therapeutic_direction.v1').items);
    expect(item('at0144', dosage.items).value).toMatchObject({ magnitude: 500, units: 'mg' });
    const timing = item('openEHR-EHR-CLUSTER.timing_daily.v1', dosage.items);
    expect(item('at0003', timing.items).value).toMatchObject({ magnitude: 2, units: '1/d' });
    expect(item('at0024', timing.items).value).toEqual({ _type: 'DV_BOOLEAN', value: true });
    expect(item('at0012', item('at0113').items).value.value).toBe('2026-11-22T00:00:00Z');
  });

  it('shows an order whose dates carry a time of day canonical, not as dates', () => {
    const flat = form.toFlat(ORDER, 'dr-jones');
    flat['prescription/medication_order/order/order_details/order_start_date_time'] = '2026-11-22T08:00:00Z';
    expect(simpleView(form, flat)).toBeUndefined();
  });
});

describe('the clinical-note simple form', () => {
  const wt = buildWebTemplate(parseOpt(demoOpt('clinical_note.v1')));
  const form = simpleFormOf('clinical_note.v1', wt.tree.id)!;
  const contextItem = (composition: any, name: string) =>
    composition.context.other_context.items.find((i: any) => i.archetype_node_id === 'at0007' && i.name.value === name);

  it('puts the note in a CKM report composition: title and document type in its context, the text in a clinical synopsis', () => {
    const canonical = flatToCanonical(form.toFlat(NOTE, 'dr-jones'), wt);
    expect(canonical.archetype_details.archetype_id.value).toBe('openEHR-EHR-COMPOSITION.report.v1');
    expect(canonical.name.value).toBe('Clinical note');
    expect(canonical.context.start_time.value).toBe('2026-11-22T10:00:00Z');
    expect(canonical.context.other_context.archetype_node_id).toBe('at0001');
    expect(contextItem(canonical, 'Title').value).toEqual({ _type: 'DV_TEXT', value: 'Progress note' });
    expect(contextItem(canonical, 'Document type').value).toMatchObject({
      value: 'Progress note',
      defining_code: { code_string: '11506-3', terminology_id: { value: 'LOINC' } },
    });
    const synopsis = canonical.content[0];
    expect(synopsis.archetype_node_id).toBe('openEHR-EHR-EVALUATION.clinical_synopsis.v1');
    expect(synopsis.data.items[0]).toMatchObject({ archetype_node_id: 'at0002', value: { value: NOTE.note.body } });
  });

  it('makes a named author the composer, and the writing user the composer (by id) when none is named', () => {
    const byUser = flatToCanonical(form.toFlat(NOTE, 'dr-jones'), wt);
    expect(byUser.composer.external_ref).toMatchObject({ id: { value: 'dr-jones', scheme: 'caregraph-user' }, namespace: 'caregraph' });
    expect(simpleView(form, canonicalToFlat(byUser, wt))).toEqual(NOTE);
    const authored = { note: { ...NOTE.note, author: 'Dr. A. Jones' } };
    const byAuthor = flatToCanonical(form.toFlat(authored, 'dr-jones'), wt);
    expect(byAuthor.composer).toEqual({ _type: 'PARTY_IDENTIFIED', name: 'Dr. A. Jones' });
    expect(simpleView(form, canonicalToFlat(byAuthor, wt))).toEqual(authored);
  });

  it('refuses a canonical note without its title or document type', () => {
    const canonical = flatToCanonical(form.toFlat(NOTE, 'dr-jones'), wt);
    canonical.context.other_context.items = canonical.context.other_context.items.filter((i: any) => i.name.value !== 'Title');
    expect(validateComposition(canonical, wt).map((e) => e.path)).toEqual([expect.stringContaining('/context/other_context')]);
  });

  it('shows a note composed by a user identified otherwise canonical', () => {
    const flat = { ...form.toFlat(NOTE, 'dr-jones'), 'clinical_note/composer|id_scheme': 'hospital' };
    expect(simpleView(form, flat)).toBeUndefined();
  });
});

describe('the encounter simple form', () => {
  const wt = buildWebTemplate(parseOpt(demoOpt('encounter.v1')));
  const form = simpleFormOf('encounter.v1', wt.tree.id)!;

  it('puts the encounter in the COMPOSITION context and the CKM reason-for-encounter and encounter-details archetypes', () => {
    const canonical = flatToCanonical(form.toFlat(DOCUMENTED_ENCOUNTER, 'dr-jones'), wt);
    expect(canonical.archetype_node_id).toBe('openEHR-EHR-COMPOSITION.encounter.v1');
    const context = canonical.context;
    expect(context.start_time.value).toBe('2026-11-22T09:30:00Z');
    expect(context.end_time.value).toBe('2026-11-22T10:00:00Z');
    expect(context.health_care_facility).toEqual({ _type: 'PARTY_IDENTIFIED', name: 'Clinic Amstel, room 2' });
    expect(context.participations).toEqual([
      { _type: 'PARTICIPATION', function: { _type: 'DV_TEXT', value: 'performer' }, performer: { _type: 'PARTY_IDENTIFIED', name: 'Dr. Jones' } },
    ]);
    const details = context.other_context.items.find((i: any) => i.archetype_node_id === 'openEHR-EHR-CLUSTER.encounter_details.v0');
    expect(details.items.find((i: any) => i.archetype_node_id === 'at0046').value).toEqual({ _type: 'DV_IDENTIFIER', id: 'apt-42', type: 'appointment' });
    const reason = canonical.content[0];
    expect(reason.archetype_node_id).toBe('openEHR-EHR-EVALUATION.reason_for_encounter.v1');
    const item = (id: string) => reason.data.items.find((i: any) => i.archetype_node_id === id).value;
    expect(item('at0002')).toEqual({
      _type: 'DV_CODED_TEXT',
      value: 'Ambulatory',
      defining_code: { _type: 'CODE_PHRASE', terminology_id: { _type: 'TERMINOLOGY_ID', value: 'HL7-ActCode' }, code_string: 'AMB' },
    });
    expect(item('at0004').value).toBe('Follow-up of raised blood pressure');
  });

  it('reads its canonical XML (context participation, DV_IDENTIFIER) back into the same composition', () => {
    const canonical = flatToCanonical(form.toFlat(DOCUMENTED_ENCOUNTER, 'dr-jones'), wt);
    expect(compositionFromXml(compositionToXml(canonical))).toEqual(canonical);
  });

  it('keeps the bodies of the API: only the required fields, and the type without its value', () => {
    const minimal = { encounter: { encounter_type: { code: 'EMER' }, start: '2026-11-22T09:30:00Z' } };
    const canonical = flatToCanonical(form.toFlat(minimal, 'dr-jones'), wt);
    expect(validateComposition(canonical, wt)).toEqual([]);
    expect(canonical.context.participations).toBeUndefined();
    expect(simpleView(form, canonicalToFlat(canonical, wt))).toEqual(minimal);
  });

  it('shows an encounter with another participation, or an identifier of another type, canonical', () => {
    const flat = form.toFlat(DOCUMENTED_ENCOUNTER, 'dr-jones');
    expect(simpleView(form, { ...flat, 'encounter/context/_participation:0|function': 'requester' })).toBeUndefined();
    expect(
      simpleView(form, { ...flat, 'encounter/context/_participation:1|function': 'performer', 'encounter/context/_participation:1|name': 'Dr. Smith' }),
    ).toBeUndefined();
    expect(simpleView(form, { ...flat, 'encounter/context/encounter_details/encounter_id|type': 'visit' })).toBeUndefined();
  });
});
