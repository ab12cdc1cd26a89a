import { parseOpt } from '../clinical/opt/parse';
import { buildWebTemplate } from '../clinical/opt/web-template';
import { flatToCanonical } from '../clinical/opt/flat';
import { demoOpt } from '../clinical/templates';
import { simpleFormOf } from '../clinical/simple-forms';
import { DOCUMENT_TYPE_PATH, indexRows } from './clinical-index';

const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const PULSE = 'openEHR-EHR-OBSERVATION.pulse.v2';
const META = {
  compositionId: '6b1f3c2e-0000-4000-8000-000000000001',
  ehrId: 'ehr-p-1',
  patientId: 'p-1',
  templateId: 'vital_signs.v1',
  area: 'observation',
  committedAt: new Date('2026-11-23T12:00:00Z'),
};

function vitals(recordedAt: string) {
  const wt = buildWebTemplate(parseOpt(demoOpt('vital_signs.v1')));
  const form = simpleFormOf('vital_signs.v1', wt.tree.id)!;
  const body = {
    blood_pressure: {
      systolic: { magnitude: 141, unit: 'mm[Hg]' },
      diastolic: { magnitude: 88, unit: 'mm[Hg]' },
      position: { code: 'at1001', value: 'Sitting' },
    },
    pulse: { rate: { magnitude: 72, unit: '/min' }, regular: false },
    recorded_at: recordedAt,
  };
  return flatToCanonical(form.toFlat(body, 'Nurse Annemarie Jansen'), wt);
}

function lab(analytes: string[]) {
  const wt = buildWebTemplate(parseOpt(demoOpt('lab_result.v1')));
  const form = simpleFormOf('lab_result.v1', wt.tree.id)!;
  const results = analytes.map((analyte, i) => ({ analyte, value: { magnitude: 5 + i, unit: 'mmol/L' } }));
  const body = { lab_result: { test_name: { code: '58410-2' }, status: { code: 'final' }, specimen_collected_at: '2026-11-22T08:00:00Z', results } };
  return flatToCanonical(form.toFlat(body, 'Dr Lab'), wt);
}

/** A clinical note (title "Weekly review", type LOINC 11506-3) as canonical content. */
function note() {
  const wt = buildWebTemplate(parseOpt(demoOpt('clinical_note.v1')));
  const form = simpleFormOf('clinical_note.v1', wt.tree.id)!;
  const body = { note: { title: 'Weekly review', note_type: { code: '11506-3' }, authored_at: '2026-11-22T10:00:00Z', body: 'Feels well.' } };
  return flatToCanonical(form.toFlat(body, 'dr-jones'), wt);
}

