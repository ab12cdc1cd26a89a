import { parseOpt } from './parse';
import { buildWebTemplate } from './web-template';
import { canonicalToFlat, flatToCanonical, flatToStructured, structuredToFlat } from './flat';
import { THIRD_PARTY, fixture, fixtureJson } from './fixtures';

/** The published FLAT examples write date-times with a point, the canonical ones sometimes with a comma: both are ISO 8601. */
const normalise = (flat: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(flat).map(([k, v]) => [k, typeof v === 'string' ? v.replace(/(\d{2}:\d{2}:\d{2}),(\d)/, '$1.$2') : v]));

describe.each(THIRD_PARTY)('FLAT and canonical for $templateId', (t) => {
  const wt = buildWebTemplate(parseOpt(fixture(t.opt)));
  const flat = fixtureJson(t.flat);
  const canonical = fixtureJson(t.canonical);

  it('turns the published canonical composition into the published FLAT one', () => {
    const mine = normalise(canonicalToFlat(canonical, wt));
    if (t.samePair) expect(mine).toEqual(normalise(flat));
    else expect(normalise(flat)).toEqual(expect.objectContaining(mine));
    expect(Object.keys(mine).length).toBeGreaterThan(15);
  });

  it('turns the published FLAT composition into canonical RM and back without loss', () => {
    const rm = flatToCanonical(flat, wt);
    expect(rm._type).toBe('COMPOSITION');
    expect(rm.archetype_details.template_id.value).toBe(t.templateId);
    expect(Array.isArray(rm.content)).toBe(true);
    expect(normalise(canonicalToFlat(rm, wt))).toEqual(normalise(flat));
  });

  it('gives every HISTORY its origin, the earliest event time, when the FLAT form has none', () => {
    const rm = flatToCanonical(flat, wt);
    const histories: any[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(walk);
      if (typeof value !== 'object' || value === null) return;
      if ((value as any)._type === 'HISTORY') histories.push(value);
      Object.values(value).forEach(walk);
    };
    walk(rm);
    expect(histories.length).toBeGreaterThan(0);
    for (const history of histories) {
      const times = history.events.map((e: any) => e.time.value).sort();
      expect(history.origin).toEqual({ _type: 'DV_DATE_TIME', value: times[0] });
    }
  });

  it('round-trips STRUCTURED through FLAT', () => {
    const structured = flatToStructured(flat);
    expect(structuredToFlat(structured, wt)).toEqual(flat);
  });
});

describe('FLAT errors', () => {
  const wt = buildWebTemplate(parseOpt(fixture(THIRD_PARTY[0].opt)));
  it('names every path that is not in the template', () => {
    expect(() => flatToCanonical({ 'encounter/nope:0/x': 1, 'other/x': 2 }, wt)).toThrow(
      expect.objectContaining({
        code: 'VALIDATION_ERROR',
        details: [
          { path: 'other/x', message: expect.stringContaining("start with 'encounter/'") },
          { path: 'encounter/nope', message: expect.stringContaining("'nope' is not a node") },
        ],
      }),
    );
  });
});

