import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NOTE } from './ehr-fixtures';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { compositionDecrypts } from './support/clinical-load';
import { processDatabase } from './support/process-database';

const HEART_RATE = 'http://loinc.org|8867-4';
/** The migration that gave clinical notes' document type its row, and that row's path. */
const DOCUMENT_TYPE_MIGRATION = join(__dirname, '../prisma/ehr/migrations/20261125200000_clinical_index_document_type/migration.sql');
const POSITIONS_MIGRATION = join(__dirname, '../prisma/ehr/migrations/20261129021727_clinical_index_positions/migration.sql');
const DOCUMENT_TYPE_PATH = "/context/other_context[at0001]/items[at0007,'Document type']/value";
const COUNT = 24;

/** Vital signs of patient p-1002 at day `day` of November 2026, pulse 50 + day. */
const vitals = (day: number, rate = 50 + day) => ({
  templateId: 'vital_signs.v1',
  ehrId: 'ehr-p-1002',
  content: {
    blood_pressure: { systolic: { magnitude: 120, unit: 'mm[Hg]' }, diastolic: { magnitude: 80, unit: 'mm[Hg]' } },
    pulse: { rate: { magnitude: rate, unit: '/min' } },
    recorded_at: `2026-11-${String(day).padStart(2, '0')}T08:00:00Z`,
  },
});

