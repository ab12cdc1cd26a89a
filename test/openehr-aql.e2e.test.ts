import { startTestPlatform, backendName, type TestPlatform } from './harness';

/**
 * AQL 1.1 over canonical RM compositions of the demo OPTs (vital_signs.v1,
 * lab_result.v1), with queries of the kinds EHRbase's AQL conformance suites
 * run (META, LIMIT, ORDER_BY, FROM, WHERE, MIXED, AGGREGATE_FUNCTIONS,
 * VERSION, EXTERNAL: parameters given from outside the query). Queries and
 * expected answers are written here for this data, not vendored.
 */
const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const PULSE = 'openEHR-EHR-OBSERVATION.pulse.v2';
const LAB = 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1';
const ANALYTE = 'openEHR-EHR-CLUSTER.laboratory_test_analyte.v1';
const SYS = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude';
const DIA = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0005]/value/magnitude';
const RATE = 'p/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value/magnitude';
const VITALS_FROM = `FROM EHR e CONTAINS COMPOSITION c[openEHR-EHR-COMPOSITION.encounter.v1] CONTAINS OBSERVATION o[${BP}]`;

describe(`AQL 1.1 over RM compositions (${backendName})`, () => {
  let t: TestPlatform;
  const uids: Record<string, string> = {};
  const aql = async (q: string, query_parameters?: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q, query_parameters, ...extra } });
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${q}`);
    return res.body;
  };
  const rows = async (q: string, params?: Record<string, unknown>) => (await aql(q, params)).rows;

  beforeAll(async () => {
    t = await startTestPlatform();
    const vitals = (systolic: number, diastolic: number, at: string, rate?: number) => ({
      blood_pressure: { systolic: { magnitude: systolic, unit: 'mm[Hg]' }, diastolic: { magnitude: diastolic, unit: 'mm[Hg]' } },
      ...(rate ? { pulse: { rate: { magnitude: rate, unit: '/min' } } } : {}),
      recorded_at: at,
    });
    const lab = (status: string, at: string, results: Array<[string, number, string]>) => ({
      lab_result: {
        test_name: { code: '2345-7', value: 'Glucose' },
        status: { code: status },
        specimen_collected_at: at,
        results: results.map(([analyte, magnitude, unit]) => ({ analyte, value: { magnitude, unit } })),
      },
    });
    const post = async (name: string, ehr: string, template: string, content: unknown) => {
      const res = await t.request('POST', `/openehr/v1/ehr/${ehr}/composition`, {
        body: { _type: 'COMPOSITION', archetype_details: { template_id: { value: template } }, content },
        headers: { prefer: 'return=representation' },
      });
      expect(res.status).toBe(201);
      uids[name] = res.body.uid.value;
    };
    await post('a', 'ehr-p-1001', 'vital_signs.v1', vitals(162, 95, '2026-11-20T08:00:00Z', 88));
    await post('b', 'ehr-p-1001', 'vital_signs.v1', vitals(121, 80, '2026-11-21T08:00:00Z'));
    await post('c', 'ehr-p-1002', 'vital_signs.v1', vitals(148, 90, '2026-11-19T08:00:00Z', 64));
    await post('l1', 'ehr-p-1001', 'lab_result.v1', lab('final', '2026-11-22T08:00:00Z', [['Glucose', 5.4, 'mmol/L']]));
    await post(
      'l2',
      'ehr-p-1002',
      'lab_result.v1',
      lab('preliminary', '2026-11-18T08:00:00Z', [
        ['Glucose', 7.9, 'mmol/L'],
        ['Sodium', 140, 'mmol/L'],
      ]),
    );
  });
  afterAll(() => t?.stop());

  describe('META', () => {
    it('[EHR-011] answers a RESULTSET with meta, q, columns (#n when unaliased) and rows', async () => {
      const q = `SELECT c/uid/value, ${SYS} AS systolic ${VITALS_FROM} WHERE ${SYS} > 150`;
      const res = await t.request('GET', `/openehr/v1/query/aql?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        meta: {
          _href: `${t.url}/openehr/v1/query/aql?q=${encodeURIComponent(q)}`,
          _type: 'RESULTSET',
          _schema_version: '1.0.3',
          _created: expect.any(String),
          _generator: expect.stringMatching(/^CareGraph/),
          _executed_aql: q,
          resultsize: 1,
          offset: 0,
        },
        q,
        columns: [
          { name: '#0', path: 'c/uid/value' },
          { name: 'systolic', path: SYS },
        ],
        rows: [[uids.a, 162]],
      });
      expect(Date.now() - Date.parse(res.body.meta._created)).toBeLessThan(60_000);
    });

    it('[LOG-001] logs access for the compositions the answer used, not every candidate', async () => {
      const reader = await t.token({ roles: ['clinician'], sub: 'aql-reader' });
      const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q: `SELECT c/uid/value ${VITALS_FROM} WHERE ${SYS} > 150` }, token: reader });
      expect(res.body.rows).toEqual([[uids.a]]);
      const mine = [];
      for (const patient of ['p-1001', 'p-1002']) {
        const log = await t.graphql(`{ accessLog(patientId: "${patient}", limit: 100) { data { actor action entityType entityId } } }`);
        expect(log.body.errors).toBeUndefined();
        mine.push(...log.body.data.accessLog.data.filter((e: { actor: string }) => e.actor === 'aql-reader'));
      }
      expect(mine).toEqual([{ actor: 'aql-reader', action: 'list', entityType: 'Composition', entityId: uids.a }]);
    });
  });

  describe('LIMIT', () => {
    const q = `SELECT ${SYS} AS s ${VITALS_FROM} ORDER BY s DESC`;
    it('LIMIT, LIMIT OFFSET, TOP, and the API offset/fetch', async () => {
      expect(await rows(`${q} LIMIT 2`)).toEqual([[162], [148]]);
      expect(await rows(`${q} LIMIT 2 OFFSET 1`)).toEqual([[148], [121]]);
      expect(await rows(`${q} LIMIT 1 OFFSET 5`)).toEqual([]);
      expect(await rows(q.replace('SELECT', 'SELECT TOP 1'))).toEqual([[162]]);
      const paged = await aql(q, undefined, { offset: 1, fetch: 1 });
      expect(paged.rows).toEqual([[148]]);
      expect(paged.meta).toMatchObject({ resultsize: 1, offset: 1, fetch: 1 });
    });
  });

  describe('ORDER_BY', () => {
    it('orders by paths, aliases, several keys, ascending and descending, dates in time order', async () => {
      expect(await rows(`SELECT ${SYS} ${VITALS_FROM} ORDER BY ${SYS}`)).toEqual([[121], [148], [162]]);
      expect(await rows(`SELECT c/context/start_time/value AS t ${VITALS_FROM} ORDER BY t DESC`)).toEqual([
        ['2026-11-21T08:00:00Z'],
        ['2026-11-20T08:00:00Z'],
        ['2026-11-19T08:00:00Z'],
      ]);
      expect(await rows(`SELECT e/ehr_id/value, ${SYS} ${VITALS_FROM} ORDER BY e/ehr_id/value DESC, ${SYS} ASC`)).toEqual([
        ['ehr-p-1002', 148],
        ['ehr-p-1001', 121],
        ['ehr-p-1001', 162],
      ]);
    });
  });

  describe('FROM', () => {
    it('EHR with an ehr_id predicate, composition by archetype or template id, entries without a composition', async () => {
      expect(await rows(`SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr_id] CONTAINS COMPOSITION c ORDER BY c/uid/value`, { ehr_id: 'ehr-p-1002' })).toEqual(
        [[uids.c], [uids.l2]].sort(),
      );
      expect(await rows(`SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c[lab_result.v1] ORDER BY c/uid/value`)).toEqual([[uids.l1], [uids.l2]].sort());
      expect(await rows(`SELECT COUNT(*) FROM COMPOSITION c[openEHR-EHR-COMPOSITION.report-result.v1]`)).toEqual([[2]]);
      expect(await rows(`SELECT ${SYS} FROM OBSERVATION o[${BP}] ORDER BY ${SYS}`)).toEqual([[121], [148], [162]]);
      expect(await rows(`SELECT x/items[at0024]/value/value FROM CLUSTER x[${ANALYTE}] ORDER BY x/items[at0024]/value/value`)).toEqual([
        ['Glucose'],
        ['Glucose'],
        ['Sodium'],
      ]);
    });

    it('CONTAINS with AND, OR, NOT CONTAINS and parentheses', async () => {
      const both = `SELECT c/uid/value, ${SYS}, ${RATE} FROM EHR e CONTAINS COMPOSITION c CONTAINS (OBSERVATION o[${BP}] AND OBSERVATION p[${PULSE}]) ORDER BY ${SYS}`;
      expect(await rows(both)).toEqual([
        [uids.c, 148, 64],
        [uids.a, 162, 88],
      ]);
      const either = `SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c CONTAINS (OBSERVATION p[${PULSE}] OR OBSERVATION l[${LAB}]) ORDER BY c/uid/value`;
      expect(await rows(either)).toEqual([[uids.a], [uids.c], [uids.l1], [uids.l2]].sort());
      // OR rows as EHRbase forms them: the operands side by side, NULL for one a composition lacks.
      const sideBySide = `SELECT c/uid/value, ${SYS}, ${RATE} FROM EHR e CONTAINS COMPOSITION c CONTAINS (OBSERVATION o[${BP}] OR OBSERVATION p[${PULSE}]) ORDER BY ${SYS}`;
      expect(await rows(sideBySide)).toEqual([
        [uids.b, 121, null],
        [uids.c, 148, 64],
        [uids.a, 162, 88],
      ]);
      // Below the EHR, the branches pair across its compositions (of different templates).
      for (const op of ['OR', 'AND'])
        expect(
          await rows(
            `SELECT ${SYS}, l/archetype_node_id FROM EHR e[ehr_id/value='ehr-p-1001'] CONTAINS (OBSERVATION o[${BP}] ${op} OBSERVATION l[${LAB}]) ORDER BY ${SYS}`,
          ),
        ).toEqual([
          [121, LAB],
          [162, LAB],
        ]);
      const without = `SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c[vital_signs.v1] NOT CONTAINS OBSERVATION p[${PULSE}]`;
      expect(await rows(without)).toEqual([[uids.b]]);
      const nested = `SELECT COUNT(x) FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION l[${LAB}] CONTAINS CLUSTER x[${ANALYTE}]`;
      expect(await rows(nested)).toEqual([[3]]);
    });

    it('EHR and EHR_STATUS', async () => {
      expect(
        await rows('SELECT e/ehr_id/value, s/subject/external_ref/id/value, s/is_queryable FROM EHR e[ehr_id/value=$e] CONTAINS EHR_STATUS s', {
          e: 'ehr-p-1002',
        }),
      ).toEqual([['ehr-p-1002', 'p-1002', true]]);
      expect(await rows('SELECT DISTINCT e/ehr_id/value FROM EHR e CONTAINS COMPOSITION c ORDER BY e/ehr_id/value')).toEqual([['ehr-p-1001'], ['ehr-p-1002']]);
    });

    it('FROM EHR and FROM EHR_STATUS see EHRs without compositions, queryable ones only, the caller own for a patient', async () => {
      const empty = (await t.request('POST', '/openehr/v1/ehr', { headers: { prefer: 'return=representation' } })).body.ehr_id.value as string;
      const hidden = (await t.request('POST', '/openehr/v1/ehr', { headers: { prefer: 'return=representation' } })).body.ehr_id.value as string;
      const status = await t.request('GET', `/openehr/v1/ehr/${hidden}/ehr_status`);
      const hide = await t.request('PUT', `/openehr/v1/ehr/${hidden}/ehr_status`, {
        body: { ...status.body, is_queryable: false },
        headers: { 'if-match': `"${status.body.uid.value}"` },
      });
      expect(hide.status).toBe(204);
      const ehrs = (await rows('SELECT e/ehr_id/value FROM EHR e')).map(([id]: [string]) => id);
      // The demo's EHRs (two of them without compositions) and the new one; not the one hidden from queries.
      expect([...ehrs].sort()).toEqual(['ehr-p-1001', 'ehr-p-1002', 'ehr-p-1003', empty].sort());
      expect(await rows('SELECT s/is_queryable FROM EHR_STATUS s')).toEqual(ehrs.map(() => [true]));
      expect(await rows(`SELECT e/ehr_id/value FROM EHR e NOT CONTAINS COMPOSITION c ORDER BY e/ehr_id/value`)).toEqual([['ehr-p-1003'], [empty]].sort());
      const patient = await t.token({ roles: ['patient'], patientId: 'p-1003', sub: 'p3' });
      const own = await t.request('POST', '/openehr/v1/query/aql', { body: { q: 'SELECT e/ehr_id/value FROM EHR e' }, token: patient });
      expect(own.status).toBe(200);
      expect(own.body.rows).toEqual([['ehr-p-1003']]);
    });
  });

  describe('WHERE', () => {
    it('comparisons, AND/OR/NOT, parameters, dates', async () => {
      const q = (where: string, params?: Record<string, unknown>) => rows(`SELECT c/uid/value ${VITALS_FROM} WHERE ${where} ORDER BY c/uid/value`, params);
      expect(await q(`${SYS} >= 148 AND ${DIA} < 95`)).toEqual([[uids.c]]);
      expect(await q(`${SYS} < $low OR ${SYS} > $high`, { low: 130, high: 160 })).toEqual([[uids.a], [uids.b]].sort());
      expect(await q(`NOT (${SYS} > 130)`)).toEqual([[uids.b]]);
      expect(await q(`c/context/start_time/value > '2026-11-20T12:00:00Z'`)).toEqual([[uids.b]]);
      expect(await q(`o/data[at0001]/events[at0006]/time/value <= '2026-11-19'`)).toEqual([]);
      expect(await q(`e/ehr_id/value != 'ehr-p-1001'`)).toEqual([[uids.c]]);
    });

    it('LIKE, MATCHES, EXISTS, NULL and functions', async () => {
      const q = (where: string) => rows(`SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c WHERE ${where} ORDER BY c/uid/value`);
      expect(await q(`c/name/value LIKE 'Lab*'`)).toEqual([[uids.l1], [uids.l2]].sort());
      expect(await q(`c/name/value LIKE 'Vital?signs'`)).toEqual([[uids.a], [uids.b], [uids.c]].sort());
      expect(await q(`c/archetype_details/template_id/value MATCHES {'lab_result.v1', 'none.v1'}`)).toEqual([[uids.l1], [uids.l2]].sort());
      expect(await q(`EXISTS c/content[${PULSE}]`)).toEqual([[uids.a], [uids.c]].sort());
      expect(await q(`NOT EXISTS c/content[${PULSE}] AND c/archetype_details/template_id/value = 'vital_signs.v1'`)).toEqual([[uids.b]]);
      expect(await q(`c/content[${PULSE}] = NULL AND c/name/value = 'Vital signs'`)).toEqual([[uids.b]]);
      expect(await q(`LENGTH(c/name/value) = 11`)).toEqual([[uids.a], [uids.b], [uids.c]].sort());
      expect(await q(`c/context/start_time/value < CURRENT_DATE_TIME() AND c/context/start_time/value < '2026-11-19T00:00:00Z'`)).toEqual([[uids.l2]]);
    });
  });

  describe('MIXED', () => {
    it('whole RM objects, DISTINCT, string functions and primitives as columns', async () => {
      const [[composition, observation]] = await rows(`SELECT c, o ${VITALS_FROM} WHERE ${SYS} = 148`);
      expect(composition).toMatchObject({ _type: 'COMPOSITION', uid: { value: uids.c }, archetype_details: { template_id: { value: 'vital_signs.v1' } } });
      expect(observation).toMatchObject({ _type: 'OBSERVATION', archetype_node_id: BP, name: { value: 'Blood pressure' } });
      expect(await rows(`SELECT DISTINCT c/name/value FROM EHR e CONTAINS COMPOSITION c ORDER BY c/name/value`)).toEqual([
        ['Laboratory result'],
        ['Vital signs'],
      ]);
      expect(
        await rows(
          `SELECT CONCAT(e/ehr_id/value, ':', c/name/value), SUBSTRING(c/name/value, 1, 5), POSITION('signs', c/name/value), CONTAINS(c/name/value, 'tal'), 7 FROM EHR e[ehr_id/value='ehr-p-1002'] CONTAINS COMPOSITION c[vital_signs.v1]`,
        ),
      ).toEqual([['ehr-p-1002:Vital signs', 'Vital', 7, true, 7]]);
      // CareGraph's flat paths keep answering beside the RM paths.
      expect(await rows(`SELECT o/systolic/magnitude, c/content/blood_pressure/diastolic/magnitude ${VITALS_FROM} WHERE ${SYS} = 148`)).toEqual([[148, 90]]);
    });
  });

  describe('AGGREGATE_FUNCTIONS', () => {
    it('COUNT, COUNT(DISTINCT), MIN, MAX, AVG, SUM, grouped by the other columns', async () => {
      expect(await rows(`SELECT COUNT(*), COUNT(DISTINCT e/ehr_id/value), MIN(${SYS}), MAX(${SYS}), AVG(${SYS}), SUM(${DIA}) ${VITALS_FROM}`)).toEqual([
        [3, 2, 121, 162, (162 + 121 + 148) / 3, 95 + 80 + 90],
      ]);
      expect(await rows(`SELECT e/ehr_id/value, COUNT(*) AS n, MAX(c/context/start_time/value) ${VITALS_FROM} ORDER BY n DESC`)).toEqual([
        ['ehr-p-1001', 2, '2026-11-21T08:00:00Z'],
        ['ehr-p-1002', 1, '2026-11-19T08:00:00Z'],
      ]);
      expect(await rows(`SELECT COUNT(*), MAX(${SYS}) ${VITALS_FROM} WHERE ${SYS} > 500`)).toEqual([[0, null]]);
    });
  });

  describe('VERSION', () => {
    it('VERSION[LATEST_VERSION] CONTAINS COMPOSITION: version uid, commit audit', async () => {
      const res = await rows(
        `SELECT v/uid/value, v/commit_audit/change_type/value, v/commit_audit/time_committed/value, c/uid/value FROM EHR e[ehr_id/value='ehr-p-1002'] CONTAINS VERSION v[LATEST_VERSION] CONTAINS COMPOSITION c[vital_signs.v1]`,
      );
      expect(res).toEqual([[uids.c, 'creation', expect.any(String), uids.c]]);
      expect(Date.now() - Date.parse(res[0][2])).toBeLessThan(10 * 60_000);
      expect(await rows('SELECT COUNT(v) FROM VERSION v CONTAINS COMPOSITION c')).toEqual([[5]]);
    });
  });

  describe('EXTERNAL', () => {
    it('parameters from query_parameters and URL parameters, in predicates and WHERE', async () => {
      const q =
        'SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c[$template] CONTAINS OBSERVATION o[$archetype] WHERE o/name/value = $name';
      const params = { ehr: 'ehr-p-1001', template: 'lab_result.v1', archetype: LAB, name: 'Laboratory test result' };
      expect(await rows(q, params)).toEqual([[uids.l1]]);
      const res = await t.request('GET', `/openehr/v1/query/aql?q=${encodeURIComponent(q)}&${new URLSearchParams(params).toString()}`);
      expect(res.body.rows).toEqual([[uids.l1]]);
    });
  });

  describe('errors', () => {
    it('[EHR-011] answers 400 with line and column for a syntax error, 400 naming what is not supported', async () => {
      const syntax = await t.request('POST', '/openehr/v1/query/aql', { body: { q: 'SELECT c\nFROM COMPOSITION c\nWHERE c/x =' } });
      expect(syntax.status).toBe(400);
      expect(syntax.body).toMatchObject({ message: expect.stringContaining('line 3, column 12'), error: { code: 'VALIDATION_ERROR' } });
      const person = await t.request('POST', '/openehr/v1/query/aql', { body: { q: 'SELECT p FROM EHR e CONTAINS PERSON p' } });
      expect(person.status).toBe(400);
      expect(person.body.message).toContain('FROM PERSON is not supported');
    });
  });
});
