import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { compositionDecrypts, loadCompositions } from './support/clinical-load';

/**
 * AQL the clinical index answers completely runs as one SQL statement
 * (aql/compile-sql.ts) and decrypts nothing; each query here is also run with
 * a condition only the in-memory evaluator takes (`NOT EXISTS c/feeder_audit`,
 * true of every composition loaded), and both answers must be the same,
 * rows and order. A query whose SELECT, ORDER BY or aggregate reads a path the
 * templates let repeat (an event) answers a row per instance, paired by the
 * index rows' positions; what the SQL path cannot pair (an event's time beside
 * its values) it declines (`declines`).
 */
// 300 compositions: every case below still has rows (TOP and LIMIT cut), and each in-memory run decrypts them all.
const PATIENTS = 30;
const PER_PATIENT = 10;
const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const PULSE = 'openEHR-EHR-OBSERVATION.pulse.v2';
const SYS = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude';
const DIA = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0005]/value/magnitude';
const UNITS = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/units';
const TIME = 'o/data[at0001]/events[at0006]/time/value';
/** An optional element of each event that the loaded compositions leave out. */
const STATE = 'o/data[at0001]/events[at0006]/state[at0007]/items[at0008]/value/defining_code/code_string';
const RATE = 'p/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value/magnitude';
const VITALS = `FROM EHR e CONTAINS COMPOSITION c[vital_signs.v1] CONTAINS OBSERVATION o[${BP}]`;
const PULSES = `FROM COMPOSITION c CONTAINS OBSERVATION p[${PULSE}]`;
/** A lab result's test, coded (LOINC). */
const LAB_CODE = 'l/data[at0001]/events[at0002]/data[at0003]/items[at0005]/value/defining_code/code_string';
const LABS = 'FROM EHR e CONTAINS COMPOSITION c[lab_result.v1] CONTAINS OBSERVATION l[openEHR-EHR-OBSERVATION.laboratory_test_result.v1]';
const IN_MEMORY_ONLY = 'NOT EXISTS c/feeder_audit';

interface Case {
  select: string;
  where?: string;
  tail?: string;
  params?: Record<string, unknown>;
  /** Runs in memory: repeated values the SQL path cannot pair (an event's time beside them). */
  declines?: boolean;
  /** The rows, where the case checks them. */
  rows?: unknown[][];
}
/** Systolic pressures of the first three of the four blood pressure events of one composition (above anything loaded). */
const REPEATED = [211, 212, 213];
/** Its diastolic pressures, event by event; the fourth event's systolic is a null flavour. */
const DIASTOLIC = [101, 102, 103, 104];

