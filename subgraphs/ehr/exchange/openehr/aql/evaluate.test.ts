import { compareValues, likeRegex } from './compare';
import { Evaluator, type Parameters } from './evaluate';
import { parseAql } from './parser';
import { buildUniverse, type QueriedComposition } from './universe';

const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const element = (nodeId: string, name: string, magnitude: number) => ({
  _type: 'ELEMENT',
  archetype_node_id: nodeId,
  name: { value: name },
  value: { _type: 'DV_QUANTITY', magnitude, units: 'mm[Hg]' },
});
/** A canonical blood pressure observation with one event per systolic value. */
const observation = (...systolic: number[]) => ({
  _type: 'OBSERVATION',
  archetype_node_id: BP,
  name: { value: 'Blood pressure' },
  data: {
    _type: 'HISTORY',
    archetype_node_id: 'at0001',
    events: systolic.map((s, i) => ({
      _type: 'POINT_EVENT',
      archetype_node_id: 'at0006',
      name: { value: i === 0 ? 'Any event' : `Event ${i}` },
      data: { _type: 'ITEM_TREE', archetype_node_id: 'at0003', items: [element('at0004', 'Systolic', s), element('at0005', 'Diastolic', 80)] },
    })),
  },
});
const composition = (uid: string, ehrId: string, name: string, content: unknown[]): QueriedComposition => ({
  uid,
  ehrId,
  patientId: ehrId.replace('ehr-', ''),
  version: {
    _type: 'ORIGINAL_VERSION',
    uid: { value: uid },
    data: {
      _type: 'COMPOSITION',
      archetype_node_id: 'openEHR-EHR-COMPOSITION.encounter.v1',
      name: { value: name },
      uid: { value: uid },
      archetype_details: { template_id: { value: 'vital_signs.v1' } },
      context: { start_time: { value: `2026-11-2${uid.slice(-1)}T08:00:00Z` } },
      content,
    },
  },
});
const ehr = (id: string) => ({
  ehrId: id,
  patientId: id.replace('ehr-', ''),
  ehr: { ehr_id: { value: id }, system_id: { value: 'system' }, time_created: { value: '2026-11-01T08:00:00Z' } },
  status: { _type: 'EHR_STATUS', is_queryable: true },
});

const universe = () =>
  buildUniverse(
    [ehr('ehr-1'), ehr('ehr-2')],
    [
      composition('c1', 'ehr-1', 'Vital signs', [observation(150, 170)]),
      composition('c2', 'ehr-1', 'Vital signs', [observation(120)]),
      composition('c3', 'ehr-2', 'Clinic visit', []),
    ],
  );
const run = (q: string, params: Parameters = {}) => new Evaluator(parseAql(q), params, universe()).run();
const SYS = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude';

