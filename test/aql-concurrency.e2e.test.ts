import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { loadCompositions } from './support/clinical-load';
import { scrape } from './support/metrics';

/**
 * Many AQL queries at once on a large record: every one answers what it answers alone, at most
 * AQL_CONCURRENCY are evaluated at a time (the others wait their turn), and other requests are served
 * meanwhile; the database pool is shared, never exhausted.
 */
const PATIENTS = 60;
const PER_PATIENT = 20;
const TURNS = 3;
const PARALLEL = 12;
const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const SYS = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude';
const VITALS = `FROM EHR e CONTAINS COMPOSITION c[vital_signs.v1] CONTAINS OBSERVATION o[${BP}]`;
/** A condition only the in-memory evaluator takes (true of every loaded composition): those queries decrypt what they read. */
const IN_MEMORY_ONLY = 'NOT EXISTS c/feeder_audit';

/** Half answered in SQL, half in memory, each with a different threshold so that no two answers are the same. */
const queries = Array.from({ length: PARALLEL }, (_, i) => {
  const threshold = 110 + i * 5;
  return i % 2 === 0
    ? `SELECT e/ehr_id/value, COUNT(*) AS n ${VITALS} WHERE ${SYS} > ${threshold} ORDER BY n DESC, e/ehr_id/value LIMIT 50`
    : `SELECT e/ehr_id/value, COUNT(*) AS n ${VITALS} WHERE ${SYS} > ${threshold} AND ${IN_MEMORY_ONLY} ORDER BY n DESC, e/ehr_id/value LIMIT 50`;
});

describe(`AQL: ${PARALLEL} queries at once on ${PATIENTS * PER_PATIENT} compositions (${backendName})`, () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ AQL_CONCURRENCY: String(TURNS) });
    await loadCompositions(t, { patients: PATIENTS, perPatient: PER_PATIENT, now: new Date(), days: 365 });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const aql = (q: string) => t.request('POST', '/openehr/v1/query/aql', { body: { q } });
  const gauge = async (name: string) => (await scrape(`${t.url}/metrics`)).total(name);

  it(`[OPS-005] all answer as they answer alone, at most ${TURNS} evaluated at a time, while other requests are served`, async () => {
    const alone: unknown[][][] = [];
    for (const q of queries) {
      const res = await aql(q);
      expect(res.status).toBe(200);
      alone.push(res.body.rows);
    }
    // Each answer is its own (thresholds differ), and has rows: the comparison below can tell them apart.
    expect(alone.every((rows) => rows.length > 0)).toBe(true);
    expect(new Set(alone.map((rows) => JSON.stringify(rows))).size).toBe(PARALLEL);

    const waitsBefore = await gauge('caregraph_aql_queue_waits_total');
    let most = 0;
    let done = false;
    const watching = (async () => {
      while (!done) {
        most = Math.max(most, await gauge('caregraph_aql_queries_running'));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const together = Promise.all(queries.map((q) => aql(q)));
    // Served while the queries run: a read of the record that is not AQL.
    const other = await t.request('GET', '/openehr/v1/definition/template/adl1.4');
    const answers = await together;
    done = true;
    await watching;

    expect(other.status).toBe(200);
    expect(answers.map((res) => res.status)).toEqual(queries.map(() => 200));
    expect(answers.map((res) => res.body.rows)).toEqual(alone);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(TURNS);
    // Twelve at once through three turns: some of them waited.
    expect((await gauge('caregraph_aql_queue_waits_total')) - waitsBefore).toBeGreaterThan(0);
    expect(await gauge('caregraph_aql_queries_waiting')).toBe(0);
  }, 240_000);
});
