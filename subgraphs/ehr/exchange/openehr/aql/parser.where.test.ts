import { parseAql } from './parser';

const where = (condition: string) => parseAql(`SELECT c FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o WHERE ${condition}`).where;
const path = (text: string) => expect.objectContaining({ kind: 'path', text });

describe('AQL parser: WHERE, ORDER BY, LIMIT', () => {
  it('reads comparisons with every operator, literals and parameters', () => {
    for (const op of ['=', '!=', '<', '>', '<=', '>=']) expect(where(`o/x/magnitude ${op} 1.5`)).toMatchObject({ kind: 'compare', op });
    expect(where('o/x/magnitude <> -2e1')).toEqual({ kind: 'compare', op: '!=', left: path('o/x/magnitude'), right: { kind: 'literal', value: -20 } });
    expect(where("c/context/start_time/value >= '2026-01-01T00:00:00Z'")).toMatchObject({ right: { kind: 'literal', value: '2026-01-01T00:00:00Z' } });
    expect(where('e/ehr_id/value = $ehr_id')).toMatchObject({ right: { kind: 'param', name: 'ehr_id' } });
    expect(where('c/name/value = "it\'s"')).toMatchObject({ right: { kind: 'literal', value: "it's" } });
    expect(where('c/x = NULL')).toMatchObject({ right: { kind: 'literal', value: null } });
    expect(where('LENGTH(c/name/value) > 3')).toMatchObject({ left: { kind: 'call', name: 'LENGTH' } });
    expect(where('o/x/magnitude > CURRENT_DATE_TIME()')).toMatchObject({ right: { kind: 'call', name: 'CURRENT_DATE_TIME' } });
  });

  it('reads LIKE, MATCHES, EXISTS', () => {
    expect(where("c/name/value LIKE 'Vital*'")).toEqual({ kind: 'like', path: path('c/name/value'), pattern: { kind: 'literal', value: 'Vital*' } });
    expect(where('c/name/value like $p')).toMatchObject({ kind: 'like', pattern: { kind: 'param', name: 'p' } });
    expect(where("o/x/defining_code/code_string MATCHES {'at0006', 'at1028', $c}")).toEqual({
      kind: 'matches',
      path: path('o/x/defining_code/code_string'),
      values: [
        { kind: 'literal', value: 'at0006' },
        { kind: 'literal', value: 'at1028' },
        { kind: 'param', name: 'c' },
      ],
    });
    expect(where('EXISTS o/data[at0001]/events[at0006]')).toEqual({ kind: 'exists', path: path('o/data[at0001]/events[at0006]') });
  });

  it('reads NOT, AND over OR, parentheses', () => {
    expect(where('NOT EXISTS o/x AND c/a = 1 OR (c/b = 2 AND NOT c/c = 3)')).toEqual({
      kind: 'or',
      left: { kind: 'and', left: { kind: 'not', expr: { kind: 'exists', path: path('o/x') } }, right: expect.objectContaining({ kind: 'compare' }) },
      right: { kind: 'and', left: expect.objectContaining({ kind: 'compare' }), right: { kind: 'not', expr: expect.objectContaining({ kind: 'compare' }) } },
    });
  });

  it('reads ORDER BY paths and aliases, LIMIT and OFFSET, comments and any keyword case', () => {
    const q = parseAql(`select c/name/value as n, o/x/magnitude -- a comment
      from EHR e contains COMPOSITION c contains OBSERVATION o order by n desc, o/x/magnitude ASCENDING, c/uid/value limit 10 offset 20`);
    expect(q.orderBy.map((o) => [o.path.text, o.descending])).toEqual([
      ['n', true],
      ['o/x/magnitude', false],
      ['c/uid/value', false],
    ]);
    expect([q.limit, q.offset]).toEqual([10, 20]);
  });
});
