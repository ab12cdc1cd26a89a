import { Evaluator } from './evaluate';
import { parseAql } from './parser';
import { buildUniverse, type QueriedComposition } from './universe';

/** One row per value: the rules docs/exchange.md "AQL" states, each on its own small case. */
const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const EVENTS = 'o/data[at0001]/events[at0006]';
const SYS = `${EVENTS}/data[at0003]/items[at0004]/value/magnitude`;
const DIA = `${EVENTS}/data[at0003]/items[at0005]/value/magnitude`;
const TIME = `${EVENTS}/time/value`;

const quantity = (node: string, magnitude: number, mappings?: string[]) => ({
  _type: 'ELEMENT',
  archetype_node_id: node,
  name: { value: node },
  value: {
    _type: 'DV_QUANTITY',
    magnitude,
    units: 'mm[Hg]',
    ...(mappings ? { mappings: mappings.map((match) => ({ _type: 'TERM_MAPPING', match, target: { code_string: `c${match}` } })) } : {}),
  },
});
/** An event with the systolic and diastolic pressures it has (either may be missing). */
const event = (time: string, items: unknown[]) => ({
  _type: 'POINT_EVENT',
  archetype_node_id: 'at0006',
  name: { value: 'any event' },
  time: { value: time },
  data: { _type: 'ITEM_TREE', archetype_node_id: 'at0003', name: { value: 'data' }, items },
});
const participation = (fn: string, ids: string[]) => ({
  _type: 'PARTICIPATION',
  function: { value: fn },
  performer: { _type: 'PARTY_IDENTIFIED', name: fn, identifiers: ids.map((id) => ({ id })) },
});
const observation = (events: unknown[], participations: unknown[] = []) => ({
  _type: 'OBSERVATION',
  archetype_node_id: BP,
  name: { value: 'Blood pressure' },
  other_participations: participations,
  data: { _type: 'HISTORY', archetype_node_id: 'at0001', name: { value: 'history' }, events },
});
const composition = (uid: string, content: unknown[]): QueriedComposition => ({
  uid,
  ehrId: 'ehr-1',
  patientId: '1',
  version: {
    _type: 'ORIGINAL_VERSION',
    data: { _type: 'COMPOSITION', archetype_node_id: 'openEHR-EHR-COMPOSITION.encounter.v1', uid: { value: uid }, content },
  },
});
const ehr = { ehrId: 'ehr-1', patientId: '1', ehr: { ehr_id: { value: 'ehr-1' } }, status: { _type: 'EHR_STATUS', is_queryable: true } };

// c1: event A (150/90, two mappings on the systolic), event B (170, no diastolic), event C (no systolic, 70); c2: one event; c3: none.
const compositions = () => [
  composition('c1', [
    observation(
      [
        event('2026-11-20T08:00:00Z', [quantity('at0004', 150, ['=', '>']), quantity('at0005', 90)]),
        event('2026-11-20T09:00:00Z', [{ ...quantity('at0004', 170), feeder_audit: { original_content: { value: 'from the device' } } }]),
        event('2026-11-20T10:00:00Z', [quantity('at0005', 70)]),
      ],
      [participation('requester', ['r1', 'r2']), participation('performer', ['p1'])],
    ),
  ]),
  composition('c2', [observation([event('2026-11-19T08:00:00Z', [quantity('at0004', 120), quantity('at0005', 80)])])]),
  composition('c3', []),
];
const run = (q: string, content = compositions()) => new Evaluator(parseAql(q), {}, buildUniverse([ehr], content)).run();
const rows = (q: string) => run(q).rows;