describe('FLAT context participations (_participation)', () => {
  const t = THIRD_PARTY[0];
  const wt = buildWebTemplate(parseOpt(fixture(t.opt)));
  const base: Record<string, unknown> = fixtureJson(t.flat);
  const ctx = `${wt.tree.id}/context`;
  const participations = {
    [`${ctx}/_participation:0|function`]: 'performer',
    [`${ctx}/_participation:0|name`]: 'Dr. Jones',
    [`${ctx}/_participation:1|function`]: 'requester',
    [`${ctx}/_participation:1|name`]: 'Dr. Marcus Johnson',
    [`${ctx}/_participation:1|id`]: '199',
    [`${ctx}/_participation:1|id_scheme`]: 'HOSPITAL-NS',
    [`${ctx}/_participation:1|id_namespace`]: 'HOSPITAL-NS',
  };

  it('reads them into EVENT_CONTEXT.participations and writes them back', () => {
    const rm = flatToCanonical({ ...base, ...participations }, wt);
    expect(rm.context.participations).toEqual([
      { _type: 'PARTICIPATION', function: { _type: 'DV_TEXT', value: 'performer' }, performer: { _type: 'PARTY_IDENTIFIED', name: 'Dr. Jones' } },
      {
        _type: 'PARTICIPATION',
        function: { _type: 'DV_TEXT', value: 'requester' },
        performer: {
          _type: 'PARTY_IDENTIFIED',
          name: 'Dr. Marcus Johnson',
          external_ref: { _type: 'PARTY_REF', id: { _type: 'GENERIC_ID', value: '199', scheme: 'HOSPITAL-NS' }, namespace: 'HOSPITAL-NS', type: 'PERSON' },
        },
      },
    ]);
    expect(normalise(canonicalToFlat(rm, wt))).toEqual(normalise({ ...base, ...participations }));
  });

  it('rejects a participation without a function or performer, or with suffixes it does not read', () => {
    const bad = {
      ...base,
      [`${ctx}/_participation:0|name`]: 'Dr. Jones',
      [`${ctx}/_participation:1|function`]: 'performer',
      [`${ctx}/_participation:1|mode`]: '216',
    };
    expect(() => flatToCanonical(bad, wt)).toThrow(
      expect.objectContaining({
        code: 'VALIDATION_ERROR',
        details: [
          { path: `${ctx}/_participation`, message: expect.stringContaining('needs |function') },
          { path: `${ctx}/_participation`, message: expect.stringContaining('not |mode') },
        ],
      }),
    );
  });
});

describe('FLAT of Test_all_types, EHRbase SDK (published example)', () => {
  const wt = buildWebTemplate(parseOpt(fixture('ehrbase-sdk/operationaltemplate/Test_all_types.opt')));
  const published = fixtureJson<Record<string, unknown>>('ehrbase-sdk/composition/flat/simSDT/test_all_types.json');
  const pick = (flat: Record<string, unknown>, part: string) => Object.fromEntries(Object.entries(flat).filter(([k]) => k.includes(part)));

  it('[EHR-007] reads and writes an ACTIVITY’s action_archetype_id, a plain string', () => {
    const entries = pick(published, '/current_activity/action_archetype_id');
    expect(Object.values(entries)).toEqual(['openEHR-EHR-ACTION.test_all_types.v1']);
    const rm = flatToCanonical({ 'test_all_types/language|code': 'en', 'test_all_types/language|terminology': 'ISO_639-1', ...entries }, wt);
    expect(rm.content[0].items[0].items[0].items[0].activities[0].action_archetype_id).toBe('openEHR-EHR-ACTION.test_all_types.v1');
    expect(pick(canonicalToFlat(rm, wt), '/current_activity/action_archetype_id')).toEqual(entries);
  });

  it('[EHR-007] reads the only event of an observation folded into it, as the published example writes it (…/test_all_types:0/text, time2)', () => {
    const entries = pick(published, 'test_all_types/test_all_types:0/');
    expect(Object.keys(entries)).toEqual(expect.arrayContaining(['test_all_types/test_all_types:0/text', 'test_all_types/test_all_types:0/time2']));
    const rm = flatToCanonical(
      { 'test_all_types/language|code': 'en', 'test_all_types/language|terminology': 'ISO_639-1', ...pick(entries, '/text'), ...pick(entries, '/time2') },
      wt,
    );
    const event = rm.content[0].data.events[0];
    expect(event.data.items[0].value.value).toBe(published['test_all_types/test_all_types:0/text']);
    expect(event.time.value).toBe(published['test_all_types/test_all_types:0/time2']);
  });

  it('[EHR-007] reads and writes a DV_INTERVAL by its upper and lower (…/interval_quantity/upper|magnitude)', () => {
    const entries = pick(published, '/interval_');
    expect(Object.keys(entries)).toHaveLength(8);
    const rm = flatToCanonical({ 'test_all_types/language|code': 'en', 'test_all_types/language|terminology': 'ISO_639-1', ...entries }, wt);
    expect(rm.content[0].data.items.find((i: { archetype_node_id: string }) => i.archetype_node_id === 'at0003').value).toEqual({
      _type: 'DV_INTERVAL',
      lower: { _type: 'DV_COUNT', magnitude: 123 },
      upper: { _type: 'DV_COUNT', magnitude: 234 },
      lower_included: true,
      lower_unbounded: false,
      upper_included: true,
      upper_unbounded: false,
    });
    expect(pick(canonicalToFlat(rm, wt), '/interval_')).toEqual(entries);
  });
});
