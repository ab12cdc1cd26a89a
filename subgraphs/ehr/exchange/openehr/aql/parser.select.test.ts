import { parseAql, type Path } from './parser';

const FROM = ' FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2]';

describe('AQL parser: SELECT', () => {
  it('reads RM paths with node-id, archetype and name predicates, and aliases', () => {
    const q = parseAql(`SELECT o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude AS systolic,
      c/content[openEHR-EHR-OBSERVATION.blood_pressure.v2]/name/value, o/data[at0001]/events[at0006, 'Any event']/time/value${FROM}`);
    const [systolic, content, event] = q.select;
    expect(systolic.alias).toBe('systolic');
    const path = systolic.expr as Path;
    expect(path.variable).toBe('o');
    expect(path.parts.map((p) => [p.name, p.predicate])).toEqual([
      ['data', { kind: 'node', id: 'at0001' }],
      ['events', { kind: 'node', id: 'at0006' }],
      ['data', { kind: 'node', id: 'at0003' }],
      ['items', { kind: 'node', id: 'at0004' }],
      ['value', undefined],
      ['magnitude', undefined],
    ]);
    expect((content.expr as Path).parts[0].predicate).toEqual({ kind: 'node', id: 'openEHR-EHR-OBSERVATION.blood_pressure.v2' });
    expect((event.expr as Path).parts[1].predicate).toEqual({ kind: 'node', id: 'at0006', name: { kind: 'literal', value: 'Any event' } });
    expect(content.text).toBe('c/content[openEHR-EHR-OBSERVATION.blood_pressure.v2]/name/value');
  });

  it('reads standard predicates inside paths', () => {
    const q = parseAql(`SELECT o/data[at0001]/events[name/value='Any event' and time/value > $t]/time${FROM}`);
    expect((q.select[0].expr as Path).parts[1].predicate).toEqual({
      kind: 'and',
      left: { kind: 'compare', path: [{ name: 'name' }, { name: 'value' }], op: '=', value: { kind: 'literal', value: 'Any event' } },
      right: { kind: 'compare', path: [{ name: 'time' }, { name: 'value' }], op: '>', value: { kind: 'param', name: 't' } },
    });
  });

  it('reads DISTINCT and TOP', () => {
    const q = parseAql(`select distinct top 5 backward c/name/value${FROM}`);
    expect(q.distinct).toBe(true);
    expect(q.top).toEqual({ count: 5, direction: 'BACKWARD' });
    expect(parseAql(`SELECT TOP 2 c${FROM}`).top).toEqual({ count: 2, direction: 'FORWARD' });
  });

  it('reads aggregates', () => {
    const q =
      parseAql(`SELECT COUNT(*), COUNT(DISTINCT e/ehr_id/value) AS patients, MIN(o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude),
      max(c/context/start_time/value), AVG(o/x/magnitude), SUM(o/x/magnitude)${FROM}`);
    expect(q.select.map((s) => (s.expr.kind === 'aggregate' ? [s.expr.fn, s.expr.distinct, s.expr.path?.text ?? '*'] : s.expr.kind))).toEqual([
      ['COUNT', false, '*'],
      ['COUNT', true, 'e/ehr_id/value'],
      ['MIN', false, 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude'],
      ['MAX', false, 'c/context/start_time/value'],
      ['AVG', false, 'o/x/magnitude'],
      ['SUM', false, 'o/x/magnitude'],
    ]);
    expect(q.select[1].alias).toBe('patients');
  });

  it('reads string and date/time functions and primitives as columns', () => {
    const q = parseAql(`SELECT LENGTH(c/name/value), SUBSTRING(c/name/value, 1, 3), CONCAT(c/name/value, ' - ', e/ehr_id/value), CONTAINS(c/name/value, 'sign'),
      POSITION('sign', c/name/value), CURRENT_DATE(), current_date_time(), 42, 'x', true${FROM}`);
    expect(
      q.select.map((s) => (s.expr.kind === 'call' ? `${s.expr.name}/${s.expr.args.length}` : s.expr.kind === 'literal' ? s.expr.value : s.expr.kind)),
    ).toEqual(['LENGTH/1', 'SUBSTRING/3', 'CONCAT/3', 'CONTAINS/2', 'POSITION/2', 'CURRENT_DATE/0', 'CURRENT_DATE_TIME/0', 42, 'x', true]);
  });

  it('refuses an unknown function or TERMINOLOGY, naming it', () => {
    expect(() => parseAql(`SELECT UPPERCASE(c/name/value)${FROM}`)).toThrow('function UPPERCASE() is not supported');
    expect(() => parseAql(`SELECT c${FROM} WHERE c/x MATCHES TERMINOLOGY('expand', 'hl7.org/fhir/4.0', 'url=x')`)).toThrow('TERMINOLOGY');
  });
});
