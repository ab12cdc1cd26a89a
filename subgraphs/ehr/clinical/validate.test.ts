import { ARCHETYPES } from './archetypes';
import { simpleFormOf } from './simple-forms';
import { validateContent, validateDefinition } from './validate';

/** The demo templates that are OPTs are validated in their simple form; the others are CareGraph JSON templates. */
const vitals = simpleFormOf('vital_signs.v1', 'vital_signs')!.definition;
const valid = {
  blood_pressure: { systolic: { magnitude: 120, unit: 'mm[Hg]' }, diastolic: { magnitude: 80, unit: 'mm[Hg]' } },
  pulse: { rate: { magnitude: 72, unit: '/min' } },
  recorded_at: '2026-11-22T09:00:00Z',
};

describe('composition validation', () => {
  it('accepts the docs/api.md §10 example and omits optional elements', () => {
    expect(validateContent(vitals, valid, 'vital_signs.v1')).toEqual([]);
    const { pulse, ...withoutPulse } = valid;
    expect(pulse).toBeDefined();
    expect(validateContent(vitals, withoutPulse, 'vital_signs.v1')).toEqual([]);
  });

  it.each([
    ['missing required quantity', { ...valid, blood_pressure: { diastolic: valid.blood_pressure.diastolic } }, 'blood_pressure.systolic', /required/],
    ['wrong unit', { ...valid, pulse: { rate: { magnitude: 72, unit: 'bpm' } } }, 'pulse.rate.unit', /not allowed/],
    [
      'magnitude above range',
      { ...valid, blood_pressure: { ...valid.blood_pressure, systolic: { magnitude: 1200, unit: 'mm[Hg]' } } },
      'blood_pressure.systolic.magnitude',
      /maximum 1000/,
    ],
    [
      'magnitude not a number',
      { ...valid, blood_pressure: { ...valid.blood_pressure, systolic: { magnitude: '120', unit: 'mm[Hg]' } } },
      'blood_pressure.systolic.magnitude',
      /number/,
    ],
    [
      'code outside the value set',
      { ...valid, blood_pressure: { ...valid.blood_pressure, position: { code: 'at9999' } } },
      'blood_pressure.position.code',
      /value set/,
    ],
    ['bad date-time', { ...valid, recorded_at: '2026-02-30T09:00:00Z' }, 'recorded_at', /ISO 8601/],
    ['boolean expected', { ...valid, pulse: { regular: 'yes' } }, 'pulse.regular', /true or false/],
    ['unknown element', { ...valid, weight: 80 }, 'weight', /not defined/],
  ])('reports %s at its path', (_name, content, path, message) => {
    const details = validateContent(vitals, content, 'vital_signs.v1');
    expect(details).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it('checks list cardinality, counts, text length and dates', () => {
    const lab = simpleFormOf('lab_result.v1', 'laboratory_result')!.definition;
    const details = validateContent(
      lab,
      { lab_result: { test_name: { code: '2345-7' }, status: { code: 'final' }, specimen_collected_at: '2026-11-22T08:00:00Z', results: [] } },
      'lab_result.v1',
    );
    expect(details).toEqual([{ path: 'lab_result.results', message: 'needs at least 1 item(s), got 0' }]);
    const order = simpleFormOf('medication_order.v1', 'prescription')!.definition;
    const bad = validateContent(
      order,
      { medication_order: { medication: '', route: { code: '20053000' }, dose: { magnitude: 500, unit: 'mg' }, doses_per_day: 30, start_date: '2026-13-01' } },
      'medication_order.v1',
    );
    expect(bad.map((d) => d.path).sort()).toEqual(['medication_order.doses_per_day', 'medication_order.medication', 'medication_order.start_date']);
  });

  it('validates uploaded definitions and every library archetype', () => {
    for (const archetype of ARCHETYPES)
      expect(validateDefinition({ type: 'object', children: { x: { type: 'archetype', archetypeId: archetype.id } } }).details).toEqual([]);
    expect(validateDefinition({ type: 'object', children: { x: { type: 'quantity', units: [] } } }).details[0].path).toBe('definition.children.x.units');
    expect(validateDefinition({ type: 'object', children: { x: { type: 'archetype', archetypeId: 'nope' } } }).details).toEqual([
      { path: 'definition.children.x.archetypeId', message: 'unknown archetype nope' },
    ]);
  });

  it('refuses a 5,000-level definition with a depth detail instead of overflowing the stack', () => {
    let definition: unknown = { type: 'text' };
    for (let i = 0; i < 5000; i++) definition = { type: 'object', children: { a: definition } };
    expect(validateDefinition(definition)).toEqual({ details: [{ path: 'definition', message: 'nests deeper than 12 levels' }] });
    let list: unknown = { type: 'text' };
    for (let i = 0; i < 5000; i++) list = { type: 'list', cardinality: { min: 0 }, items: list };
    expect(validateDefinition({ type: 'object', children: { a: list } }).details).toEqual([{ path: 'definition', message: 'nests deeper than 12 levels' }]);
  });

  it('measures depth in constraint levels: 12 pass, 13 do not', () => {
    const levels = (n: number) => {
      let node: unknown = { type: 'text' };
      for (let i = 1; i < n; i++) node = { type: 'object', children: { a: node } };
      return node;
    };
    expect(validateDefinition(levels(12)).details).toEqual([]);
    expect(validateDefinition(levels(13)).details).toEqual([{ path: 'definition', message: 'nests deeper than 12 levels' }]);
  });

  it('walks deeply nested content only as deep as the template: 5,000 levels give a detail, not a stack overflow', () => {
    let pulse: unknown = 72;
    for (let i = 0; i < 5000; i++) pulse = { rate: pulse };
    const details = validateContent(vitals, { ...valid, pulse }, 'vital_signs.v1');
    expect(details).toContainEqual({ path: 'pulse.rate.rate', message: 'is not part of a quantity (magnitude, unit)' });
  });
});
