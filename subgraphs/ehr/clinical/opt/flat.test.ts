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
