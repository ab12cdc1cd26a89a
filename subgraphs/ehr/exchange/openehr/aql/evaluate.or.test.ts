import { Evaluator } from './evaluate';
import { parseAql } from './parser';
import { buildUniverse, type QueriedComposition } from './universe';

/**
 * Rows of an OR in FROM, as EHRbase answers them: the operands bind on their own beside each other (a row per
 * combination, NULL for an operand that found nothing), and a row needs one operand to hold.
 */

type Json = Record<string, unknown>;
const CO = 'openEHR-EHR-OBSERVATION.conformance_observation.v0';
const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const PROBLEM = 'openEHR-EHR-EVALUATION.problem_diagnosis.v1';
const CLUSTER = 'openEHR-EHR-CLUSTER.conformance_cluster.v0';

const node = (type: string, archetype: string, name: string, more: Json = {}): Json => ({
  _type: type,
  archetype_node_id: archetype,
  name: { value: name },
  ...more,
});
/** An entry whose events hold the given clusters (one event each). */
const entry = (type: string, archetype: string, name: string, clusters = 0): Json =>
  node(type, archetype, name, {
    data: {
      _type: 'HISTORY',
      archetype_node_id: 'at0001',
      events: Array.from({ length: clusters }, () => ({
        _type: 'POINT_EVENT',
        archetype_node_id: 'at0002',
        data: { _type: 'ITEM_TREE', archetype_node_id: 'at0003', items: [node('CLUSTER', CLUSTER, 'conformance cluster')] },
      })),
    },
  });
const composition = (uid: string, content: Json[]): QueriedComposition => ({
  uid,
  ehrId: 'ehr-1',
  patientId: '1',
  version: {
    _type: 'ORIGINAL_VERSION',
    data: node('COMPOSITION', 'openEHR-EHR-COMPOSITION.encounter.v1', uid, { uid: { value: uid }, content }),
  },
});
const run = (compositions: QueriedComposition[], q: string) =>
  new Evaluator(
    parseAql(q),
    {},
    buildUniverse([{ ehrId: 'ehr-1', patientId: '1', ehr: { ehr_id: { value: 'ehr-1' } }, status: { _type: 'EHR_STATUS', is_queryable: true } }], compositions),
  ).run().rows;
