import type PgBoss from 'pg-boss';
import { FieldCipher } from '../common/crypto';
import { createBoss } from '../common/db/boss';
import { stopTestBoss } from '../common/db/test-backends';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { eventually, finalMessage } from './messaging-helpers';
import { TestClock } from './support/clock';
import { startReceiver, type Receiver } from './webhook-receiver';
import { RECORD_PURGE_QUEUE } from '../subgraphs/ehr/privacy/retention';
import { MESSAGING_PURGE_QUEUE } from '../subgraphs/messaging/privacy/retention';

const DAY_MS = 86_400_000;
const VITALS = {
  blood_pressure: { systolic: { magnitude: 131, unit: 'mm[Hg]' }, diastolic: { magnitude: 87, unit: 'mm[Hg]' } },
  recorded_at: '2026-11-22T09:00:00Z',
};
const MESSAGING_TABLES = [
  'Message',
  'MessageStatusChange',
  'InboundMessage',
  'CommunicationPreference',
  'PreferenceChange',
  'Event',
  'WebhookDelivery',
  'WebhookAttempt',
];

describe(`patient rights and retention (${backendName})`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  const clock = new TestClock();

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestPlatform({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_CA_FILE: receiver.caFile }, 'all', { clock });
  });

  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  /** Every row of a messaging table as JSON text, read as the owner (past row-level security). */
  async function tableText(table: string): Promise<string[]> {
    const { rows } = await t.platform.db!.query<{ row: string }>(`SELECT row_to_json(x)::text AS row FROM messaging."${table}" x`);
    return rows.map((r) => r.row);
  }

  async function send(patientId: string, date: string): Promise<string> {
    const res = await t.request('POST', '/v1/messages', {
      body: { patientId, templateId: 'appointment-reminder', channel: patientId === 'p-1003' ? 'email' : 'sms', variables: { date, time: '09:30' } },
    });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  /** The clinical record's purges count on the database's clock: move it with the test's, as the owner (who alone may replace it). */
  async function advance(ms: number): Promise<void> {
    clock.advance(ms);
    const seconds = (clock.now().getTime() - Date.now()) / 1000;
    await t.platform.db!.withOwner((owner) =>
      owner.query(
        `CREATE OR REPLACE FUNCTION ehr.retention_now() RETURNS timestamp LANGUAGE sql STABLE AS $$ SELECT (now() AT TIME ZONE 'UTC')::timestamp + make_interval(secs => ${seconds}) $$`,
      ),
    );
  }

  async function runJob(queue: string): Promise<void> {
    const boss: PgBoss = await createBoss(t.platform.db!);
    await boss.start();
    try {
      const id = (await boss.send(queue, {}))!;
      const job = await eventually(async () => {
        const found = await boss.getJobById(queue, id);
        return found && ['completed', 'failed'].includes(found.state) ? found : undefined;
      }, `${queue} job`);
      expect({ state: job.state, output: job.output }).toMatchObject({ state: 'completed' });
    } finally {
      await stopTestBoss(boss);
    }
  }

  async function verifyChain() {
    const res = await t.graphql('{ verifyAuditChain { valid checked problem } }');
    expect(res.body.errors).toBeUndefined();
    return res.body.data.verifyAuditChain;
  }

  const restriction = async (patientId: string) =>
    (await t.graphql('query($id: ID!) { recordRestriction(patientId: $id) { restrictedAt deleteAfter legalHold } }', { id: patientId })).body;

  test('[EHR-015] erasure removes the messaging data of one patient, restricts the record, keeps the chain; the purge honours retention and legal hold', async () => {
    const hook = await t.request('POST', '/v1/webhooks', {
      body: { url: receiver.url('/hooks'), events: ['message.sent', 'message.delivered', 'message.response'], secret: 'privacy-test-secret-1234' },
    });
    expect(hook.status).toBe(201);

    // Messaging data of p-1001 (a message, a reply, preferences) and of p-1003 (another patient).
    const ownMessage = await send('p-1001', '2031-01-02');
    const otherMessage = await send('p-1003', '2031-01-03');
    await finalMessage(t, ownMessage);
    await finalMessage(t, otherMessage);
    expect((await t.request('POST', '/v1/simulator/replies', { body: { messageId: ownMessage, body: 'Sorry, running late at 09:30' } })).status).toBe(201);
    expect((await t.request('PATCH', '/v1/patients/p-1001/preferences', { body: { language: 'nl' } })).status).toBe(200);
    const composition = await t.request('POST', '/api/ehr/compositions', {
      body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS },
    });
    expect(composition.status).toBe(201);
    const directory = await t.request('POST', '/openehr/v1/ehr/ehr-p-1001/directory', {
      body: { _type: 'FOLDER', archetype_node_id: 'openEHR-EHR-FOLDER.generic.v1', name: { value: 'root' } },
    });
    expect(directory.status).toBe(201);
    const patient = await t.request('GET', '/api/ehr/patients/p-1001', { headers: { 'X-Tenant-Id': 'demo' } });
    const phone: string = patient.body.contact.phone;

    // The webhook deliveries of p-1001's events (sent, delivered, response) exist before the erasure.
    await eventually(async () => ((await tableText('WebhookDelivery')).length >= 5 ? true : undefined), 'webhook deliveries');

    // What identifies p-1001 in messaging's tables: ids, plaintext, and every ciphertext stored for them.
    const { rows: own } = await t.platform.db!.query<{ v: string }>(
      `SELECT unnest(ARRAY[m."bodyEnc", m."recipientEnc", m."variablesEnc", m."recipientHash"]) AS v FROM messaging."Message" m WHERE m."patientId" = 'p-1001'
       UNION SELECT "bodyEnc" FROM messaging."InboundMessage" WHERE "patientId" = 'p-1001'`,
    );
    const ownCiphertexts = own.map((r) => r.v).filter((v): v is string => !!v);
    expect(ownCiphertexts.length).toBeGreaterThanOrEqual(3);
    const deliveriesBefore = await t.platform.db!.query<{ id: string; payloadEnc: string }>(`SELECT id, "payloadEnc" FROM messaging."WebhookDelivery"`);
    const eventsBefore = await t.platform.db!.query<{ id: string; dataEnc: string }>(`SELECT id, "dataEnc" FROM messaging."Event"`);

    // A nurse may not carry out an erasure; an unknown patient is 404 and erases nothing.
    const nurse = await t.token({ roles: ['nurse'] });
    expect((await t.request('POST', '/api/ehr/patients/p-1001/erasure', { token: nurse, headers: { 'X-Tenant-Id': 'demo' } })).status).toBe(403);
    const unknown = await t.request('POST', '/api/ehr/patients/p-9999/erasure', { headers: { 'X-Tenant-Id': 'demo' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect((await tableText('Message')).some((r) => r.includes(ownMessage))).toBe(true);

    const erased = await t.request('POST', '/api/ehr/patients/p-1001/erasure', { headers: { 'X-Tenant-Id': 'demo', 'X-Change-Reason': 'erasure request' } });
    expect(erased.status).toBe(200);
    expect(erased.body.messaging).toMatchObject({ messages: 1, replies: 1, preferences: 1 });
    expect(erased.body.messaging.events).toBeGreaterThanOrEqual(3);
    expect(erased.body.messaging.webhookDeliveries).toBeGreaterThanOrEqual(3);
    const deleteAfter = new Date(erased.body.record.deleteAfter).getTime();
    expect(Math.abs(deleteAfter - (clock.now().getTime() + 7305 * DAY_MS))).toBeLessThan(60_000);

    // Nothing of p-1001 is left in messaging's tables: no id, plaintext or ciphertext; p-1003's message stays.
    const needles = ['p-1001', ownMessage, phone, 'running late', ...ownCiphertexts];
    for (const table of MESSAGING_TABLES) {
      for (const row of await tableText(table))
        for (const needle of needles) expect({ table, found: row.includes(needle) ? needle : null }).toEqual({ table, found: null });
    }
    // Opened with the platform's key, no remaining event or delivery payload is about p-1001 or its message.
    const cipher = new FieldCipher(t.platform.runtime.secrets.encryptionKey);
    const { rows: sealed } = await t.platform.db!.query<{ v: string }>(
      `SELECT "dataEnc" AS v FROM messaging."Event" WHERE "dataEnc" IS NOT NULL UNION ALL SELECT "payloadEnc" FROM messaging."WebhookDelivery" WHERE "payloadEnc" IS NOT NULL`,
    );
    expect(sealed.length).toBeGreaterThan(0);
    for (const { v } of sealed) for (const needle of ['p-1001', ownMessage]) expect(cipher.decrypt(v)).not.toContain(needle);
    const eventsLeft = new Set((await tableText('Event')).map((r) => JSON.parse(r).id));
    const deliveriesLeft = new Set((await tableText('WebhookDelivery')).map((r) => JSON.parse(r).id));
    expect(eventsLeft.size).toBeLessThan(eventsBefore.rows.length);
    expect(deliveriesLeft.size).toBeLessThan(deliveriesBefore.rows.length);
    expect(eventsLeft.size).toBeGreaterThan(0); // p-1003's events
    expect((await tableText('Message')).some((r) => r.includes(otherMessage))).toBe(true);

    // The clinical record is kept but not processed: reads and writes refused, left out of lists.
    const read = await t.request('GET', '/api/ehr/patients/p-1001', { headers: { 'X-Tenant-Id': 'demo' } });
    expect(read.status).toBe(403);
    expect(read.body.error.message).toMatch(/restricted/);
    expect((await t.request('GET', '/api/ehr/patients/p-1001/compositions')).status).toBe(403);
    const write = await t.request('POST', '/api/ehr/compositions', { body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS } });
    expect(write.status).toBe(403);
    const list = await t.graphql('{ patients(limit: 100) { data { id } } }');
    expect(list.body.data.patients.data.map((p: { id: string }) => p.id)).not.toContain('p-1001');
    expect((await restriction('p-1001')).data.recordRestriction).toMatchObject({ legalHold: false });
    // Messaging can no longer reach the patient through the clinical record, so nothing new is stored for them.
    const again = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2031-01-02', time: '09:30' } },
    });
    expect(again.status).toBe(404);

    const afterErasure = await verifyChain();
    expect(afterErasure).toMatchObject({ valid: true, problem: null });
    const restrictAudit = await t.graphql('{ auditRecords(entityId: "p-1001", entityType: "Patient") { data { action reason } } }');
    expect(restrictAudit.body.data.auditRecords.data[0]).toEqual({ action: 'restrict', reason: 'erasure request' });

    // p-1002 is restricted too, but under legal hold.
    expect((await t.request('POST', '/api/ehr/patients/p-1002/erasure', { headers: { 'X-Tenant-Id': 'demo' } })).status).toBe(200);
    const hold = await t.graphql('mutation { setLegalHold(patientId: "p-1002", hold: true, reason: "court order") { legalHold } }');
    expect(hold.body.data.setLegalHold.legalHold).toBe(true);
    // Shorter audit and access-log periods for this tenant; a bad period changes nothing.
    const bad = await t.graphql('mutation { setRecordRetention(category: "audit", days: 0) { days } }');
    expect(bad.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    for (const category of ['audit', 'access_log']) {
      const set = await t.graphql(`mutation { setRecordRetention(category: "${category}", days: 365) { category days source } }`);
      expect(set.body.data.setRecordRetention).toContainEqual({ category, days: 365, source: 'tenant' });
    }
    const accessOfHeld = await t.platform.db!.query<{ n: string }>(`SELECT count(*)::text AS n FROM ehr."AccessLog" WHERE "patientId" = 'p-1002'`);
    expect(Number(accessOfHeld.rows[0].n)).toBeGreaterThan(0);

    // A day before the end of the retention period: the purge deletes nothing clinical.
    await advance(7304 * DAY_MS);
    await runJob(RECORD_PURGE_QUEUE);
    const { rows: early } = await t.platform.db!.query<{ id: string }>(`SELECT id FROM ehr."Patient" WHERE id IN ('p-1001', 'p-1002')`);
    expect(early.map((r) => r.id).sort()).toEqual(['p-1001', 'p-1002']);

    // Past it: p-1001's record is deleted, p-1002's kept by the hold; the audit chain still verifies.
    await advance(2 * DAY_MS);
    await runJob(RECORD_PURGE_QUEUE);
    const { rows: kept } = await t.platform.db!.query<{ id: string }>(`SELECT id FROM ehr."Patient" WHERE id IN ('p-1001', 'p-1002')`);
    expect(kept.map((r) => r.id)).toEqual(['p-1002']);
    for (const table of ['Ehr', 'Composition', 'Consent', 'Appointment', 'Directory']) {
      const { rows } = await t.platform.db!.query<{ n: string }>(`SELECT count(*)::text AS n FROM ehr."${table}" WHERE "patientId" = 'p-1001'`);
      expect({ table, n: Number(rows[0].n) }).toEqual({ table, n: 0 });
    }
    const versions = await t.platform.db!.query<{ n: string }>(`SELECT count(*)::text AS n FROM ehr."CompositionVersion" WHERE "compositionId" = $1`, [
      composition.body.id,
    ]);
    expect(Number(versions.rows[0].n)).toBe(0);
    for (const [table, where] of [
      ['DirectoryVersion', `uid = '${directory.headers.get('etag')!.replace(/"/g, '')}'`],
      ['Contribution', `"ehrId" = 'ehr-p-1001'`],
    ]) {
      const { rows } = await t.platform.db!.query<{ n: string }>(`SELECT count(*)::text AS n FROM ehr."${table}" WHERE ${where}`);
      expect({ table, n: Number(rows[0].n) }).toEqual({ table, n: 0 });
    }
    const { rows: accessLeft } = await t.platform.db!.query<{ patientId: string }>(`SELECT DISTINCT "patientId" FROM ehr."AccessLog"`);
    expect(accessLeft.map((r) => r.patientId)).toContain('p-1002');
    expect(accessLeft.map((r) => r.patientId)).not.toContain('p-1001');
    const { rows: firstSeq } = await t.platform.db!.query<{ seq: number }>(`SELECT min(seq) AS seq FROM ehr."AuditRecord" WHERE "tenantId" = 'demo'`);
    // The hold stops the audit purge before the first record about p-1002 (its creation by the seed), so nothing of the prefix goes.
    const chain = await verifyChain();
    expect(chain).toMatchObject({ valid: true, problem: null });
    const purgeRecords = await t.graphql('{ auditRecords(entityType: "Patient", entityId: "p-1001") { data { action actor } } }');
    expect(purgeRecords.body.data.auditRecords.data[0]).toEqual({ action: 'delete', actor: 'system:retention' });
    expect(firstSeq[0].seq).toBe(1);

    // Lifting the hold lets the next run purge the old audit prefix (up to a signed checkpoint); the chain still verifies from it.
    expect((await t.graphql('mutation { setLegalHold(patientId: "p-1002", hold: false) { legalHold } }')).body.data.setLegalHold.legalHold).toBe(false);
    await advance(400 * DAY_MS);
    await runJob(RECORD_PURGE_QUEUE);
    const { rows: afterPurge } = await t.platform.db!.query<{ seq: number }>(`SELECT min(seq) AS seq FROM ehr."AuditRecord" WHERE "tenantId" = 'demo'`);
    expect(afterPurge[0].seq).toBeGreaterThan(1);
    expect(await verifyChain()).toMatchObject({ valid: true, problem: null });
    const purgeEntry = await t.graphql('{ auditRecords(entityType: "AuditRecord") { data { action actor } } }');
    expect(purgeEntry.body.data.auditRecords.data[0]).toEqual({ action: 'purge', actor: 'system:retention' });
    // Someone with the owner's rights who removes the start of the chain outside the purge is still caught, even
    // when the cut ends at a signed checkpoint: no keyed purge record names it.
    const setRetention = (category: string, days: number) => t.graphql(`mutation { setRecordRetention(category: "${category}", days: ${days}) { days } }`);
    expect((await setRetention('audit', 36_525)).body.errors).toBeUndefined();
    await runJob(RECORD_PURGE_QUEUE); // signs a checkpoint at the record just written, purges nothing
    const { rows: head } = await t.platform.db!.query<{ seq: number }>(`SELECT max(seq) AS seq FROM ehr."AuditRecord" WHERE "tenantId" = 'demo'`);
    expect((await setRetention('access_log', 400)).body.errors).toBeUndefined();
    expect(await verifyChain()).toMatchObject({ valid: true, problem: null });
    // One statement, so its transaction is its own: on PGlite's single connection, a BEGIN sent on its own could be
    // ended by the platform's background work before the DELETE, which the trigger would then refuse.
    await t.platform.db!.withOwner(async (owner) => {
      await owner.query(
        `DO $$ BEGIN
           PERFORM set_config('caregraph.retention_purge', 'AuditRecord', true);
           DELETE FROM ehr."AuditRecord" WHERE "tenantId" = 'demo' AND seq <= ${Number(head[0].seq)};
         END $$`,
      );
    });
    const tampered = await verifyChain();
    expect(tampered.valid).toBe(false);
    expect(tampered.problem).toMatch(/without a signed checkpoint and a purge record/);
    // The other tenant's chain is untouched and verifies.
    const acme = await t.graphql('{ verifyAuditChain { valid } }', undefined, { token: await t.token({ tenants: ['acme'] }) });
    expect(acme.body.data.verifyAuditChain.valid).toBe(true);

    // Messaging: after a year p-1003's finished message and every finished delivery are purged.
    expect((await tableText('Message')).length).toBeGreaterThan(0);
    await runJob(MESSAGING_PURGE_QUEUE);
    expect(await tableText('Message')).toEqual([]);
    expect((await tableText('WebhookDelivery')).filter((r) => JSON.parse(r).status !== 'pending')).toEqual([]);
  });

  test('[EHR-015] the messaging purge keeps the messages of a patient under legal hold past retention, and purges them once it is lifted', async () => {
    const created = await t.graphql('mutation { createPatient(input: { id: "p-4001", givenNames: ["Hanna"], family: "Hold", phone: "+31699994001" }) { id } }');
    expect(created.body.errors).toBeUndefined();
    const held = await send('p-4001', '2031-03-04');
    const other = await send('p-1003', '2031-03-04');
    await finalMessage(t, held);
    await finalMessage(t, other);
    expect((await t.request('POST', '/v1/simulator/replies', { body: { messageId: held, body: 'Held reply' } })).status).toBe(201);
    const hold = await t.graphql('mutation { setLegalHold(patientId: "p-4001", hold: true, reason: "litigation") { legalHold } }');
    expect(hold.body.data.setLegalHold.legalHold).toBe(true);
    // Only an admin (and the messaging service) learns who is under legal hold.
    expect((await t.graphql('{ legalHolds }')).body.data.legalHolds).toEqual(['p-4001']);
    const nurse = await t.token({ roles: ['nurse'] });
    expect((await t.graphql('{ legalHolds }', undefined, { token: nurse })).body.errors[0].extensions.code).toBe('FORBIDDEN');

    const messageIds = async () => (await tableText('Message')).map((r) => JSON.parse(r).id as string);
    clock.advance(366 * DAY_MS);
    await runJob(MESSAGING_PURGE_QUEUE);
    expect(await messageIds()).toContain(held);
    expect(await messageIds()).not.toContain(other);
    expect((await tableText('InboundMessage')).map((r) => JSON.parse(r).messageId)).toContain(held);
    expect((await tableText('MessageStatusChange')).map((r) => JSON.parse(r).messageId)).toContain(held);

    expect((await t.graphql('mutation { setLegalHold(patientId: "p-4001", hold: false, reason: "settled") { legalHold } }')).body.errors).toBeUndefined();
    await runJob(MESSAGING_PURGE_QUEUE);
    expect(await messageIds()).not.toContain(held);
    expect((await tableText('InboundMessage')).map((r) => JSON.parse(r).messageId)).not.toContain(held);
  });
});
