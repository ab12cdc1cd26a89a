import {
  leafConditions,
  namedEhr,
  readsCompositions,
  readsEhrStatus,
  readsFiledCompositionsOnly,
  readsFolders,
  requiresComposition,
  requiresFolder,
  templateCanMatch,
  templateInWhere,
} from './narrow';
import { parseAql } from './parser';

const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const PULSE = 'openEHR-EHR-OBSERVATION.pulse.v2';
const LAB = 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1';

describe('AQL narrowing before reading', () => {
  it('loads the EHR_STATUS as written only for a query that can see it', () => {
    const reads = (q: string) => readsEhrStatus(parseAql(q), q);
    expect(reads('SELECT e/ehr_status/other_details FROM EHR e')).toBe(true);
    expect(reads('SELECT s/subject FROM EHR e CONTAINS EHR_STATUS s')).toBe(true);
    expect(reads('SELECT e FROM EHR e')).toBe(true);
    expect(reads('SELECT e/ehr_id/value FROM EHR e')).toBe(false);
    expect(reads(`SELECT c FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}]`)).toBe(false);
  });

  it('finds the EHR named in FROM or as a top-level AND term of WHERE', () => {
    const named = (q: string, params = {}) => {
      const parsed = parseAql(q);
      return namedEhr(parsed.from, parsed.where, params);
    };
    expect(named('SELECT c FROM EHR e[ehr_id/value=$id] CONTAINS COMPOSITION c', { id: 'ehr-1' })).toBe('ehr-1');
    expect(named("SELECT c FROM EHR e CONTAINS COMPOSITION c WHERE c/x > 1 AND e/ehr_id/value = 'ehr-2'")).toBe('ehr-2');
    expect(named("SELECT c FROM EHR e CONTAINS COMPOSITION c WHERE c/x > 1 OR e/ehr_id/value = 'ehr-2'")).toBeNull();
    expect(named("SELECT c FROM EHR e CONTAINS COMPOSITION c WHERE NOT e/ehr_id/value = 'ehr-2'")).toBeNull();
    expect(named("SELECT c FROM COMPOSITION c WHERE c/ehr_id/value = 'ehr-2'")).toBeNull();
  });

  it('tells whether every binding of FROM holds a composition, and whether FROM reads compositions at all', () => {
    const from = (q: string) => parseAql(`SELECT 1 FROM ${q}`).from;
    const cases: Array<[string, boolean, boolean]> = [
      ['EHR e', false, false],
      ['EHR_STATUS s', false, false],
      ['EHR e CONTAINS EHR_STATUS s', false, false],
      ['EHR e CONTAINS COMPOSITION c', true, true],
      ['COMPOSITION c', true, true],
      [`EHR e CONTAINS OBSERVATION o[${BP}]`, true, true],
      ['EHR e NOT CONTAINS COMPOSITION c', false, true],
      ['EHR e CONTAINS (EHR_STATUS s OR COMPOSITION c)', false, true],
      ['EHR e CONTAINS (EHR_STATUS s AND COMPOSITION c)', true, true],
      ['FOLDER f', false, false],
      ['EHR e CONTAINS FOLDER f1 CONTAINS FOLDER f2', false, false],
      ['FOLDER f CONTAINS COMPOSITION c', true, true],
      ['FOLDER f CONTAINS VERSION v[LATEST_VERSION] CONTAINS COMPOSITION c', true, true],
    ];
    for (const [q, requires, reads] of cases) {
      expect([q, requiresComposition(from(q))]).toEqual([q, requires]);
      expect([q, readsCompositions(from(q))]).toEqual([q, reads]);
    }
  });

  it('keeps the templates that can hold every archetype (and template id) FROM asks for', () => {
    const vitals = new Set(['openEHR-EHR-COMPOSITION.encounter.v1', BP, PULSE]);
    const lab = new Set(['openEHR-EHR-COMPOSITION.report-result.v1', LAB]);
    const can = (q: string) =>
      ['vital_signs.v1', 'lab_result.v1'].filter((id) => templateCanMatch(parseAql(q).from, { a: PULSE }, id, id === 'vital_signs.v1' ? vitals : lab));
    expect(can(`SELECT c FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}]`)).toEqual(['vital_signs.v1']);
    expect(can('SELECT c FROM COMPOSITION c[lab_result.v1]')).toEqual(['lab_result.v1']);
    expect(can(`SELECT c FROM COMPOSITION c CONTAINS (OBSERVATION o[${BP}] OR OBSERVATION l[${LAB}])`)).toEqual(['vital_signs.v1', 'lab_result.v1']);
    expect(can(`SELECT c FROM COMPOSITION c CONTAINS (OBSERVATION o[${BP}] AND OBSERVATION l[${LAB}])`)).toEqual([]);
    expect(can(`SELECT c FROM COMPOSITION c NOT CONTAINS OBSERVATION o[${BP}]`)).toEqual(['vital_signs.v1', 'lab_result.v1']);
    expect(can('SELECT o FROM OBSERVATION o[$a]')).toEqual(['vital_signs.v1']);
    expect(can('SELECT s FROM EHR e CONTAINS EHR_STATUS s')).toEqual(['vital_signs.v1', 'lab_result.v1']);
  });

  it('below the EHR, keeps a template that can hold one branch: different compositions may bind them', () => {
    const vitals = new Set(['openEHR-EHR-COMPOSITION.encounter.v1', BP, PULSE]);
    const lab = new Set(['openEHR-EHR-COMPOSITION.report-result.v1', LAB]);
    const can = (q: string) =>
      ['vital_signs.v1', 'lab_result.v1'].filter((id) => templateCanMatch(parseAql(q).from, {}, id, id === 'vital_signs.v1' ? vitals : lab));
    expect(can(`SELECT o FROM EHR e CONTAINS (OBSERVATION o[${BP}] AND OBSERVATION l[${LAB}])`)).toEqual(['vital_signs.v1', 'lab_result.v1']);
    expect(can(`SELECT o FROM EHR e CONTAINS (COMPOSITION a CONTAINS OBSERVATION o[${BP}] AND COMPOSITION b CONTAINS OBSERVATION l[${LAB}])`)).toEqual([
      'vital_signs.v1',
      'lab_result.v1',
    ]);
    // An OR operand that is not a CONTAINS chain binds its classes one by one: its blood pressure stays in a row the
    // lab result holds, though the operand's other class is nowhere.
    const OTHER = 'openEHR-EHR-OBSERVATION.other.v1';
    expect(can(`SELECT o FROM EHR e CONTAINS ((OBSERVATION o[${BP}] AND OBSERVATION x[${OTHER}]) OR OBSERVATION l[${LAB}])`)).toEqual([
      'vital_signs.v1',
      'lab_result.v1',
    ]);
    // A CONTAINS chain operand binds whole.
    expect(can(`SELECT o FROM EHR e CONTAINS ((OBSERVATION o[${BP}] CONTAINS OBSERVATION x[${OTHER}]) OR OBSERVATION l[${LAB}])`)).toEqual(['lab_result.v1']);
    // The EHR's own classes hold no composition; within a composition every AND branch is needed.
    expect(can(`SELECT o FROM EHR e CONTAINS (EHR_STATUS s AND COMPOSITION c CONTAINS OBSERVATION o[${BP}])`)).toEqual(['vital_signs.v1']);
    expect(can(`SELECT o FROM EHR e CONTAINS COMPOSITION c CONTAINS (OBSERVATION o[${BP}] AND OBSERVATION l[${LAB}])`)).toEqual([]);
  });

  it('reads directories only for a FOLDER, whose archetype says nothing of the templates it files', () => {
    const vitals = new Set(['openEHR-EHR-COMPOSITION.encounter.v1', BP, PULSE]);
    const lab = new Set(['openEHR-EHR-COMPOSITION.report-result.v1', LAB]);
    const can = (q: string) =>
      ['vital_signs.v1', 'lab_result.v1'].filter((id) => templateCanMatch(parseAql(q).from, {}, id, id === 'vital_signs.v1' ? vitals : lab));
    const EPISODE = 'openEHR-EHR-FOLDER.episode_of_care.v1';
    expect(can(`SELECT c FROM FOLDER f[${EPISODE}] CONTAINS FOLDER g[${EPISODE}] CONTAINS COMPOSITION c`)).toEqual(['vital_signs.v1', 'lab_result.v1']);
    expect(can(`SELECT c FROM EHR e CONTAINS FOLDER f[${EPISODE}] CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${LAB}]`)).toEqual(['lab_result.v1']);
    // Below a folder, as below the EHR, different compositions may bind the branches of an AND.
    expect(can(`SELECT o FROM FOLDER f CONTAINS (OBSERVATION o[${BP}] AND OBSERVATION l[${LAB}])`)).toEqual(['vital_signs.v1', 'lab_result.v1']);
    expect(readsFolders(parseAql('SELECT c FROM EHR e CONTAINS FOLDER f CONTAINS COMPOSITION c').from)).toBe(true);
    expect(readsFolders(parseAql(`SELECT c FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}]`).from)).toBe(false);
    // Only EHRs with a directory can answer a FROM whose every binding holds a folder.
    const needsFolder = (from: string) => requiresFolder(parseAql(`SELECT 1 FROM ${from}`).from);
    expect(needsFolder('FOLDER f')).toBe(true);
    expect(needsFolder('EHR e CONTAINS FOLDER f CONTAINS FOLDER g')).toBe(true);
    expect(needsFolder('EHR e CONTAINS (FOLDER f AND EHR_STATUS s)')).toBe(true);
    expect(needsFolder('EHR e CONTAINS (FOLDER f OR EHR_STATUS s)')).toBe(false);
    expect(needsFolder('EHR e NOT CONTAINS FOLDER f')).toBe(false);
    // Only compositions filed in a directory are candidates where every class reading them is inside a folder.
    const filedOnly = (from: string) => readsFiledCompositionsOnly(parseAql(`SELECT 1 FROM ${from}`).from);
    expect(filedOnly('FOLDER f CONTAINS COMPOSITION c')).toBe(true);
    expect(filedOnly(`EHR e CONTAINS FOLDER f CONTAINS VERSION v[LATEST_VERSION] CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}]`)).toBe(true);
    expect(filedOnly('EHR e CONTAINS (FOLDER f CONTAINS COMPOSITION c OR EHR_STATUS s)')).toBe(true);
    expect(filedOnly('EHR e CONTAINS (FOLDER f AND COMPOSITION c)')).toBe(false);
    expect(filedOnly('VERSION v CONTAINS COMPOSITION c')).toBe(false);
    expect(filedOnly('COMPOSITION c')).toBe(false);
    // A folder's archetype is no entry's: WHERE on its paths narrows no composition.
    const q = parseAql(`SELECT f FROM FOLDER f[${EPISODE}] WHERE f/details[at0001]/items[at0002]/value/magnitude > 1`);
    expect(leafConditions(q.from, q.where, {})).toEqual([]);
  });

  it('finds a template pinned by WHERE, only where no OR branch could match without it', () => {
    const pinned = (q: string) => {
      const parsed = parseAql(q);
      return templateInWhere(parsed.from, parsed.where, {});
    };
    expect(pinned("SELECT c FROM EHR e CONTAINS COMPOSITION c WHERE c/archetype_details/template_id/value = 'lab_result.v1'")).toBe('lab_result.v1');
    expect(pinned("SELECT c FROM EHR e CONTAINS COMPOSITION c WHERE c/archetype_details/template_id/value = 'lab_result.v1' OR c/x = 1")).toBeUndefined();
    expect(pinned("SELECT c FROM COMPOSITION c OR COMPOSITION d WHERE c/archetype_details/template_id/value = 'x.v1'")).toBeUndefined();
  });

  it('turns WHERE terms on node-id paths below an archetype into clinical-index conditions, only where every row needs them', () => {
    const leaves = (q: string, params = {}) => {
      const parsed = parseAql(q);
      return leafConditions(parsed.from, parsed.where, params);
    };
    const from = `FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}]`;
    const sys = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value';
    const rel = '/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value';
    expect(
      leaves(`SELECT c ${from} WHERE ${sys}/magnitude > 140 AND $code = ${sys.replace('at0004', 'at0008')}/defining_code/code_string`, { code: 'at1001' }),
    ).toEqual([
      { archetypeId: BP, path: rel, magnitude: { op: '>', value: 140 } },
      { archetypeId: BP, path: rel.replace('at0004', 'at0008'), code: 'at1001' },
    ]);
    expect(leaves(`SELECT c ${from} WHERE 140 >= ${sys}/magnitude`)).toEqual([{ archetypeId: BP, path: rel, magnitude: { op: '<=', value: 140 } }]);
    // Not required of every row: OR, NOT, an OR in FROM, a NOT CONTAINS, versions; nor a simple-form path or a != test.
    expect(leaves(`SELECT c ${from} WHERE ${sys}/magnitude > 140 OR c/uid/value = 'x'`)).toEqual([]);
    expect(leaves(`SELECT c ${from} WHERE NOT ${sys}/magnitude > 140`)).toEqual([]);
    expect(leaves(`SELECT o FROM EHR e CONTAINS (OBSERVATION o[${BP}] OR OBSERVATION p[${PULSE}]) WHERE ${sys}/magnitude > 140`)).toEqual([]);
    expect(leaves(`SELECT c FROM EHR e CONTAINS VERSION v CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}] WHERE ${sys}/magnitude > 140`)).toEqual([]);
    expect(leaves(`SELECT c ${from} WHERE o/systolic/magnitude > 140 AND ${sys}/magnitude != 120`)).toEqual([]);
    expect(leaves(`SELECT c ${from} WHERE ${sys}/magnitude > '140'`)).toEqual([]);
  });
});