/** Rows in a stable order, as the suites compare them (order ignored). */
const sorted = (rows: unknown[][]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('AQL: rows of OR containments', () => {
  /**
   * The composition of EHRbase's FROM AND/OR suite, restated with what the queries read (integration-tests:
   * tests/robot/_resources/test_data_sets/aql/data_load/compositions/aql-conformance-ehrbase.org.v0_contains.json):
   * a conformance section with two conformance observations (the first with a cluster in each of two events) and a
   * blood pressure observation (one cluster), and two adhoc sections with one conformance observation each.
   */
  const suite = [
    composition('aql-conformance', [
      node('SECTION', 'openEHR-EHR-SECTION.conformance_section.v0', 'conformance section', {
        items: [
          entry('OBSERVATION', CO, 'Conformance Observation', 2),
          entry('OBSERVATION', CO, 'Conformance Observation'),
          entry('OBSERVATION', BP, 'Blood pressure', 1),
        ],
      }),
      node('SECTION', 'openEHR-EHR-SECTION.adhoc.v1', 'Section 1', { items: [entry('OBSERVATION', CO, 'Conformance Observation')] }),
      node('SECTION', 'openEHR-EHR-SECTION.adhoc.v1', 'Section 2', { items: [entry('OBSERVATION', CO, 'Conformance Observation')] }),
    ]),
  ];
  // The queries and expected rows below are those of integration-tests tests/robot/AQL_TESTS/FROM/AND_OR/simple_and_or.robot
  // (queries: tests/robot/_resources/test_data_sets/aql/fields_and_results/from/combinations/from_simple_and_or.csv,
  // rows: …/fields_and_results/from/expected_from_simple_and_or_<n>.json).
  it('EHRbase suite, case 2: a section holding both operands gives a row per pair, one holding one gives NULL for the other', () => {
    const q = `SELECT o1/name/value, o2/name/value FROM EHR CONTAINS SECTION CONTAINS (OBSERVATION o1[${CO}] OR OBSERVATION o2[${BP}])`;
    expect(sorted(run(suite, q))).toEqual([
      ['Conformance Observation', 'Blood pressure'],
      ['Conformance Observation', 'Blood pressure'],
      ['Conformance Observation', null],
      ['Conformance Observation', null],
    ]);
  });

  it('EHRbase suite, case 3: CONTAINS chains as operands bind whole, side by side', () => {
    const q = `SELECT s1/name/value, o1/name/value, s2/name/value, o2/name/value FROM EHR CONTAINS
      ((SECTION s1[openEHR-EHR-SECTION.conformance_section.v0] CONTAINS OBSERVATION o1[${CO}])
        OR (SECTION s2[openEHR-EHR-SECTION.adhoc.v1, 'Section 1'] CONTAINS OBSERVATION o2[${CO}]))`;
    expect(run(suite, q)).toEqual([
      ['conformance section', 'Conformance Observation', 'Section 1', 'Conformance Observation'],
      ['conformance section', 'Conformance Observation', 'Section 1', 'Conformance Observation'],
    ]);
    // Not class by class: the adhoc sections, without a blood pressure, are not bound beside the other operand.
    const chain = `SELECT s/name/value, o/name/value, COUNT(*) FROM COMPOSITION c CONTAINS
      ((SECTION s CONTAINS OBSERVATION o[${BP}]) OR OBSERVATION o3[${CO}])`;
    expect(run(suite, chain)).toEqual([['conformance section', 'Blood pressure', 4]]);
  });

  it('EHRbase suite, case 5: an AND operand binds class by class, keeping what it found where the other operand holds', () => {
    const q = `SELECT s1/name/value, o1/name/value, c/name/value, o2/name/value, o3/name/value FROM EHR CONTAINS SECTION s1 CONTAINS
      (((OBSERVATION o1 CONTAINS CLUSTER c) AND OBSERVATION o2[${BP}]) OR OBSERVATION o3[${CO}])`;
    const full = ['conformance section', 'Conformance Observation', 'conformance cluster', 'Blood pressure', 'Conformance Observation'];
    expect(sorted(run(suite, q))).toEqual(
      sorted([
        ...Array(4).fill(full),
        ...Array(2).fill(['conformance section', 'Conformance Observation', null, 'Blood pressure', 'Conformance Observation']),
        ...Array(2).fill(['conformance section', 'Blood pressure', 'conformance cluster', 'Blood pressure', 'Conformance Observation']),
        ['Section 1', 'Conformance Observation', null, null, 'Conformance Observation'],
        ['Section 2', 'Conformance Observation', null, null, 'Conformance Observation'],
      ]),
    );
  });

  const records = [
    composition('c1-only-a', [entry('OBSERVATION', BP, 'BP 1')]),
    composition('c2-only-b', [entry('EVALUATION', PROBLEM, 'Problem 2')]),
    composition('c3-both', [entry('OBSERVATION', BP, 'BP 3'), entry('EVALUATION', PROBLEM, 'Problem 3')]),
    composition('c4-several', [entry('OBSERVATION', BP, 'BP 4a'), entry('OBSERVATION', BP, 'BP 4b'), entry('EVALUATION', PROBLEM, 'Problem 4')]),
    composition('c5-neither', [entry('OBSERVATION', CO, 'Other')]),
  ];
  const EITHER = `FROM EHR e CONTAINS COMPOSITION c CONTAINS (OBSERVATION o[${BP}] OR EVALUATION e2[${PROBLEM}])`;

  it('per composition: one row for only A or only B, one per pair where both are, none where neither is', () => {
    expect(run(records, `SELECT c/uid/value, o/name/value, e2/name/value ${EITHER} ORDER BY c/uid/value, o/name/value`)).toEqual([
      ['c1-only-a', 'BP 1', null],
      ['c2-only-b', null, 'Problem 2'],
      ['c3-both', 'BP 3', 'Problem 3'],
      ['c4-several', 'BP 4a', 'Problem 4'],
      ['c4-several', 'BP 4b', 'Problem 4'],
    ]);
    // Whole objects: an unbound variable is NULL.
    const [[observation, evaluation]] = run(records, `SELECT o, e2 ${EITHER} WHERE c/uid/value = 'c2-only-b'`);
    expect(observation).toBeNull();
    expect(evaluation).toMatchObject({ _type: 'EVALUATION', name: { value: 'Problem 2' } });
  });

  it("WHERE on one operand's variable filters the rows by it; a row without it matches no comparison", () => {
    const uids = (where: string) => run(records, `SELECT c/uid/value, o/name/value ${EITHER} WHERE ${where} ORDER BY c/uid/value, o/name/value`);
    expect(uids("o/name/value LIKE 'BP 4*'")).toEqual([
      ['c4-several', 'BP 4a'],
      ['c4-several', 'BP 4b'],
    ]);
    expect(uids("e2/name/value != 'Problem 4'")).toEqual([
      ['c2-only-b', null],
      ['c3-both', 'BP 3'],
    ]);
    expect(uids('NOT EXISTS e2/name/value')).toEqual([['c1-only-a', 'BP 1']]);
  });

  it('an OR nested inside an AND: the AND needs its class, the OR one of its operands', () => {
    const withCluster = composition('c6', [entry('OBSERVATION', BP, 'BP 6', 1), entry('EVALUATION', PROBLEM, 'Problem 6')]);
    const q = `SELECT c/uid/value, o/name/value, x/name/value, e2/name/value FROM EHR e CONTAINS COMPOSITION c
      CONTAINS (OBSERVATION o[${BP}] AND (CLUSTER x[${CLUSTER}] OR EVALUATION e2[${PROBLEM}])) ORDER BY c/uid/value, o/name/value`;
    expect(run([...records, withCluster], q)).toEqual([
      ['c3-both', 'BP 3', null, 'Problem 3'],
      ['c4-several', 'BP 4a', null, 'Problem 4'],
      ['c4-several', 'BP 4b', null, 'Problem 4'],
      ['c6', 'BP 6', 'conformance cluster', 'Problem 6'],
    ]);
  });

  it('below the EHR, the operands pair across compositions', () => {
    // As integration-tests tests/robot/AQL_TESTS/EXTERNAL/query_test_set_3.robot expects of
    // `FROM EHR e CONTAINS (OBSERVATION o1[…blood_pressure.v2] OR ACTION a[…procedure.v1])`: every row holds both.
    const q = `SELECT o/name/value, e2/name/value FROM EHR e CONTAINS (OBSERVATION o[${BP}] OR EVALUATION e2[${PROBLEM}])`;
    const rows = run(records.slice(0, 2), q);
    expect(rows).toEqual([['BP 1', 'Problem 2']]);
    expect(run(records, `SELECT COUNT(*) FROM EHR e CONTAINS (OBSERVATION o[${BP}] OR EVALUATION e2[${PROBLEM}])`)).toEqual([[4 * 3]]);
  });
});
