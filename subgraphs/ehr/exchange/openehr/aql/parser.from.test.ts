import { parseAql, type ClassExpr, type Containment } from './parser';

const shape = (c: Containment): unknown => {
  if (c.kind !== 'class') return { [c.kind]: [shape(c.left), shape(c.right)] };
  const head = `${c.rmClass}${c.variable ? ` ${c.variable}` : ''}`;
  return c.contains ? { [head]: { [c.contains.not ? 'NOT CONTAINS' : 'CONTAINS']: shape(c.contains.expr) } } : head;
};

describe('AQL parser: FROM', () => {
  it('reads EHR with its ehr_id predicate, COMPOSITION and entries in a CONTAINS chain', () => {
    const q = parseAql(`SELECT c FROM EHR e[ehr_id/value=$ehr_id] CONTAINS COMPOSITION c[openEHR-EHR-COMPOSITION.encounter.v1]
      CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2]`);
    expect(shape(q.from)).toEqual({ 'EHR e': { CONTAINS: { 'COMPOSITION c': { CONTAINS: 'OBSERVATION o' } } } });
    const ehr = q.from as ClassExpr;
    expect(ehr.predicate).toEqual({ kind: 'compare', path: [{ name: 'ehr_id' }, { name: 'value' }], op: '=', value: { kind: 'param', name: 'ehr_id' } });
  });

  it('reads AND, OR, NOT CONTAINS and parentheses', () => {
    const q = parseAql(`SELECT c FROM EHR e CONTAINS COMPOSITION c CONTAINS (OBSERVATION a[openEHR-EHR-OBSERVATION.blood_pressure.v2]
      AND (OBSERVATION b[openEHR-EHR-OBSERVATION.pulse.v2] OR CLUSTER x[openEHR-EHR-CLUSTER.laboratory_test_analyte.v1]))`);
    expect(shape(q.from)).toEqual({
      'EHR e': { CONTAINS: { 'COMPOSITION c': { CONTAINS: { and: ['OBSERVATION a', { or: ['OBSERVATION b', 'CLUSTER x'] }] } } } },
    });
    expect(shape(parseAql('SELECT c FROM COMPOSITION c NOT CONTAINS OBSERVATION o').from)).toEqual({ 'COMPOSITION c': { 'NOT CONTAINS': 'OBSERVATION o' } });
  });

  it('binds CONTAINS tighter than AND', () => {
    expect(shape(parseAql('SELECT a FROM COMPOSITION a CONTAINS OBSERVATION o AND COMPOSITION b').from)).toEqual({
      and: [{ 'COMPOSITION a': { CONTAINS: 'OBSERVATION o' } }, 'COMPOSITION b'],
    });
  });

  it('reads VERSION[LATEST_VERSION], EHR_STATUS, a template id and a parameter as predicates', () => {
    const q = parseAql('SELECT v/commit_audit/time_committed/value FROM EHR e CONTAINS VERSION v[LATEST_VERSION] CONTAINS COMPOSITION c[vital_signs.v1]');
    const version = (q.from as ClassExpr).contains!.expr as ClassExpr;
    expect(version.version).toEqual({ kind: 'latest' });
    expect((version.contains!.expr as ClassExpr).predicate).toEqual({ kind: 'node', id: 'vital_signs.v1' });
    const all = parseAql('SELECT c FROM EHR e CONTAINS VERSION v[ALL_VERSIONS] CONTAINS COMPOSITION c');
    expect(((all.from as ClassExpr).contains!.expr as ClassExpr).version).toEqual({ kind: 'all' });
    const chosen = parseAql("SELECT c FROM VERSION v[commit_audit/time_committed/value > '2020-01-01'] CONTAINS COMPOSITION c");
    expect((chosen.from as ClassExpr).version).toMatchObject({ kind: 'compare', op: '>', value: { kind: 'literal', value: '2020-01-01' } });
    expect(shape(parseAql('SELECT s/subject FROM EHR e CONTAINS EHR_STATUS s').from)).toEqual({ 'EHR e': { CONTAINS: 'EHR_STATUS s' } });
    expect((parseAql('SELECT o FROM OBSERVATION o[$archetype]').from as ClassExpr).predicate).toEqual({
      kind: 'node',
      id: { kind: 'param', name: 'archetype' },
    });
  });

  it.each([
    ['SELECT p FROM EHR e CONTAINS PERSON p', 'FROM PERSON is not supported (line 1, column 30)'],
    ['SELECT c FROM COMPOSITION c CONTAINS OBSERVATION c', "variable 'c' is declared twice"],
    ['SELECT x/name FROM COMPOSITION c', "'x' in x/name is not a variable declared in FROM"],
  ])('refuses %s', (q, message) => {
    expect(() => parseAql(q)).toThrow(message);
  });
});