const accessLogRows = async (t: TestPlatform) =>
  (await t.platform.db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."AccessLog" WHERE "entityType" = 'Composition'`)).rows[0].n;
const rates = (bundle: any) => (bundle.entry ?? []).map((e: any) => e.resource.valueQuantity.value);

describe(`clinical index: FHIR Observation search in SQL (${backendName})`, () => {
  let t: TestPlatform;
  const ids: string[] = [];

  beforeAll(async () => {
    t = await startTestPlatform();
    for (let day = 1; day <= COUNT; day++) {
      const res = await t.request('POST', '/api/ehr/compositions', { body: vitals(day) });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
  });
  afterAll(async () => {
    await t?.stop();
  });

  /** A search, with the compositions it decrypted and the access-log rows it wrote. */
  const measured = async (query: string) => {
    const [d0, a0] = [await compositionDecrypts(t), await accessLogRows(t)];
    const res = await t.request('GET', `/fhir/R4/Observation?${query}`);
    expect(res.status).toBe(200);
    return { bundle: res.body, decrypted: (await compositionDecrypts(t)) - d0, logged: (await accessLogRows(t)) - a0 };
  };

  it('answers patient + code + _sort=-date + _count from the index, decrypting only the page', async () => {
    const { bundle, decrypted, logged } = await measured(`patient=Patient/p-1002&code=${encodeURIComponent(HEART_RATE)}&_sort=-date&_count=5`);
    expect(bundle.total).toBe(COUNT);
    expect(rates(bundle)).toEqual([74, 73, 72, 71, 70]);
    expect(bundle.entry[0].resource.effectiveDateTime).toBe('2026-11-24T08:00:00Z');
    // The bound: one decrypt and one access-log row per composition returned, none for those only considered.
    expect(decrypted).toBeGreaterThan(0);
    expect(decrypted).toBeLessThanOrEqual(5);
    expect(logged).toBeLessThanOrEqual(5);
  });

  it('pages, filters by date and sorts ascending from the index', async () => {
    const page2 = await measured(`patient=p-1002&code=8867-4&_sort=-date&_count=5&_offset=5`);
    expect(rates(page2.bundle)).toEqual([69, 68, 67, 66, 65]);
    expect(page2.decrypted).toBeLessThanOrEqual(5);
    const week = await measured(`subject=Patient/p-1002&code=${encodeURIComponent(HEART_RATE)}&date=ge2026-11-10&date=lt2026-11-17&_sort=date`);
    expect(week.bundle.total).toBe(7);
    expect(rates(week.bundle)).toEqual([60, 61, 62, 63, 64, 65, 66]);
    expect(week.decrypted).toBeLessThanOrEqual(7);
    // Both codes of the vital-signs compositions: blood pressure panels and heart rates.
    const both = await measured(`patient=p-1002&code=85354-9,8867-4&_count=4`);
    expect(both.bundle.total).toBe(2 * COUNT);
    expect(both.decrypted).toBeLessThanOrEqual(2);
    // The patient's latest vitals, by category.
    const latest = await measured(`patient=p-1002&category=vital-signs&_sort=-date&_count=2`);
    expect(latest.bundle.total).toBe(2 * COUNT);
    expect(latest.bundle.entry.map((e: any) => e.resource.effectiveDateTime)).toEqual(['2026-11-24T08:00:00Z', '2026-11-24T08:00:00Z']);
    expect(latest.decrypted).toBeLessThanOrEqual(1);
    const category = encodeURIComponent('http://terminology.hl7.org/CodeSystem/observation-category|vital-signs');
    expect((await measured(`patient=p-1002&category=${category}&code=8867-4&_count=1`)).bundle.total).toBe(COUNT);
    const counted = await measured(`patient=p-1002&code=8867-4&_summary=count`);
    expect(counted.bundle.total).toBe(COUNT);
    expect(counted.decrypted).toBe(0);
    const lab = await measured(`patient=p-1002&category=laboratory`);
    expect(lab.bundle.total).toBe(0);
    expect(lab.decrypted).toBe(0);
    const none = await measured(`patient=p-1002&code=http://snomed.info/sct|8867-4`);
    expect(none.bundle.total).toBe(0);
    expect(none.decrypted).toBe(0);
  });

  it('answers several patients in one parameter from the index, an unknown one matching nothing', async () => {
    const { bundle, decrypted } = await measured(`patient=p-1002,p-9999&value-quantity=gt73`);
    expect(rates(bundle)).toEqual([74]);
    expect(decrypted).toBe(1);
  });

  it('narrows AQL in SQL by the quantities and codes its WHERE requires, or answers it in SQL alone', async () => {
    const rate = 'p/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value/magnitude';
    const from = `FROM EHR e[ehr_id/value='ehr-p-1002'] CONTAINS COMPOSITION c CONTAINS OBSERVATION p[openEHR-EHR-OBSERVATION.pulse.v2]`;
    const run = async (q: string) => {
      const d0 = await compositionDecrypts(t);
      const res = await t.request('POST', '/openehr/v1/query/aql', { body: { q, query_parameters: { min: 72 } } });
      expect(res.status).toBe(200);
      return { rows: res.body.rows as unknown[][], decrypted: (await compositionDecrypts(t)) - d0 };
    };
    const aql = async (where: string) => {
      const { rows, decrypted } = await run(`SELECT ${rate} AS rate ${from} WHERE ${where} ORDER BY ${rate}`);
      return { rates: rows.map((r) => r[0]), decrypted };
    };
    // Every path is an indexed leaf and SELECT reads no value that may repeat (a rate belongs to an event, and events
    // repeat, so selecting it answers a row per event, in memory): one SQL statement answers, nothing is decrypted.
    expect(await run(`SELECT COUNT(*) ${from} WHERE ${rate} > 70`)).toEqual({ rows: [[4]], decrypted: 0 });
    expect(await run(`SELECT COUNT(*) ${from} WHERE $min <= ${rate} AND ${rate} != 73`)).toEqual({ rows: [[2]], decrypted: 0 });
    // A condition the index cannot answer (c/feeder_audit: never indexed) keeps the query in memory, on the narrowed candidates.
    const inMemory = 'NOT EXISTS c/feeder_audit';
    const high = await aql(`${rate} > 70 AND ${inMemory}`);
    expect(high.rates).toEqual([71, 72, 73, 74]);
    expect(high.decrypted).toBeGreaterThan(0);
    expect(high.decrypted).toBeLessThanOrEqual(4);
    const param = await aql(`$min <= ${rate} AND ${rate} != 73 AND ${inMemory}`);
    expect(param.rates).toEqual([72, 74]);
    // != is evaluated, not narrowed: the candidates are those >= 72.
    expect(param.decrypted).toBeLessThanOrEqual(3);
  });

  it('follows updates and deletions in the commit that makes them', async () => {
    const id = ids[COUNT - 1];
    const current = await t.request('GET', `/api/ehr/compositions/${id}`);
    const updated = await t.request('PUT', `/api/ehr/compositions/${id}`, {
      body: { content: vitals(30, 99).content },
      headers: { 'If-Match': `"${current.body.uid}"` },
    });
    expect(updated.status).toBe(200);
    const latest = await measured(`patient=p-1002&code=8867-4&_count=2`);
    expect(rates(latest.bundle)).toEqual([99, 73]);
    const deleted = await t.request('DELETE', `/api/ehr/compositions/${id}`, { headers: { 'If-Match': `"${updated.body.uid}"` } });
    expect(deleted.status).toBe(204);
    const after = await measured(`patient=p-1002&code=8867-4&_count=2`);
    expect(after.bundle.total).toBe(COUNT - 1);
    expect(rates(after.bundle)).toEqual([73, 72]);
  });

  it('matches nothing for another tenant or an unknown patient', async () => {
    const acme = await t.token({ tenants: ['acme'], roles: ['admin'] });
    const other = await t.request('GET', `/fhir/R4/Observation?patient=p-1002&code=8867-4`, { token: acme });
    expect(other.status).toBe(200);
    expect(other.body.total).toBe(0);
    expect((await measured(`patient=p-9999&code=8867-4`)).bundle.total).toBe(0);
  });
});