describe('AQL: one row per value', () => {
  it('a list a SELECT path reaches fans out: a row per value, in document order', () => {
    expect(rows(`SELECT ${SYS} FROM OBSERVATION o`)).toEqual([[150], [170], [120]]);
    expect(rows('SELECT o/other_participations/function/value FROM OBSERVATION o')).toEqual([['requester'], ['performer'], [null]]);
  });

  it('a step that reaches nothing: no row inside the archetyped structure, NULL outside it, a NULL row where nothing is reached', () => {
    // Event C has no systolic element: it gives no row (above). An RM attribute of a data value gives NULL.
    expect(rows(`SELECT ${EVENTS}/data[at0003]/items[at0004]/value/mappings/match FROM OBSERVATION o`)).toEqual([['='], ['>'], [null], [null]]);
    // A feeder audit belongs to the structure: an event whose element has none gives no row (c2's observation a NULL one).
    expect(rows(`SELECT ${EVENTS}/data[at0003]/items[at0004]/feeder_audit/original_content/value FROM OBSERVATION o`)).toEqual([['from the device'], [null]]);
    // Where the variable reaches nothing at all, its row stays, NULL.
    expect(rows(`SELECT c/uid/value, ${EVENTS}/data[at0003]/items[at0099]/value/magnitude FROM COMPOSITION c CONTAINS OBSERVATION o`)).toEqual([
      ['c1', null],
      ['c2', null],
    ]);
  });

  it('paths sharing steps read the same object; where they part, an object gives a row if one branch reaches something', () => {
    expect(rows(`SELECT ${SYS}, ${DIA}, ${TIME} FROM OBSERVATION o`)).toEqual([
      [150, 90, '2026-11-20T08:00:00Z'],
      [170, null, '2026-11-20T09:00:00Z'],
      [null, 70, '2026-11-20T10:00:00Z'],
      [120, 80, '2026-11-19T08:00:00Z'],
    ]);
    expect(rows(`SELECT ${SYS}, ${DIA} FROM OBSERVATION o`)).toEqual([
      [150, 90],
      [170, null],
      [null, 70],
      [120, 80],
    ]);
  });

  it('branches that part multiply (per object they part at)', () => {
    const c1 = `FROM COMPOSITION c CONTAINS OBSERVATION o WHERE c/uid/value = 'c1'`;
    expect(rows(`SELECT o/other_participations/function/value, ${SYS} ${c1}`)).toEqual([
      ['requester', 150],
      ['requester', 170],
      ['performer', 150],
      ['performer', 170],
    ]);
    expect(rows(`SELECT o/other_participations/function/value, o/other_participations/performer/identifiers/id ${c1}`)).toEqual([
      ['requester', 'r1'],
      ['requester', 'r2'],
      ['performer', 'p1'],
    ]);
  });

  it('ORDER BY sorts the rows; a path it alone names fans them out too', () => {
    expect(rows(`SELECT ${SYS} FROM OBSERVATION o ORDER BY ${SYS} DESC`)).toEqual([[170], [150], [120]]);
    expect(rows(`SELECT c/uid/value FROM COMPOSITION c CONTAINS OBSERVATION o ORDER BY ${SYS}`)).toEqual([['c2'], ['c1'], ['c1']]);
  });

  it('aggregates take every value; COUNT(*) counts the rows', () => {
    expect(rows(`SELECT COUNT(${SYS}), MAX(${SYS}), MIN(${DIA}), COUNT(*) FROM OBSERVATION o`)).toEqual([[3, 170, 70, 4]]);
    expect(rows(`SELECT COUNT(${SYS}), COUNT(*) FROM OBSERVATION o`)).toEqual([[3, 3]]);
    expect(rows('SELECT COUNT(*) FROM OBSERVATION o')).toEqual([[2]]);
    expect(rows(`SELECT c/uid/value, COUNT(${SYS}), MAX(${SYS}) FROM COMPOSITION c CONTAINS OBSERVATION o`)).toEqual([
      ['c1', 2, 170],
      ['c2', 1, 120],
    ]);
  });

  it("WHERE tests the row's own objects; beyond them any value satisfies, and it fans nothing out", () => {
    expect(rows(`SELECT ${SYS} FROM OBSERVATION o WHERE ${DIA} = 90`)).toEqual([[150]]);
    expect(rows(`SELECT ${SYS} FROM OBSERVATION o WHERE ${TIME} > '2026-11-20T08:30:00Z'`)).toEqual([[170]]);
    expect(rows(`SELECT o/other_participations/function/value FROM OBSERVATION o WHERE o/other_participations/performer/identifiers/id = 'p1'`)).toEqual([
      ['performer'],
    ]);
    expect(rows(`SELECT c/uid/value FROM COMPOSITION c CONTAINS OBSERVATION o WHERE ${SYS} > 100`)).toEqual([['c1'], ['c2']]);
    expect(rows(`SELECT COUNT(*) FROM OBSERVATION o WHERE ${SYS} > 100`)).toEqual([[2]]);
  });

  it('DISTINCT, LIMIT and OFFSET apply to the fanned-out rows; sources are the compositions of the rows returned', () => {
    expect(rows(`SELECT DISTINCT ${EVENTS}/data[at0003]/items[at0004]/value/units FROM OBSERVATION o`)).toEqual([['mm[Hg]']]);
    expect(rows(`SELECT c/uid/value, ${SYS} FROM COMPOSITION c CONTAINS OBSERVATION o LIMIT 1 OFFSET 1`)).toEqual([['c1', 170]]);
    expect(run(`SELECT ${SYS} FROM OBSERVATION o LIMIT 2`).sources.map((s) => s.entityId)).toEqual(['c1']);
    expect(run(`SELECT ${SYS} FROM OBSERVATION o LIMIT 3`).sources.map((s) => s.entityId)).toEqual(['c1', 'c2']);
  });

  it('the cap on rows before WHERE counts fanned-out rows', () => {
    // 317 participations × 317 events: 100,489 rows from one binding.
    const events = Array.from({ length: 317 }, (_, i) => event(new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), []));
    const many = [
      composition('c9', [
        observation(
          events,
          Array.from({ length: 317 }, (_, i) => participation(`f${i}`, [])),
        ),
      ]),
    ];
    expect(run('SELECT COUNT(*) FROM OBSERVATION o', many).rows).toEqual([[1]]);
    expect(() => run(`SELECT o/other_participations/function/value, ${TIME} FROM OBSERVATION o`, many)).toThrow('more than 100000 rows before WHERE');
  });
});
