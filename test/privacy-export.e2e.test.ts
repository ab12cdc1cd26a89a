import type PgBoss from 'pg-boss';
import yauzl from 'yauzl';
import { createBoss } from '../common/db/boss';
import { stopTestBoss } from '../common/db/test-backends';
import { MESSAGING_PURGE_QUEUE } from '../subgraphs/messaging/privacy/retention';
import { TestClock } from './support/clock';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { eventually, finalMessage } from './messaging-helpers';
import { openEhrContracts } from './support/openehr-oas';

const DEMO = { 'X-Tenant-Id': 'demo' };
const VITALS = {
  blood_pressure: { systolic: { magnitude: 127, unit: 'mm[Hg]' }, diastolic: { magnitude: 83, unit: 'mm[Hg]' } },
  recorded_at: '2026-11-22T10:00:00Z',
};

/** Every entry of a ZIP, name → text, read with yauzl (the archive's reader, not ours). */
function unzip(zip: Buffer): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (error, file) => {
      if (error || !file) return reject(error ?? new Error('no zip'));
      const entries = new Map<string, string>();
      file.on('entry', (entry: yauzl.Entry) => {
        file.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(streamError ?? new Error('no stream'));
          const parts: Buffer[] = [];
          stream.on('data', (part: Buffer) => parts.push(part));
          stream.on('end', () => {
            entries.set(entry.fileName, Buffer.concat(parts).toString('utf8'));
            file.readEntry();
          });
        });
      });
      file.on('end', () => resolve(entries));
      file.on('error', reject);
      file.readEntry();
    });
  });
}

/** Every entry a COMPOSITION in openEHR canonical JSON: its RM structure passes the openEHR REST API's schema. */
function expectCanonical(compositions: any[]): void {
  const contracts = openEhrContracts();
  expect(compositions.length).toBeGreaterThan(0);
  for (const c of compositions) {
    expect([c.uid?.value, c._type, contracts.schemaProblems('Composition', c)]).toEqual([c.uid?.value, 'COMPOSITION', []]);
  }
}