// File-backed PGlite, restarted on the same DATA_DIR: the PostgreSQL pass need not run it again.
const embedded = process.env.TEST_DATABASE_URL ? describe.skip : describe;

embedded('clinical index backfill at start-up', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-index-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('indexes compositions committed without index rows, once, and scans a tenant found indexed no more', async () => {
    // The run's migrated and seeded snapshot, unpacked into DATA_DIR: a first start that migrates and seeds is not under test.
    const env = { ...(await processDatabase(dataDir)).env, DATA_DIR: dataDir };
    const first = await startTestPlatform(env);
    try {
      for (const day of [3, 4]) expect((await first.request('POST', '/api/ehr/compositions', { body: vitals(day) })).status).toBe(201);
      // As a database from before the index: no rows, no tenant marked as indexed.
      await first.platform.db!.query(`DELETE FROM ehr."ClinicalIndexEntry"`);
      await first.platform.db!.query(`DELETE FROM ehr."ClinicalIndexBackfill"`);
      const empty = await first.request('GET', '/fhir/R4/Observation?patient=p-1002&code=8867-4');
      expect(empty.body.total).toBe(0);
    } finally {
      await first.stop();
    }
    const count = async (p: TestPlatform) => (await p.platform.db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."ClinicalIndexEntry"`)).rows[0].n;
    const second = await startTestPlatform(env);
    let rows: number;
    try {
      rows = await count(second);
      expect(rows).toBeGreaterThan(2);
      const found = await second.request('GET', '/fhir/R4/Observation?patient=p-1002&code=8867-4&_sort=-date');
      expect(rates(found.body)).toEqual([54, 53]);
      const marked = await second.platform.db!.query<{ tenantId: string }>(`SELECT "tenantId" FROM ehr."ClinicalIndexBackfill" ORDER BY 1`);
      expect(marked.rows.map((r) => r.tenantId)).toEqual(['acme', 'demo']);
    } finally {
      await second.stop();
    }
    const third = await startTestPlatform(env);
    try {
      expect(await count(third)).toBe(rows);
      // Rows lost behind the backfill's back (never by a commit) show that a marked tenant is not read again.
      await third.platform.db!.query(`DELETE FROM ehr."ClinicalIndexEntry" WHERE "tenantId" = 'demo'`);
    } finally {
      await third.stop();
    }
    const fourth = await startTestPlatform(env);
    let note: string;
    let noteRows: number;
    let committed: unknown[];
    /** Every index row but its positions, in a stable order. */
    const indexContents = async (p: TestPlatform) =>
      (await p.platform.db!.query(`SELECT to_jsonb(e) - 'positions' AS row FROM ehr."ClinicalIndexEntry" e ORDER BY "tenantId", "compositionId", "seq"`)).rows;
    try {
      const before = await count(fourth);
      expect(before).toBeLessThan(rows);
      // A note indexed as the release before the document type's row did (its other rows kept), then that release's migration.
      const res = await fourth.request('POST', '/api/ehr/compositions', {
        body: { templateId: 'clinical_note.v1', ehrId: 'ehr-p-1002', content: NOTE('Seen') },
      });
      expect(res.status).toBe(201);
      note = res.body.id;
      noteRows = (await count(fourth)) - before;
      const removed = await fourth.platform.db!.query(`DELETE FROM ehr."ClinicalIndexEntry" WHERE "path" = $1 RETURNING "compositionId"`, [DOCUMENT_TYPE_PATH]);
      expect(removed.rows).toEqual([{ compositionId: note }]);
      await fourth.platform.db!.exec(readFileSync(DOCUMENT_TYPE_MIGRATION, 'utf8'));
    } finally {
      await fourth.stop();
    }
    // The migration unmarked the tenants and emptied the note's rows: the next start indexes both again.
    const fifth = await startTestPlatform(env);
    try {
      expect(await count(fifth)).toBe(rows + noteRows);
      const typed = await fifth.request('GET', '/fhir/R4/DocumentReference?patient=p-1002&type=11506-3');
      expect(typed.body.entry.map((e: any) => e.resource.id)).toContain(note);
      // As the release before positions, then its migration: the rows stay, without positions, until the next start.
      committed = await indexContents(fifth);
      await fifth.platform.db!.exec(`ALTER TABLE ehr."ClinicalIndexEntry" DROP COLUMN "positions"`);
      await fifth.platform.db!.exec(readFileSync(POSITIONS_MIGRATION, 'utf8'));
      const unplaced = await fifth.platform.db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."ClinicalIndexEntry" WHERE "positions" IS NULL`);
      expect(unplaced.rows[0].n).toBe(rows + noteRows);
    } finally {
      await fifth.stop();
    }
    // A start without the key the compositions were encrypted with reads none of them: their rows stay, the tenant unmarked.
    const keyless = await startTestPlatform({ ...env, ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    try {
      expect(await count(keyless)).toBe(rows + noteRows);
      const marked = await keyless.platform.db!.query(`SELECT 1 FROM ehr."ClinicalIndexBackfill" WHERE "tenantId" = 'demo'`);
      expect(marked.rows).toEqual([]);
    } finally {
      await keyless.stop();
    }
    // The next start indexes every composition again, with positions: AQL pairs the values of each event in SQL.
    const sixth = await startTestPlatform(env);
    try {
      expect(await count(sixth)).toBe(rows + noteRows);
      // The backfill's rows hold what the commits wrote, every column alike.
      expect(await indexContents(sixth)).toEqual(committed);
      const placed = await sixth.platform.db!.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ehr."ClinicalIndexEntry" WHERE "positions" IS NULL AND "path" <> $1`,
        [DOCUMENT_TYPE_PATH],
      );
      expect(placed.rows[0].n).toBe(0);
      const before = await compositionDecrypts(sixth);
      const aql = await sixth.request('POST', '/openehr/v1/query/aql', {
        body: {
          q: `SELECT p/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value/magnitude AS rate
              FROM EHR e[ehr_id/value='ehr-p-1002'] CONTAINS COMPOSITION c CONTAINS OBSERVATION p[openEHR-EHR-OBSERVATION.pulse.v2]
              ORDER BY rate DESC`,
        },
      });
      expect(aql.status).toBe(200);
      expect(aql.body.rows.slice(0, 2)).toEqual([[54], [53]]);
      expect((await compositionDecrypts(sixth)) - before).toBe(0);
    } finally {
      await sixth.stop();
    }
  });
});