describe('clinical index rows', () => {
  const rows = indexRows(META, vitals('2026-11-22T09:00:00Z'));

  it('keeps a row for the composition, one per entry and one per structured leaf, at RM paths with node ids', () => {
    expect(rows[0]).toMatchObject({ seq: 0, path: '/', rmType: 'COMPOSITION', effectiveAt: new Date('2026-11-22T09:00:00Z') });
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i));
    expect(rows.filter((r) => r.path === `/content[${BP}]`)).toEqual([
      expect.objectContaining({ rmType: 'OBSERVATION', entryArchetypeId: BP, entryOrdinal: 1, effectiveAt: new Date('2026-11-22T09:00:00Z') }),
    ]);
    expect(rows.find((r) => r.path === `/content[${BP}]/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value`)).toMatchObject({
      rmType: 'DV_QUANTITY',
      magnitude: 141,
      unit: 'mm[Hg]',
      archetypeId: BP,
      entryArchetypeId: BP,
      patientId: 'p-1',
      ehrId: 'ehr-p-1',
    });
    expect(rows.find((r) => r.path === `/content[${BP}]/data[at0001]/events[at0006]/state[at0007]/items[at0008]/value`)).toMatchObject({
      rmType: 'DV_CODED_TEXT',
      code: 'at1001',
      terminology: 'local',
    });
    expect(rows.find((r) => r.path === `/content[${PULSE}]/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value`)).toMatchObject({
      magnitude: 72,
      unit: '/min',
    });
    expect(rows.find((r) => r.path === `/content[${BP}]/data[at0001]/events[at0006]/time`)).toMatchObject({
      rmType: 'DV_DATE_TIME',
      dateTime: new Date('2026-11-22T09:00:00Z'),
    });
  });

  it('holds no free text, names or parties', () => {
    const text = JSON.stringify(rows);
    expect(text).not.toMatch(/Annemarie|Jansen|Sitting|Blood pressure/i);
    expect(rows.map((r) => r.rmType)).not.toContain('DV_TEXT');
    expect(rows.some((r) => /composer|subject|\/name/.test(r.path))).toBe(false);
  });

  it('keeps a row with no value for each archetyped cluster of an entry, numbered at its path', () => {
    const LAB = 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1';
    const ANALYTE = 'openEHR-EHR-CLUSTER.laboratory_test_analyte.v1';
    const analytes = indexRows({ ...META, templateId: 'lab_result.v1' }, lab(['Haemoglobin', 'Platelets', 'Leucocytes'])).filter((r) => r.rmType === 'CLUSTER');
    expect(analytes).toEqual(
      [1, 2, 3].map((ordinal) =>
        expect.objectContaining({
          ordinal,
          archetypeId: ANALYTE,
          entryArchetypeId: LAB,
          entryOrdinal: 1,
          path: `/content[${LAB}]/data[at0001]/events[at0002]/data[at0003]/items[${ANALYTE}]`,
        }),
      ),
    );
    expect(analytes.some((r) => r.magnitude !== undefined || r.code !== undefined)).toBe(false);
    expect(JSON.stringify(analytes)).not.toMatch(/Haemoglobin|Platelets|Leucocytes/);
    // The vital signs have no archetyped cluster.
    expect(rows.some((r) => r.rmType === 'CLUSTER')).toBe(false);
  });

  it("holds a note's document type also at its path with the name, never a title in coded text there", () => {
    const CONTEXT_ITEM = '/context/other_context[at0001]/items[at0007]/value';
    const meta = { ...META, templateId: 'clinical_note.v1', area: 'document' };
    const codes = (rows: ReturnType<typeof indexRows>, path: string) => rows.filter((r) => r.path === path).map((r) => r.code);
    const typed = indexRows(meta, note());
    expect(typed.filter((r) => r.path === DOCUMENT_TYPE_PATH)).toEqual([
      expect.objectContaining({ rmType: 'DV_CODED_TEXT', code: '11506-3', terminology: 'LOINC', effectiveAt: new Date('2026-11-22T10:00:00Z') }),
    ]);
    expect(typed.find((r) => r.path === DOCUMENT_TYPE_PATH)?.entryArchetypeId).toBeUndefined();
    // The title is coded text too: the node id's path holds both codes, the named path the type's alone.
    const content = note();
    const items = content.context.other_context.items as any[];
    items.find((i) => i.name.value === 'Title').value = {
      _type: 'DV_CODED_TEXT',
      value: 'Weekly review',
      defining_code: { _type: 'CODE_PHRASE', terminology_id: { _type: 'TERMINOLOGY_ID', value: 'LOINC' }, code_string: '34133-9' },
    };
    const titled = indexRows(meta, content);
    expect(codes(titled, CONTEXT_ITEM).sort()).toEqual(['11506-3', '34133-9']);
    expect(codes(titled, DOCUMENT_TYPE_PATH)).toEqual(['11506-3']);
    content.context.other_context.items = items.filter((i) => i.name.value !== 'Document type');
    const untyped = indexRows(meta, content);
    expect(codes(untyped, CONTEXT_ITEM)).toEqual(['34133-9']);
    expect(codes(untyped, DOCUMENT_TYPE_PATH)).toEqual([]);
    expect(JSON.stringify([typed, titled, untyped])).not.toMatch(/Weekly review|Progress note|Title/);
  });

  it('says where each row sits: per step of its path, the position in that attribute', () => {
    const content = vitals('2026-11-22T09:00:00Z');
    const bp = content.content.find((entry: { archetype_node_id: string }) => entry.archetype_node_id === BP);
    bp.data.events = [bp.data.events[0], structuredClone(bp.data.events[0])];
    const at = (path: string) => indexRows(META, content).filter((r) => r.path === `/content[${BP}]${path}`);
    const systolic = at('/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value');
    const entry = content.content.indexOf(bp);
    const item = bp.data.events[0].data.items.findIndex((i: { archetype_node_id: string }) => i.archetype_node_id === 'at0004');
    expect(systolic.map((r) => r.positions)).toEqual([
      [entry, 0, 0, 0, item, 0],
      [entry, 0, 1, 0, item, 0],
    ]);
    expect(at('')[0].positions).toEqual([entry]);
    expect(indexRows(META, content)[0].positions).toEqual([]);
  });

  it("carries the composition's start time on the rows of numeric values", () => {
    const content = vitals('2026-11-22T09:00:00Z');
    content.context.start_time.value = '2026-11-21T18:30:00+01:00';
    const rows = indexRows(META, content);
    const numeric = rows.filter((r) => typeof r.magnitude === 'number');
    expect(numeric.map((r) => r.path.replace(/^.*\/(items\[at\d+\])\/value$/, '$1'))).toEqual(['items[at0004]', 'items[at0005]', 'items[at0004]']);
    expect(new Set(numeric.map((r) => (r.startTime as Date).toISOString()))).toEqual(new Set(['2026-11-21T17:30:00.000Z']));
    // The same instant as the composition's own row at /context/start_time, which the migration copies from.
    expect(rows.find((r) => r.path === '/context/start_time')?.dateTime).toEqual(numeric[0].startTime);
    const entryCode = (r: (typeof rows)[number]) => typeof r.code === 'string' && r.entryArchetypeId;
    expect(rows.filter((r) => typeof r.magnitude !== 'number' && !entryCode(r)).every((r) => r.startTime === undefined || r.startTime === null)).toBe(true);
  });

  it("carries it on the rows of an entry's codes, not on the composition's own", () => {
    const content = lab(['Haemoglobin']);
    const start = new Date(content.context.start_time.value);
    const rows = indexRows({ ...META, templateId: 'lab_result.v1' }, content);
    const timed = (r: (typeof rows)[number]) => r.startTime instanceof Date && r.startTime.getTime() === start.getTime();
    const codes = rows.filter((r) => typeof r.code === 'string');
    expect(codes.filter((r) => r.entryArchetypeId).length).toBeGreaterThan(0);
    expect(codes.filter((r) => r.entryArchetypeId).every(timed)).toBe(true);
    // The category and setting: the composition's own codes, which the start time already selects by its own row.
    expect(codes.filter((r) => !r.entryArchetypeId).map((r) => r.path)).toEqual(expect.arrayContaining(['/category', '/context/setting']));
    expect(codes.filter((r) => !r.entryArchetypeId).some((r) => r.startTime)).toBe(false);
    expect(rows.filter((r) => r.startTime).every((r) => typeof r.magnitude === 'number' || (typeof r.code === 'string' && r.entryArchetypeId))).toBe(true);
  });

  it('takes the entry time from its first event, and indexes content that is not canonical as the composition only', () => {
    expect(indexRows(META, vitals('2025-01-02T03:04:05Z')).find((r) => r.entryArchetypeId === PULSE)?.effectiveAt).toEqual(new Date('2025-01-02T03:04:05Z'));
    expect(indexRows(META, { blood_pressure: { systolic: { magnitude: 120, unit: 'mm[Hg]' } } })).toEqual([
      expect.objectContaining({ seq: 0, rmType: 'COMPOSITION', effectiveAt: META.committedAt }),
    ]);
  });
});
