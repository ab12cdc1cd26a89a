import { matchesDate, parseDateParam, parseSearch, parseToken, referenceId } from './search';

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
    expect(() => parseSearch('Observation', [{ name: 'value-quantity', value: '5' }])).toThrow(/not supported for Observation/);
    expect(() => parseSearch('Observation', [{ name: 'code:text', value: 'x' }])).toThrow(/Modifier ':text'/);
    expect(() => parseSearch('Patient', [{ name: '_count', value: '0' }])).toThrow(/_count/);
  });
});
