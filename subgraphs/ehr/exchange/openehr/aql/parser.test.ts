import { parseAql } from './parser';

describe('AQL subset parser', () => {
  it('parses the full supported shape', () => {
    const q = parseAql(`SELECT e/ehr_id/value, o/systolic/magnitude AS sys FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c[vital_signs.v1]
      CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2] WHERE NOT (o/systolic/magnitude < 100) AND c/name/value != 'x' OR c/uid/value = $u
      ORDER BY c/context/start_time/value DESC, o/systolic/magnitude LIMIT 5 OFFSET 2`);
    expect(q.select.map((s) => [s.path.text, s.alias])).toEqual([
      ['e/ehr_id/value', undefined],
      ['o/systolic/magnitude', 'sys'],
    ]);
    expect(q.ehr).toEqual({ variable: 'e', ehrId: { kind: 'param', name: 'ehr' } });
    expect(q.contains.map((c) => [c.rmClass, c.variable, c.predicate])).toEqual([
      ['COMPOSITION', 'c', { kind: 'literal', value: 'vital_signs.v1' }],
      ['OBSERVATION', 'o', { kind: 'literal', value: 'openEHR-EHR-OBSERVATION.blood_pressure.v2' }],
    ]);
    expect(q.where?.kind).toBe('or');
    expect(q.orderBy.map((o) => [o.path.text, o.descending])).toEqual([
      ['c/context/start_time/value', true],
      ['o/systolic/magnitude', false],
    ]);
    expect([q.limit, q.offset]).toEqual([5, 2]);
  });

  it('reads archetype predicates inside content paths', () => {
    const q = parseAql('SELECT c/content[openEHR-EHR-OBSERVATION.pulse.v2]/rate/magnitude FROM COMPOSITION c');
    expect(q.select[0].path.segments).toEqual([{ name: 'content', predicate: 'openEHR-EHR-OBSERVATION.pulse.v2' }, { name: 'rate' }, { name: 'magnitude' }]);
  });

  it.each([
    ["SELECT c/uid/value FROM COMPOSITION c WHERE c/uid/value MATCHES {'a'}", 'MATCHES'],
    ['SELECT c/uid/value FROM COMPOSITION c CONTAINS OBSERVATION o[at0001]', 'predicate of OBSERVATION'],
    ['SELECT c/uid/value FROM COMPOSITION c CONTAINS OBSERVATION o', 'without an archetype id predicate'],
    ['SELECT c/uid/value FROM EHR e[ehr_status/is_queryable=true] CONTAINS COMPOSITION c', 'EHR predicate'],
    ['SELECT c/data[at0001]/value FROM COMPOSITION c', 'path predicate other than an archetype id'],
    ['SELECT c/uid/value FROM COMPOSITION c WHERE c/uid/value = NULL', 'NULL'],
  ])('refuses %s naming the construct', (q, construct) => {
    expect(() => parseAql(q)).toThrow(construct);
  });

  it('reports syntax errors with their position', () => {
    expect(() => parseAql("SELECT c/uid/value FROM COMPOSITION c WHERE c/uid/value = 'open")).toThrow(/unterminated string/);
    expect(() => parseAql('SELECT c/uid/value FROM COMPOSITION c LIMIT x')).toThrow(/position \d+: LIMIT takes a whole number/);
  });

  it.each([
    ['parentheses', `${'('.repeat(4900)}c/uid/value = 'x'${')'.repeat(4900)}`],
    ['NOT', `${'NOT '.repeat(2400)}c/uid/value = 'x'`],
  ])('refuses a WHERE condition nested deeper than 64 levels (%s) with VALIDATION_ERROR', (_what, where) => {
    expect(() => parseAql(`SELECT c/uid/value FROM COMPOSITION c WHERE ${where}`)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR', message: 'AQL: the WHERE condition nests deeper than 64 levels' }),
    );
  });

  it('accepts 64 nested parentheses, refuses 65', () => {
    const where = (n: number) => `SELECT c/uid/value FROM COMPOSITION c WHERE ${'('.repeat(n)}c/uid/value = 'x'${')'.repeat(n)}`;
    expect(parseAql(where(64)).where?.kind).toBe('compare');
    expect(() => parseAql(where(65))).toThrow('nests deeper than 64 levels');
  });
});