describe(`AQL in SQL answers as the in-memory evaluator, decrypting nothing (${backendName})`, () => {
  let t: TestPlatform;
  const now = new Date();
  const since = new Date(now.getTime() - 30 * 86_400_000).toISOString();
  let ehrs: string[];
  /** The composition with the repeated events. */
  let repeatedUid: string;

  const run = async (q: string, params?: Record<string, unknown>) => {
    const before = await compositionDecrypts(t);
    const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q, query_parameters: params } });
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)} for ${q}`);
    return { rows: res.body.rows as unknown[][], decrypted: (await compositionDecrypts(t)) - before };
  };

  beforeAll(async () => {
    t = await startTestPlatform();
    await loadCompositions(t, { patients: PATIENTS, perPatient: PER_PATIENT, now, days: 365 });
    ehrs = (await run(`SELECT DISTINCT e/ehr_id/value ${VITALS} ORDER BY e/ehr_id/value LIMIT 3`)).rows.map((r) => r[0] as string);
    // One more vital-signs composition, with three blood pressure events: a copy of a loaded one, its event repeated.
    const [[uid]] = (await run(`SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c[vital_signs.v1] LIMIT 1`, { ehr: ehrs[0] })).rows;
    const loaded = await t.request('GET', `/openehr/v1/ehr/${ehrs[0]}/composition/${encodeURIComponent(uid as string)}`);
    const { uid: _uid, ...composition } = loaded.body;
    const bp = composition.content.find((entry: { archetype_node_id: string }) => entry.archetype_node_id === BP);
    const [first] = bp.data.events;
    bp.data.events = DIASTOLIC.map((diastolic, i) => {
      const copy = structuredClone(first);
      const item = (id: string) => copy.data.items.find((element: { archetype_node_id: string }) => element.archetype_node_id === id);
      item('at0005').value.magnitude = diastolic;
      const systolic = item('at0004');
      if (i < REPEATED.length) systolic.value.magnitude = REPEATED[i];
      else {
        delete systolic.value;
        systolic.null_flavour = { _type: 'DV_CODED_TEXT', value: 'unknown', defining_code: { terminology_id: { value: 'openehr' }, code_string: '253' } };
      }
      return copy;
    });
    const posted = await t.request('POST', `/openehr/v1/ehr/${ehrs[0]}/composition`, { body: composition, headers: { prefer: 'return=representation' } });
    if (posted.status !== 201) throw new Error(`${posted.status} ${posted.text}`);
    repeatedUid = posted.body.uid.value;
  });
  afterAll(async () => {
    await t?.stop();
  });

  const cases: Record<string, () => Case> = {
    'population COUNT: systolic > 140 in the last 30 days': () => ({ select: 'COUNT(*)', where: `${SYS} > 140 AND ${TIME} > $since`, params: { since } }),
    'values, ORDER BY two keys': () => ({
      select: `e/ehr_id/value, c/uid/value, ${SYS}, ${DIA}`,
      where: `${SYS} >= 170`,
      tail: `ORDER BY ${SYS} DESC, c/uid/value`,
    }),
    'one EHR by WHERE, ORDER BY an alias': () => ({
      select: `${SYS} AS s`,
      where: 'e/ehr_id/value = $ehr',
      tail: 'ORDER BY s',
      params: { ehr: ehrs[1] },
    }),
    'aggregates MIN/MAX/AVG/SUM/COUNT DISTINCT': () => ({
      select: `MIN(${SYS}), MAX(${SYS}), AVG(${DIA}), SUM(${DIA}), COUNT(DISTINCT e/ehr_id/value), COUNT(${DIA})`,
      where: `${SYS} > 150`,
    }),
    'aggregates over nothing': () => ({ select: `COUNT(*), MIN(${SYS}), AVG(${SYS})`, where: `NOT (${SYS} < 500)` }),
    'DISTINCT units': () => ({ select: `DISTINCT ${UNITS}` }),
    'DISTINCT, NOT, ORDER BY': () => ({ select: 'DISTINCT e/ehr_id/value', where: `NOT (${SYS} < 175)`, tail: 'ORDER BY e/ehr_id/value DESC' }),
    MATCHES: () => ({ select: 'COUNT(*), SUM(' + SYS + ')', where: `${SYS} MATCHES {120, 130, 140.0}` }),
    'LIKE, LIMIT/OFFSET': () => ({ select: 'c/uid/value', where: `${UNITS} LIKE 'mm?Hg*' AND ${DIA} > 95`, tail: 'ORDER BY c/uid/value LIMIT 5 OFFSET 2' }),
    'TOP BACKWARD over ties (binding order)': () => ({ select: `TOP 7 BACKWARD c/uid/value, ${SYS}`, tail: `ORDER BY ${SYS}` }),
    'no ORDER BY: binding order, TOP': () => ({ select: `TOP 15 c/uid/value, ${SYS}`, where: `${SYS} > 170` }),
    'OR, AND, template id, != and NULL': () => ({
      select: 'COUNT(*)',
      where: `(${SYS} > 175 OR ${DIA} < 62) AND c/archetype_details/template_id/value = 'vital_signs.v1' AND ${DIA} != NULL AND ${SYS} != 160`,
    }),
    'EXISTS and = NULL': () => ({ select: 'COUNT(*)', where: `EXISTS ${SYS} AND NOT (${UNITS} = NULL)` }),
    'pulse without EHR, time window': () => ({
      select: `COUNT(*), AVG(${RATE}), MAX(${RATE})`,
      where: `p/data[at0002]/events[at0003]/time/value > $since AND p/data[at0002]/events[at0003]/time/value <= $until`,
      params: { since, until: now.toISOString() },
    }),
    'EHR predicate, parameter': () => ({
      select: `c/uid/value, ${SYS}`,
      where: `${SYS} > $threshold`,
      tail: 'ORDER BY c/uid/value',
      params: { threshold: 120 },
      from: `FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}]`,
    }),
    'compositions only, MATCHES on EHR ids': () => ({
      select: 'COUNT(*), COUNT(DISTINCT c/uid/value)',
      where: 'e/ehr_id/value MATCHES {$a, $b}',
      params: { a: ehrs[0], b: ehrs[2] },
    }),
    "the benchmark's population COUNT (composition start time)": () => ({
      select: 'COUNT(*)',
      where: `${SYS} > 140 AND c/context/start_time/value > $since`,
      params: { since },
      from: `FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}]`,
    }),
    'composition category, ORDER BY its start time': () => ({
      select: 'c/uid/value',
      where: "c/category/defining_code/code_string = '433'",
      tail: 'ORDER BY c/context/start_time/value DESC, c/uid/value LIMIT 20',
    }),
    'a row per repeated event': () => ({
      select: `${SYS}, ${UNITS}`,
      where: `${SYS} > 210`,
      tail: `ORDER BY ${SYS} DESC`,
      rows: REPEATED.map((systolic) => [systolic, 'mm[Hg]']).reverse(),
    }),
    'aggregates over every event': () => ({ select: `COUNT(${SYS}), MAX(${SYS}), MIN(${SYS})`, where: `${SYS} > 210`, rows: [[3, 213, 211]] }),
    'COUNT(*) with WHERE on a repeated event counts compositions, in SQL': () => ({ select: 'COUNT(*)', where: `${SYS} > 210`, rows: [[1]] }),
    'COUNT(*) over nothing, in SQL': () => ({ select: 'COUNT(*)', where: `NOT (${SYS} < 500)`, rows: [[0]] }),
    'ORDER BY then LIMIT over ties': () => ({ select: `c/uid/value, ${RATE}`, tail: `ORDER BY ${RATE} DESC LIMIT 12` }),
    "values of one event pair up; a null flavour's is NULL": () => ({
      select: `${SYS}, ${DIA}`,
      where: 'c/uid/value = $uid',
      params: { uid: repeatedUid },
      rows: [...REPEATED.map((systolic, i) => [systolic, DIASTOLIC[i]]), [null, DIASTOLIC[3]]],
    }),
    "WHERE tests the row's own event": () => ({
      select: DIA,
      where: `${SYS} > 211 AND c/uid/value = $uid`,
      params: { uid: repeatedUid },
      rows: [[102], [103]],
    }),
    "NOT tests the row's own event, and holds where it has no value": () => ({
      select: `${DIA}, ${UNITS}`,
      where: `NOT (${SYS} > 211) AND c/uid/value = $uid`,
      params: { uid: repeatedUid },
      rows: [
        [101, 'mm[Hg]'],
        [104, null],
      ],
    }),
    'an element no event holds: a row of NULLs per binding': () => ({
      select: `c/uid/value, ${STATE}`,
      tail: 'ORDER BY c/uid/value LIMIT 30',
    }),
    'aggregates over every event of every composition': () => ({ select: `COUNT(*), COUNT(${SYS}), AVG(${DIA}), MAX(${DIA}), MIN(${SYS})` }),
    'population COUNT of one lab test, by its code': () => ({
      select: 'COUNT(*), COUNT(DISTINCT e/ehr_id/value)',
      where: `${LAB_CODE} = '4548-4'`,
      from: LABS,
      rows: [[24, 21]],
    }),
    'population COUNT of one lab test in the last 180 days (composition start time)': () => ({
      select: 'COUNT(*), COUNT(DISTINCT e/ehr_id/value)',
      where: `${LAB_CODE} = '2345-7' AND c/context/start_time/value > $since`,
      params: { since: new Date(now.getTime() - 180 * 86_400_000).toISOString() },
      from: LABS,
      rows: [[10, 9]],
    }),
    'lab tests by MATCHES and LIKE on their codes': () => ({
      select: 'COUNT(*)',
      where: `${LAB_CODE} MATCHES {'2345-7', '2160-0'} AND NOT (${LAB_CODE} LIKE '2160*')`,
      from: LABS,
      rows: [[20]],
    }),
    "an event's time beside its values runs in memory": () => ({ select: `c/uid/value, ${SYS}`, declines: true, tail: `ORDER BY ${TIME} DESC LIMIT 10` }),
  };
  const fromOf: Record<string, string> = {
    'pulse without EHR, time window': PULSES,
    'ORDER BY then LIMIT over ties': PULSES,
    'compositions only, MATCHES on EHR ids': 'FROM EHR e CONTAINS COMPOSITION c[vital_signs.v1]',
  };

  it.each(Object.keys(cases))('%s', async (name) => {
    const c = cases[name]() as Case & { from?: string };
    const params = { ehr: ehrs[0], ...c.params };
    const from = c.from ?? fromOf[name] ?? VITALS;
    const text = (where: string | undefined) => `SELECT ${c.select} ${from}${where ? ` WHERE ${where}` : ''} ${c.tail ?? ''}`;
    const sql = await run(text(c.where), params);
    const memory = await run(text(c.where ? `(${c.where}) AND ${IN_MEMORY_ONLY}` : IN_MEMORY_ONLY), params);
    if (c.declines) expect(sql.decrypted).toBeGreaterThan(0);
    else expect(sql.decrypted).toBe(0);
    expect(memory.decrypted).toBeGreaterThan(0);
    expect(sql.rows).toEqual(memory.rows);
    expect(sql.rows.length).toBeGreaterThan(0);
    if (c.rows) expect(sql.rows).toEqual(c.rows);
  });

  describe('the access log of an aggregate', () => {
    const POPULATION = `SELECT COUNT(*), COUNT(DISTINCT e/ehr_id/value) ${VITALS} WHERE ${SYS} > 140`;
    const logged = async (actor: string) =>
      (
        await t.platform.db!.query<{ action: string; entityType: string; entityId: string; patientId: string | null; detail: unknown }>(
          `SELECT action, "entityType", "entityId", "patientId", detail FROM ehr."AccessLog" WHERE actor = $1`,
          [actor],
        )
      ).rows;
    const ask = async (sub: string, q: string, params?: Record<string, unknown>) => {
      const token = await t.token({ roles: ['clinician'], sub });
      const before = await compositionDecrypts(t);
      const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q, query_parameters: params }, token });
      expect(res.status).toBe(200);
      return { rows: res.body.rows as number[][], decrypted: (await compositionDecrypts(t)) - before };
    };

    it('[LOG-005] logs a population statistic once, for its query, naming no patient (in SQL and in memory)', async () => {
      for (const [sub, q] of [
        ['population-sql', POPULATION],
        ['population-memory', `${POPULATION} AND ${IN_MEMORY_ONLY}`],
      ]) {
        const answer = await ask(sub, q);
        expect(answer.decrypted === 0).toBe(sub === 'population-sql');
        const [[compositions, patients]] = answer.rows;
        expect(patients).toBeGreaterThanOrEqual(10);
        expect(await logged(sub)).toEqual([
          {
            action: 'query',
            entityType: 'AqlQuery',
            entityId: expect.stringMatching(/^[0-9a-f]{64}$/),
            patientId: null,
            detail: { language: 'AQL', query: q, parameters: {}, patients, compositions },
          },
        ]);
      }
    });

    it('[LOG-005] logs each composition of an aggregate over fewer than 10 patients, however WHERE picks them', async () => {
      // Naming the EHRs in a MATCHES, not as the query's EHR: the answer still tells about two patients.
      const q = `SELECT COUNT(*) ${VITALS} WHERE e/ehr_id/value MATCHES {$a, $b} AND ${SYS} > 100`;
      for (const [sub, text] of [
        ['few-sql', q],
        ['few-memory', `${q} AND ${IN_MEMORY_ONLY}`],
      ]) {
        const answer = await ask(sub, text, { a: ehrs[0], b: ehrs[2] });
        expect(answer.decrypted === 0).toBe(sub === 'few-sql');
        const entries = await logged(sub);
        expect(entries).toHaveLength(answer.rows[0][0]);
        expect(entries.every((e) => e.action === 'list' && e.entityType === 'Composition' && e.patientId !== null)).toBe(true);
        expect(new Set(entries.map((e) => e.patientId)).size).toBe(2);
      }
    });

    it('shows the population statistics to admins, and to no one else', async () => {
      const query = '{ populationQueries(limit: 100) { data { actor query parameters patients compositions } pagination { total } } }';
      const admin = await t.graphql(query);
      expect(admin.body.errors).toBeUndefined();
      const mine = admin.body.data.populationQueries.data.filter((e: { actor: string }) => e.actor === 'population-sql');
      expect(mine).toEqual([{ actor: 'population-sql', query: POPULATION, parameters: {}, patients: expect.any(Number), compositions: expect.any(Number) }]);
      const clinician = await t.graphql(query, undefined, { token: await t.token({ roles: ['clinician'] }) });
      expect(clinician.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    });
  });

  describe('a population COUNT summed from the kept counts of values', () => {
    const day = 86_400_000;
    // Windows that cut through days at both ends, so whole days come from the counts and the rest from the rows.
    const from = new Date(now.getTime() - 200 * day - 5 * 3_600_000).toISOString();
    const until = new Date(now.getTime() - 3 * day + 7 * 3_600_000).toISOString();
    const KEPT: Array<[string, string, Record<string, unknown>]> = [
      ['systolic > 140 in a window from a time of day', `${SYS} > 140 AND c/context/start_time/value > $from`, { from }],
      [
        'systolic >= 150 in a window closed at both ends',
        `${SYS} >= 150 AND c/context/start_time/value >= $from AND c/context/start_time/value < $until`,
        { from, until },
      ],
      ['diastolic < 70 before a time, literal flipped', `70 > ${DIA} AND c/context/start_time/value <= $until`, { until }],
      ['systolic <= 120 at any time', `${SYS} <= 120`, {}],
    ];
    const logged = async (actor: string) =>
      (
        await t.platform.db!.query<{ detail: Record<string, unknown> | null; action: string }>(`SELECT action, detail FROM ehr."AccessLog" WHERE actor = $1`, [
          actor,
        ])
      ).rows;

    it.each(KEPT)('answers %s as the in-memory evaluator, logged with a lower bound of its patients', async (name, where, params) => {
      const q = `SELECT COUNT(*), COUNT(*) AS again ${VITALS} WHERE ${where}`;
      const patients = await run(`SELECT COUNT(DISTINCT e/ehr_id/value) ${VITALS} WHERE ${where} AND ${IN_MEMORY_ONLY}`, params);
      // A population, or the kept counts do not apply (checked below).
      expect(patients.rows[0][0]).toBeGreaterThanOrEqual(10);
      const sub = `kept-${name}`;
      const token = await t.token({ roles: ['clinician'], sub });
      const before = await compositionDecrypts(t);
      const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q, query_parameters: params }, token });
      expect(res.status).toBe(200);
      expect((await compositionDecrypts(t)) - before).toBe(0);
      const memory = await run(`${q} AND ${IN_MEMORY_ONLY}`, params);
      expect(res.body.rows).toEqual(memory.rows);
      const [entry] = await logged(sub);
      expect(entry.action).toBe('query');
      expect(entry.detail).toMatchObject({ patientsExact: false, compositions: expect.any(Number) });
      expect(entry.detail!.patients as number).toBeGreaterThanOrEqual(10);
      expect(entry.detail!.patients as number).toBeLessThanOrEqual(patients.rows[0][0] as number);
    });

    it('counts a composition without a start time (no context) only where no window is asked', async () => {
      const [[uid]] = (await run(`SELECT c/uid/value FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c[vital_signs.v1] LIMIT 1`, { ehr: ehrs[1] })).rows;
      const loaded = await t.request('GET', `/openehr/v1/ehr/${ehrs[1]}/composition/${encodeURIComponent(uid as string)}`);
      const { uid: _uid, context: _context, ...composition } = loaded.body;
      // Values the COUNTs without a lower bound take: systolic <= 120 (no window), diastolic < 70 (before a time).
      const bp = composition.content.find((entry: { archetype_node_id: string }) => entry.archetype_node_id === BP);
      for (const event of bp.data.events)
        for (const [id, magnitude] of [
          ['at0004', 110],
          ['at0005', 60],
        ] as const) {
          const element = event.data.items.find((item: { archetype_node_id: string }) => item.archetype_node_id === id);
          if (element.value) element.value.magnitude = magnitude;
        }
      const posted = await t.request('POST', `/openehr/v1/ehr/${ehrs[1]}/composition`, { body: composition });
      expect(posted.status).toBe(201);
      for (const [, where, params] of KEPT) {
        const q = `SELECT COUNT(*) ${VITALS} WHERE ${where}`;
        expect((await run(q, params)).rows).toEqual((await run(`${q} AND ${IN_MEMORY_ONLY}`, params)).rows);
      }
    });

    it('answers exactly, logging each composition, where the sample finds fewer than 10 patients', async () => {
      const q = `SELECT COUNT(*) ${VITALS} WHERE ${SYS} > 210`;
      const sub = 'kept-few';
      const token = await t.token({ roles: ['clinician'], sub });
      const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q }, token });
      expect(res.status).toBe(200);
      expect(res.body.rows).toEqual((await run(`${q} AND ${IN_MEMORY_ONLY}`)).rows);
      expect(res.body.rows).toEqual([[1]]);
      expect((await logged(sub)).map((e) => e.action)).toEqual(['list']);
    });
  });

  describe('the scope of an aggregate read from the rows of the values it tests', () => {
    // Run last: it hides an EHR, restricts a patient and deletes a composition.
    const POPULATION = `SELECT COUNT(*), COUNT(DISTINCT e/ehr_id/value) ${VITALS} WHERE ${SYS} > 140`;
    const WINDOWED = `${POPULATION} AND c/context/start_time/value > $since`;
    /** Summed from the kept counts, less the scope's exclusions. */
    const KEPT = `SELECT COUNT(*) ${VITALS} WHERE ${SYS} > 140 AND c/context/start_time/value > $from`;
    const from = new Date(now.getTime() - 300 * 86_400_000 + 3_600_000).toISOString();
    const counts = async () => {
      const answers: number[][] = [];
      for (const [q, params] of [
        [POPULATION, undefined],
        [WINDOWED, { since }],
        [KEPT, { from }],
      ] as const) {
        const sql = await run(q, params);
        const memory = await run(`${q} AND ${IN_MEMORY_ONLY}`, params);
        expect(sql.decrypted).toBe(0);
        expect(sql.rows).toEqual(memory.rows);
        answers.push(sql.rows[0] as number[]);
      }
      return answers;
    };

    it('leaves out a non-queryable EHR, a restricted patient and a deleted composition, as the in-memory path does', async () => {
      const before = await counts();
      // Three EHRs with a composition the population query counts (in the window too), all from different patients.
      const counted = (await run(`SELECT e/ehr_id/value, c/uid/value ${VITALS} WHERE ${SYS} > 140 AND c/context/start_time/value > $since`, { since }))
        .rows as Array<[string, string]>;
      const [deleted, hidden, restricted] = [...new Map(counted.map(([ehr, uid]) => [ehr, uid])).entries()];
      expect(restricted).toBeDefined();

      const removed = await t.request('DELETE', `/openehr/v1/ehr/${deleted[0]}/composition/${encodeURIComponent(deleted[1])}`);
      expect(removed.status).toBe(204);
      const status = await t.request('GET', `/openehr/v1/ehr/${hidden[0]}/ehr_status`);
      const hide = await t.request('PUT', `/openehr/v1/ehr/${hidden[0]}/ehr_status`, {
        body: { ...status.body, is_queryable: false },
        headers: { 'if-match': `"${status.body.uid.value}"` },
      });
      expect(hide.status).toBe(204);
      // A restriction (an erasure request's first step) as the privacy service records it.
      await t.platform.db!.query(`UPDATE ehr."Patient" SET "restrictedAt" = now() WHERE id = (SELECT "patientId" FROM ehr."Ehr" WHERE id = $1)`, [
        restricted[0],
      ]);

      const after = await counts();
      for (const [i, [compositions, ehrCount]] of after.slice(0, 2).entries()) {
        expect(compositions).toBeLessThan(before[i][0]);
        // The hidden EHR and the restricted patient's are no longer counted (the deleted composition's EHR may be).
        expect(ehrCount).toBeLessThanOrEqual(before[i][1] - 2);
      }
      expect(after[2][0]).toBeLessThanOrEqual(before[2][0] - 3);
    });

    /** Sets every systolic pressure of a composition's version; answers the new version's uid. */
    const setSystolic = async (ehr: string, version: string, systolic: number): Promise<string> => {
      const loaded = await t.request('GET', `/openehr/v1/ehr/${ehr}/composition/${encodeURIComponent(version)}`);
      const bp = loaded.body.content.find((entry: { archetype_node_id: string }) => entry.archetype_node_id === BP);
      for (const event of bp.data.events) {
        const element = event.data.items.find((item: { archetype_node_id: string }) => item.archetype_node_id === 'at0004');
        if (element.value) element.value.magnitude = systolic;
      }
      const updated = await t.request('PUT', `/openehr/v1/ehr/${ehr}/composition/${encodeURIComponent(version.split('::')[0])}`, {
        body: loaded.body,
        headers: { 'if-match': `"${version}"`, prefer: 'return=representation' },
      });
      expect(updated.status).toBe(200);
      return updated.body.uid.value;
    };

    it('keeps the counts equal to the index rows through commits, updates and deletions, concurrent ones too', async () => {
      // An update that moves a counted systolic pressure below the bound and back (two new versions).
      const [[ehr, uid]] = (await run(`SELECT e/ehr_id/value, c/uid/value ${VITALS} WHERE ${SYS} > 140 LIMIT 1`)).rows as Array<[string, string]>;
      let version = uid;
      for (const systolic of [100, 150]) {
        version = await setSystolic(ehr, version, systolic);
        const [sql, memory] = [await run(KEPT, { from }), await run(`${KEPT} AND ${IN_MEMORY_ONLY}`, { from })];
        expect(sql.rows).toEqual(memory.rows);
      }
      // Twelve commits at once that set one value in compositions of the last 90 days, so they share counts: none
      // fails (the counts they share are locked in the same order), and none is lost.
      const recent = (
        await run(`SELECT e/ehr_id/value, c/uid/value ${VITALS} WHERE c/context/start_time/value > $recent LIMIT 12`, {
          recent: new Date(now.getTime() - 90 * 86_400_000).toISOString(),
        })
      ).rows as Array<[string, string]>;
      expect(recent.length).toBe(12);
      await Promise.all(recent.map(([e, v]) => setSystolic(e, v, 177)));
      expect((await run(KEPT, { from })).rows).toEqual((await run(`${KEPT} AND ${IN_MEMORY_ONLY}`, { from })).rows);
      const db = t.platform.db!;
      const [{ text }] = (await db.query<{ text: string }>(`SELECT ehr.value_count_deltas_sql('"ehr"."ClinicalIndexEntry"', 1) AS text`)).rows;
      const key = (r: Record<string, unknown>) => JSON.stringify(Object.values(r).map(String));
      const recomputed = (await db.query(text)).rows.map(key).sort();
      const kept = (
        await db.query(
          `SELECT * FROM ehr."ClinicalValueCount" WHERE "entriesAtMax" <> 0 OR "entriesAtMin" <> 0 OR "compositionsAtMax" <> 0 OR "compositionsAtMin" <> 0`,
        )
      ).rows.map(key);
      expect(recomputed.length).toBeGreaterThan(100);
      expect(kept.sort()).toEqual(recomputed);
      expect((await db.query(`SELECT count(*)::int AS n FROM ehr."ClinicalValueCountChange"`)).rows).toEqual([{ n: 0 }]);
      expect((await db.query(`SELECT count(*)::int AS n FROM ehr."ClinicalValueCountPending"`)).rows).toEqual([{ n: 0 }]);
    });
  });
});