describe(`subject access export (${backendName})`, () => {
  let t: TestPlatform;
  const clock = new TestClock();

  beforeAll(async () => {
    t = await startTestPlatform({}, 'all', { clock });
  });

  afterAll(async () => {
    await t?.stop();
  });

  async function finished(patientId: string, jobId: string, token?: string) {
    return eventually(async () => {
      const res = await t.request('GET', `/api/ehr/patients/${patientId}/export/${jobId}`, { headers: DEMO, token });
      expect(res.status).toBe(200);
      return ['done', 'failed'].includes(res.body.status) ? res.body : undefined;
    }, 'export job');
  }

  async function download(path: string, token?: string): Promise<Response> {
    return fetch(`${t.url}${path}`, { headers: { ...DEMO, authorization: `Bearer ${token ?? (await t.token())}` } });
  }

  test("a patient's export holds both subgraphs' data of that patient only; refusals follow the policy", async () => {
    const send = async (patientId: string) => {
      const res = await t.request('POST', '/v1/messages', {
        body: {
          patientId,
          templateId: 'appointment-reminder',
          channel: patientId === 'p-1003' ? 'email' : 'sms',
          variables: { date: '2031-02-03', time: '10:15' },
        },
      });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const own = await send('p-1001');
    const other = await send('p-1003');
    await finalMessage(t, own);
    await finalMessage(t, other);
    expect((await t.request('POST', '/v1/simulator/replies', { body: { messageId: own, body: 'Export test reply' } })).status).toBe(201);
    expect((await t.request('PATCH', '/v1/patients/p-1001/preferences', { body: { language: 'nl' } })).status).toBe(200);
    const composition = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS } });
    const tagged = await t.request('PUT', `/openehr/v1/ehr/ehr-p-1001/composition/${composition.body.id}/tags`, {
      body: [{ key: 'follow-up', value: 'call back in a week' }],
      headers: { 'content-type': 'application/json' },
    });
    expect(tagged.status).toBe(204);
    expect(composition.status).toBe(201);
    const ehrStatus = await t.request('GET', '/openehr/v1/ehr/ehr-p-1001/ehr_status');
    const details = { _type: 'ITEM_LIST', archetype_node_id: 'at0001', name: { value: 'details' }, items: [] };
    const statusPut = await t.request('PUT', '/openehr/v1/ehr/ehr-p-1001/ehr_status', {
      body: { ...ehrStatus.body, other_details: details },
      headers: { 'content-type': 'application/json', 'if-match': ehrStatus.body.uid.value },
    });
    expect(statusPut.status).toBe(204);
    const nurse = await t.token({ roles: ['nurse'], sub: 'nurse-export@example.com' });
    // The nurse's read lands in the access log the export carries.
    expect((await t.request('GET', '/api/ehr/patients/p-1001', { headers: DEMO, token: nurse })).status).toBe(200);

    // Refusals: nurse and receptionist (no export capability), another tenant and an unknown patient (404).
    expect((await t.request('POST', '/api/ehr/patients/p-1001/export', { headers: DEMO, token: nurse })).status).toBe(403);
    const receptionist = await t.token({ roles: ['receptionist'] });
    expect((await t.request('POST', '/api/ehr/patients/p-1001/export', { headers: DEMO, token: receptionist })).status).toBe(403);
    const acme = await t.token({ tenants: ['acme'] });
    expect((await t.request('POST', '/api/ehr/patients/p-1001/export', { headers: { 'X-Tenant-Id': 'acme' }, token: acme })).status).toBe(404);
    const unknown = await t.request('POST', '/api/ehr/patients/p-9999/export', { headers: DEMO });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');

    const started = await t.request('POST', '/api/ehr/patients/p-1001/export', { headers: DEMO });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ patientId: 'p-1001', status: 'queued', progress: 0 });
    expect(started.headers.get('location')).toBe(`/api/ehr/patients/p-1001/export/${started.body.id}`);
    const job = await finished('p-1001', started.body.id);
    expect(job).toMatchObject({ status: 'done', progress: 100, error: null });

    // Another tenant's caller does not see the job; under another patient's path it is unknown.
    expect((await t.request('GET', `/api/ehr/patients/p-1001/export/${job.id}`, { headers: { 'X-Tenant-Id': 'acme' }, token: acme })).status).toBe(404);
    expect((await t.request('GET', `/api/ehr/patients/p-1003/export/${job.id}`, { headers: DEMO })).status).toBe(404);
    expect((await download(`/api/ehr/patients/p-1001/export/${job.id}/download`, nurse)).status).toBe(404);

    const res = await download(`/api/ehr/patients/p-1001/export/${job.id}/download`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    const zip = Buffer.from(await res.arrayBuffer());
    expect(zip.length).toBe(job.size);
    // At rest the archive is sealed with the field cipher: no chunk holds ZIP bytes or anything of the patient.
    const stored = await t.platform.db!.query<{ data: Buffer | null; dataEnc: string | null }>(
      `SELECT data, "dataEnc" FROM messaging."PatientExportChunk" WHERE "exportId" = $1 ORDER BY seq`,
      [job.id],
    );
    expect(stored.rows.length).toBeGreaterThan(0);
    for (const row of stored.rows) {
      expect(row.data).toBeNull();
      expect(row.dataEnc).toMatch(/^v1\.[\w-]{8}\./);
      expect(row.dataEnc).not.toMatch(/p-1001|Export test reply/);
    }
    const entries = await unzip(zip);
    expect([...entries.keys()].sort()).toEqual([
      'access-log.json',
      'consents.json',
      'fhir/Patient-everything.json',
      'messaging/messages.json',
      'messaging/preference-and-consent-history.json',
      'messaging/preferences.json',
      'messaging/replies.json',
      'openehr/compositions.json',
      'openehr/ehr-status.json',
      'openehr/item-tags.json',
    ]);
    const json = (name: string) => JSON.parse(entries.get(name)!);

    const bundle = json('fhir/Patient-everything.json');
    expect(bundle.resourceType).toBe('Bundle');
    const patient = bundle.entry.find((e: any) => e.resource.resourceType === 'Patient').resource;
    expect(patient.id).toBe('p-1001');
    // openEHR canonical JSON, as GET /openehr/v1/ehr/{ehr_id}/composition/{uid} answers it, valid against the RM schema.
    const compositions = json('openehr/compositions.json');
    expectCanonical(compositions);
    const exported = compositions.find((c: any) => c.uid.value === composition.body.uid);
    const served = await t.request('GET', `/openehr/v1/ehr/ehr-p-1001/composition/${composition.body.uid}`);
    expect(served.status).toBe(200);
    expect(exported).toEqual(served.body);
    expect(json('access-log.json').some((e: any) => e.actor === 'nurse-export@example.com' && e.entityId === 'p-1001')).toBe(true);
    expect(json('openehr/ehr-status.json')).toMatchObject({ _type: 'EHR_STATUS', other_details: { _type: 'ITEM_LIST', name: { value: 'details' } } });
    expect(json('openehr/item-tags.json')).toEqual([expect.objectContaining({ key: 'follow-up', value: 'call back in a week' })]);
    const messages = json('messaging/messages.json');
    expect(messages.map((m: any) => m.id)).toEqual([own]);
    expect(messages[0].body).toContain('10:15');
    expect(json('messaging/replies.json').map((r: any) => r.body)).toEqual(['Export test reply']);
    expect(json('messaging/preferences.json')).toEqual([expect.objectContaining({ patientId: 'p-1001', language: 'nl' })]);
    expect(json('messaging/preference-and-consent-history.json').length).toBeGreaterThanOrEqual(1);
    expect(json('consents.json').map((c: any) => c.purpose)).toContain('MESSAGING');
    // Nothing of the other patient.
    for (const [name, text] of entries) expect({ name, other: text.includes('p-1003') || text.includes(other) }).toEqual({ name, other: false });

    // The request and the download are recorded.
    const { rows } = await t.platform.db!.query<{ action: string; actor: string }>(
      `SELECT action, actor FROM messaging."PatientExportAudit" WHERE "exportId" = $1 ORDER BY at`,
      [job.id],
    );
    expect(rows.map((r) => r.action)).toEqual(['request', 'download']);

    // Past its expiry the archive is refused, and the retention purge deletes its chunks.
    clock.advance(8 * 86_400_000);
    expect((await download(`/api/ehr/patients/p-1001/export/${job.id}/download`)).status).toBe(404);
    const boss: PgBoss = await createBoss(t.platform.db!);
    await boss.start();
    try {
      const run = (await boss.send(MESSAGING_PURGE_QUEUE, {}))!;
      const done = await eventually(async () => {
        const found = await boss.getJobById(MESSAGING_PURGE_QUEUE, run);
        return found && ['completed', 'failed'].includes(found.state) ? found.state : undefined;
      }, 'purge job');
      expect(done).toBe('completed');
    } finally {
      await stopTestBoss(boss);
    }
    const chunks = await t.platform.db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM messaging."PatientExportChunk" WHERE "exportId" = $1`, [job.id]);
    expect(chunks.rows[0].n).toBe(0);
    expect((await t.request('GET', `/api/ehr/patients/p-1001/export/${job.id}`, { headers: DEMO })).body.status).toBe('expired');
  });

  test('[EHR-016] a patient exports their own record, not another; after erasure the restricted record is still exported, and nothing else processes it', async () => {
    const self = await t.token({ roles: ['patient'], patientId: 'p-1002', sub: 'p-1002@example.com' });
    expect((await t.request('POST', '/api/ehr/patients/p-1001/export', { headers: DEMO, token: self })).status).toBe(403);
    const recorded = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1002', content: VITALS } });
    expect(recorded.status).toBe(201);
    const started = await t.request('POST', '/api/ehr/patients/p-1002/export', { headers: DEMO, token: self });
    expect(started.status).toBe(202);
    expect(await finished('p-1002', started.body.id, self)).toMatchObject({ status: 'done' });

    const erased = await t.request('POST', '/api/ehr/patients/p-1002/erasure', { headers: { ...DEMO, 'X-Change-Reason': 'erasure request' } });
    expect(erased.status).toBe(200);
    // The erasure took the earlier archive (a copy of the erased data) with it.
    const left = await t.platform.db!.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM messaging."PatientExportChunk" WHERE "exportId" = $1) + (SELECT count(*) FROM messaging."PatientExport" WHERE id = $1) AS n`,
      [started.body.id],
    );
    expect(Number(left.rows[0].n)).toBe(0);
    expect((await t.request('GET', `/api/ehr/patients/p-1002/export/${started.body.id}`, { headers: DEMO })).status).toBe(404);

    // The right of access survives the restriction: the admin and the patient still get the clinical record.
    for (const token of [await t.token(), self]) {
      const again = await t.request('POST', '/api/ehr/patients/p-1002/export', { headers: DEMO, token });
      expect(again.status).toBe(202);
      expect(await finished('p-1002', again.body.id, token)).toMatchObject({ status: 'done', error: null });
      const res = await download(`/api/ehr/patients/p-1002/export/${again.body.id}/download`, token);
      expect(res.status).toBe(200);
      const entries = await unzip(Buffer.from(await res.arrayBuffer()));
      const bundle = JSON.parse(entries.get('fhir/Patient-everything.json')!);
      expect(bundle.entry.find((e: any) => e.resource.resourceType === 'Patient').resource.id).toBe('p-1002');
      expect(JSON.parse(entries.get('consents.json')!).map((c: any) => c.purpose)).toContain('MESSAGING');
      expect(JSON.parse(entries.get('messaging/messages.json')!)).toEqual([]);
      const compositions = JSON.parse(entries.get('openehr/compositions.json')!);
      expectCanonical(compositions);
      expect(compositions.map((c: any) => c.uid.value)).toContain(recorded.body.uid);
    }
    // Restriction still blocks every other processing: reads, writes, and roles without the export capability.
    const read = await t.request('GET', '/api/ehr/patients/p-1002', { headers: DEMO });
    expect([read.status, read.body.error.message]).toEqual([403, expect.stringMatching(/restricted/)]);
    const write = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1002', content: VITALS } });
    expect(write.status).toBe(403);
    const nurse = await t.token({ roles: ['nurse'] });
    expect((await t.request('POST', '/api/ehr/patients/p-1002/export', { headers: DEMO, token: nurse })).status).toBe(403);
    expect((await t.graphql('{ patients { data { id } } }')).body.data.patients.data.map((p: any) => p.id)).not.toContain('p-1002');
  });
});