describe('AQL evaluation', () => {
  it('walks node-id paths, narrowing by node id and name; a row per event, any value in WHERE', () => {
    expect(run(`SELECT c/uid/value, ${SYS} FROM COMPOSITION c CONTAINS OBSERVATION o[${BP}] ORDER BY c/uid/value`).rows).toEqual([
      ['c1', 150],
      ['c1', 170],
      ['c2', 120],
    ]);
    expect(run(`SELECT o/data[at0001]/events[at0006, 'Event 1']/data[at0003]/items[at0004]/value/magnitude FROM OBSERVATION o`).rows).toEqual([[170], [null]]);
    expect(run(`SELECT c/uid/value FROM COMPOSITION c CONTAINS OBSERVATION o WHERE ${SYS} > 160`).rows).toEqual([['c1']]);
    expect(run(`SELECT o/data[at0001]/events[name/value='Any event']/data/items[at0004]/value FROM OBSERVATION o WHERE ${SYS} = 120`).rows).toEqual([
      [{ _type: 'DV_QUANTITY', magnitude: 120, units: 'mm[Hg]' }],
    ]);
  });

  it('binds each containment combination; NOT CONTAINS keeps those without', () => {
    expect(run('SELECT e/ehr_id/value, c/uid/value FROM EHR e CONTAINS COMPOSITION c ORDER BY c/uid/value').rows).toEqual([
      ['ehr-1', 'c1'],
      ['ehr-1', 'c2'],
      ['ehr-2', 'c3'],
    ]);
    expect(run(`SELECT c/uid/value FROM COMPOSITION c NOT CONTAINS OBSERVATION o[${BP}]`).rows).toEqual([['c3']]);
    expect(run('SELECT COUNT(*) FROM EHR e CONTAINS (COMPOSITION a AND COMPOSITION b)').rows).toEqual([[5]]);
  });

  it('aggregates, groups by the other columns, and names unaliased columns by position; only a path column has a path', () => {
    const result = run(`SELECT e/ehr_id/value, COUNT(c) AS n, MAX(c/context/start_time/value) FROM EHR e CONTAINS COMPOSITION c ORDER BY n DESC`);
    expect(result.columns).toEqual([{ name: '#0', path: 'e/ehr_id/value' }, { name: 'n' }, { name: '#2' }]);
    expect(result.rows).toEqual([
      ['ehr-1', 2, '2026-11-22T08:00:00Z'],
      ['ehr-2', 1, '2026-11-23T08:00:00Z'],
    ]);
    expect(run(`SELECT AVG(${SYS}), SUM(o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value) FROM OBSERVATION o`).rows).toEqual([[440 / 3, 440]]);
    expect(() => run('SELECT SUM(c/name/value) FROM COMPOSITION c')).toThrow('needs numbers');
  });

  it('DISTINCT, TOP, LIMIT/OFFSET', () => {
    expect(run('SELECT DISTINCT c/name/value FROM COMPOSITION c ORDER BY c/name/value').rows).toEqual([['Clinic visit'], ['Vital signs']]);
    expect(run('SELECT TOP 1 BACKWARD c/uid/value FROM COMPOSITION c ORDER BY c/uid/value').rows).toEqual([['c3']]);
    expect(run('SELECT c/uid/value FROM COMPOSITION c ORDER BY c/uid/value LIMIT 1 OFFSET 1').rows).toEqual([['c2']]);
  });

  it('functions, LIKE, MATCHES, EXISTS, NULL, parameters', () => {
    const one = (select: string) => run(`SELECT ${select} FROM COMPOSITION c WHERE c/uid/value = 'c3'`).rows[0][0];
    expect(one('LENGTH(c/name/value)')).toBe(12);
    expect(one('SUBSTRING(c/name/value, 8)')).toBe('visit');
    expect(one("CONCAT_WS('-', c/uid/value, c/name/value)")).toBe('c3-Clinic visit');
    expect(one('LENGTH(c/missing)')).toBeNull();
    expect(one('ROUND(ABS(-2.46), 1)')).toBe(2.5);
    expect(one('CURRENT_DATE()')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(() => one('LENGTH(c/name/value, 1)')).toThrow('LENGTH() takes 1 argument');
    const where = (condition: string, params: Parameters = {}) =>
      run(`SELECT c/uid/value FROM COMPOSITION c WHERE ${condition} ORDER BY c/uid/value`, params).rows.map((r) => r[0]);
    expect(where("c/name/value LIKE '*visit'")).toEqual(['c3']);
    expect(where("c/name/value LIKE 'Vital_signs'")).toEqual([]);
    expect(where('c/uid/value MATCHES {$a, "c3"}', { a: 'c1' })).toEqual(['c1', 'c3']);
    expect(where(`EXISTS c/content[${BP}]`)).toEqual(['c1', 'c2']);
    expect(where(`c/content[${BP}] = NULL`)).toEqual(['c3']);
    expect(where(`c/content[${BP}] != NULL AND NOT c/uid/value = 'c1'`)).toEqual(['c2']);
    expect(() => where('c/uid/value = $missing')).toThrow('parameter $missing has no value');
  });

  it('reports the compositions the answer used, or the EHR when a row binds none', () => {
    expect(run(`SELECT c/uid/value FROM COMPOSITION c CONTAINS OBSERVATION o WHERE ${SYS} > 160`).sources).toEqual([
      { entityType: 'Composition', entityId: 'c1', patientId: '1' },
    ]);
    expect(run("SELECT e/ehr_id/value FROM EHR e WHERE e/ehr_id/value = 'ehr-2'").sources).toEqual([{ entityType: 'EHR', entityId: 'ehr-2', patientId: '2' }]);
    expect(run('SELECT COUNT(*) FROM COMPOSITION c WHERE c/uid/value != $x', { x: 'c1' }).sources.map((s) => s.entityId)).toEqual(['c2', 'c3']);
  });

  it('compares and sorts DV_ORDERED data values by their order (a quantity by its magnitude)', () => {
    const DV = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value';
    expect(run(`SELECT c/uid/value FROM COMPOSITION c CONTAINS OBSERVATION o WHERE ${DV} > 160`).rows).toEqual([['c1']]);
    const two = buildUniverse(
      [ehr('ehr-1')],
      [composition('c8', 'ehr-1', 'Vital signs', [observation(150)]), composition('c9', 'ehr-1', 'Vital signs', [observation(90)])],
    );
    const max = new Evaluator(parseAql(`SELECT MAX(${DV}), MIN(${DV}) FROM OBSERVATION o`), {}, two).run();
    expect(max.rows).toEqual([
      [
        { _type: 'DV_QUANTITY', magnitude: 150, units: 'mm[Hg]' },
        { _type: 'DV_QUANTITY', magnitude: 90, units: 'mm[Hg]' },
      ],
    ]);
  });

  it('finds objects canonical JSON leaves without _type by their attribute (EVENT_CONTEXT, HISTORY)', () => {
    expect(run(`SELECT ec/start_time/value FROM COMPOSITION c CONTAINS EVENT_CONTEXT ec WHERE c/uid/value = 'c3'`).rows).toEqual([['2026-11-23T08:00:00Z']]);
    const untyped = observation(130);
    delete (untyped.data as { _type?: string })._type;
    const one = buildUniverse([ehr('ehr-1')], [composition('c7', 'ehr-1', 'Vital signs', [untyped])]);
    expect(new Evaluator(parseAql('SELECT COUNT(h) FROM OBSERVATION o CONTAINS HISTORY h'), {}, one).run().rows).toEqual([[1]]);
    // Answered whole, it says its type.
    expect(new Evaluator(parseAql('SELECT o/data FROM OBSERVATION o'), {}, one).run().rows[0][0]).toMatchObject({
      _type: 'HISTORY',
      archetype_node_id: 'at0001',
    });
  });

  it('answers a whole object as committed: every attribute, lists in their order, the implied _type added', () => {
    const committed = observation(150, 170);
    const { _type: _omitted, ...history } = committed.data;
    const one = buildUniverse([ehr('ehr-1')], [composition('c7', 'ehr-1', 'Vital signs', [{ ...committed, data: history }])]);
    const [[answered]] = new Evaluator(parseAql('SELECT o/data[at0001] FROM OBSERVATION o'), {}, one).run().rows;
    expect(answered).toStrictEqual(committed.data);
    expect(Object.keys(answered as object)[0]).toBe('_type');
    expect(new Evaluator(parseAql('SELECT e/name/value FROM HISTORY h CONTAINS EVENT e'), {}, one).run().rows).toEqual([['Any event'], ['Event 1']]);
  });

  it("FROM DATA_STRUCTURE finds HISTORY and item structures; FROM INSTRUCTION_DETAILS an ACTION's", () => {
    const one = buildUniverse([ehr('ehr-1')], [composition('c7', 'ehr-1', 'Vital signs', [observation(130, 140)])]);
    const types = new Evaluator(parseAql('SELECT d/_type FROM OBSERVATION o CONTAINS DATA_STRUCTURE d'), {}, one).run().rows;
    expect(types).toEqual([['HISTORY'], ['ITEM_TREE'], ['ITEM_TREE']]);
    const action = {
      _type: 'ACTION',
      archetype_node_id: 'openEHR-EHR-ACTION.medication.v1',
      name: { value: 'Medication management' },
      instruction_details: { instruction_id: { id: { value: 'c1' } }, activity_id: 'activities[at0001]' },
    };
    const withAction = buildUniverse([ehr('ehr-1')], [composition('c8', 'ehr-1', 'Medication', [action])]);
    expect(new Evaluator(parseAql('SELECT d/activity_id FROM ACTION a CONTAINS INSTRUCTION_DETAILS d'), {}, withAction).run().rows).toEqual([
      ['activities[at0001]'],
    ]);
  });

  it('LIKE patterns: ? one character, * any run, backslash escapes', () => {
    expect(likeRegex('2019-0?-*').test('2019-05-01T10:00')).toBe(true);
    expect(likeRegex('2019-0?-*').test('2019-10-01')).toBe(false);
    expect(likeRegex('what\\?').test('what?')).toBe(true);
    expect(likeRegex('what\\?').test('whatx')).toBe(false);
    expect(likeRegex('a.b').test('axb')).toBe(false);
    expect(likeRegex('back\\\\slash').test('back\\slash')).toBe(true);
  });

  it('LIKE: a backslash escapes only *, ? and itself, else 400, even where no row is tested', () => {
    expect(() => likeRegex('20\\%')).toThrow('Invalid LIKE pattern');
    expect(() => likeRegex('ends\\')).toThrow('Invalid LIKE pattern');
    expect(() => run("SELECT c/uid/value FROM COMPOSITION c WHERE c/uid/value = 'none' AND c/name/value LIKE $p", { p: '*\\_*' })).toThrow(
      'Invalid LIKE pattern',
    );
  });

  it('compares values of different types as EHRbase does: text < numbers < booleans; a data value only with its own kind', () => {
    expect(compareValues('2', 2)).toBeLessThan(0);
    expect(compareValues(10, 'abc')).toBeGreaterThan(0);
    expect(compareValues(3.5, false)).toBeLessThan(0);
    expect(compareValues('10.0', 10)).not.toBe(0);
    // A string parameter (URL parameters have no types) that reads as a number compares as one.
    expect(compareValues('10.0', 10, { numericText: true })).toBe(0);
    const count = { _type: 'DV_COUNT', magnitude: 10 };
    expect(compareValues(count, 10)).toBe(0);
    expect(compareValues(count, '10.0')).toBeUndefined();
    expect(compareValues(count, true)).toBeUndefined();
    expect(compareValues({ _type: 'DV_TEXT', value: 'a' }, 'a')).toBeUndefined();
    const time = { _type: 'DV_TIME', value: '04:05:06' };
    expect(compareValues(time, '04:06:06')).toBeLessThan(0);
    expect(compareValues(time, '2')).toBeUndefined();
    const dateTime = { _type: 'DV_DATE_TIME', value: '2026-03-03T04:05:06Z' };
    expect(compareValues(dateTime, '04:06:06')).toBeUndefined();
    expect(compareValues(dateTime, '2026-03-04')).toBeLessThan(0);
  });

  it('an at-code in FROM names a node of the archetype around it, not one of an archetype nested inside', () => {
    const withDevice = observation(150);
    const device = { _type: 'CLUSTER', archetype_node_id: 'openEHR-EHR-CLUSTER.device.v1', name: { value: 'Device' }, items: [element('at0004', 'Cuff', 12)] };
    (withDevice.data.events[0].data.items as unknown[]).push(device);
    const universe = buildUniverse([ehr('ehr-1')], [composition('c5', 'ehr-1', 'Vital signs', [withDevice])]);
    const magnitudes = (from: string) =>
      new Evaluator(parseAql(`SELECT x/value/magnitude ${from} ORDER BY x/value/magnitude`), {}, universe).run().rows.map((r) => r[0]);
    expect(magnitudes(`FROM OBSERVATION o CONTAINS ELEMENT x[at0004]`)).toEqual([150]);
    expect(magnitudes(`FROM CLUSTER d[openEHR-EHR-CLUSTER.device.v1] CONTAINS ELEMENT x[at0004]`)).toEqual([12]);
    // Outside any archetype (FROM EHR, or no scope) there is no archetype to read it in: every such node.
    expect(magnitudes(`FROM EHR e CONTAINS ELEMENT x[at0004]`)).toEqual([12, 150]);
  });

  it("answers an EHR's identifiers and creation time whole with their types", () => {
    const [[ehrId, systemId, created]] = run("SELECT e/ehr_id, e/system_id, e/time_created FROM EHR e WHERE e/ehr_id/value = 'ehr-1'").rows as Array<
      Array<Record<string, unknown>>
    >;
    expect([ehrId._type, systemId._type, created._type]).toEqual(['HIER_OBJECT_ID', 'HIER_OBJECT_ID', 'DV_DATE_TIME']);
  });

  it('WHERE and ORDER BY over a path whose values differ in type', () => {
    const mixed = (uid: string, value: unknown) =>
      composition(uid, 'ehr-1', 'Vital signs', [{ ...observation(120), name: { value: 'Blood pressure' }, feeder_audit: { mixed: value } }]);
    const universe = buildUniverse([ehr('ehr-1')], [mixed('m1', 'b'), mixed('m2', 7), mixed('m3', true), mixed('m4', '7'), mixed('m5', 2.5), mixed('m6', 'a')]);
    const select = (tail: string, params: Parameters = {}) =>
      new Evaluator(parseAql(`SELECT c/uid/value FROM COMPOSITION c CONTAINS OBSERVATION o ${tail}`), params, universe).run().rows.map((r) => r[0]);
    expect(select('ORDER BY o/feeder_audit/mixed ASC')).toEqual(['m4', 'm6', 'm1', 'm5', 'm2', 'm3']);
    expect(select('WHERE o/feeder_audit/mixed < 3 ORDER BY c/uid/value')).toEqual(['m1', 'm4', 'm5', 'm6']);
    expect(select('WHERE o/feeder_audit/mixed = 7')).toEqual(['m2']);
    expect(select("WHERE o/feeder_audit/mixed = '7'")).toEqual(['m4']);
    expect(select('WHERE o/feeder_audit/mixed > 7 ORDER BY c/uid/value')).toEqual(['m3']);
    expect(select('WHERE o/feeder_audit/mixed = $n ORDER BY c/uid/value', { n: '7' })).toEqual(['m2', 'm4']);
  });
});
