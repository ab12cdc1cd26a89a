import type { PlatformEvent } from '../common/events/types';
import { FieldCipher } from '../common/crypto';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { countRows, eventually, finalMessage } from './messaging-helpers';

const VARS = { date: '2026-12-01', time: '09:30', location: 'Room 2' };
const send = (t: TestPlatform, body: unknown, headers: Record<string, string> = {}) => t.request('POST', '/v1/messages', { body, headers });

describe(`messaging service (${backendName})`, () => {
  let t: TestPlatform;
  const bus: PlatformEvent<any>[] = [];
  beforeAll(async () => {
    // The 1000-item batch below must finish whole however busy the shared CI machine is: its speed is a
    // benchmark matter (npm run bench), the request deadline's behaviour is test/deadline.e2e's.
    t = await startTestPlatform({ REQUEST_TIMEOUT_MS: '180000' });
    t.platform.runtime.events.subscribe((event) => void bus.push(event));
  });
  afterAll(() => t?.stop());

  const outbox = async (type: string) => {
    // Event data is encrypted at rest.
    const cipher = new FieldCipher(t.platform.runtime.secrets.encryptionKey);
    const { rows } = await t.platform.db!.query<{ dataEnc: string }>(`SELECT "dataEnc" FROM messaging."Event" WHERE type = $1 ORDER BY "createdAt"`, [type]);
    return rows.map((r) => JSON.parse(cipher.decrypt(r.dataEnc)));
  };

  it('[MSG-001, MSG-002] sends an SMS to p-1001 through queued → sending → sent → delivered', async () => {
    const res = await send(t, { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: expect.any(String), status: 'queued', createdAt: expect.any(String) });
    expect(res.body.body).toBe('Reminder: your appointment is on 2026-12-01 at 09:30 at Room 2. Reply C to confirm or X to cancel.');
    const done = await finalMessage(t, res.body.id);
    expect(done.status).toBe('delivered');
    expect(done.error).toBeUndefined();
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'sent', 'delivered']);
    expect((await outbox('message.delivered')).filter((d) => d.messageId === res.body.id)).toEqual([
      { messageId: res.body.id, patientId: 'p-1001', channel: 'sms', status: 'delivered' },
    ]);
    expect((await outbox('message.sent')).filter((d) => d.messageId === res.body.id)).toHaveLength(1);
    const statuses = bus.filter((e) => e.type === 'message.status' && e.data.messageId === res.body.id).map((e) => e.data.status);
    expect(statuses).toEqual(['queued', 'sending', 'sent', 'delivered']);
  });

  it('[MSG-002, MSG-016] fails SMS to p-1002 (number ends in 0000) with message.failed', async () => {
    const res = await send(t, { patientId: 'p-1002', templateId: 'appointment-reminder', channel: 'sms', variables: VARS });
    expect(res.status).toBe(201);
    const done = await finalMessage(t, res.body.id);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual(expect.any(String));
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'sending', 'sent', 'failed']);
    const failed = (await outbox('message.failed')).find((d) => d.messageId === res.body.id);
    expect(failed).toEqual({ messageId: res.body.id, patientId: 'p-1002', channel: 'sms', status: 'failed', error: done.error });
  });

  it('[MSG-003] refuses SMS to p-1003 (opted out) with 422 and delivers email', async () => {
    const before = await countRows(t, 'Message');
    const sms = await send(t, { patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'sms', variables: VARS });
    expect(sms.status).toBe(422);
    expect(sms.body.error.code).toBe('PATIENT_OPTED_OUT');
    expect(await countRows(t, 'Message')).toBe(before);
    const email = await send(t, { patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: VARS });
    expect(email.status).toBe(201);
    expect(email.body.subject).toBe('Your appointment on 2026-12-01');
    expect((await finalMessage(t, email.body.id)).status).toBe('delivered');
  });

  it('[MSG-010, MSG-011] reminds appt-1001 from the appointment, and a C reply confirms it', async () => {
    const res = await t.request('POST', '/v1/appointments/appt-1001/remind');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'queued', patientId: 'p-1001', appointmentId: 'appt-1001', channel: 'sms' });
    const appts = await t.request('GET', '/v1/appointments');
    const appt = appts.body.data.find((a: any) => a.id === 'appt-1001');
    // appt-1001 is tomorrow at 09:30 UTC: "tomorrow", or in hours when that is under 12 hours away.
    expect(res.body.variables).toEqual({
      date: appt.start.slice(0, 10),
      time: appt.start.slice(11, 16),
      location: appt.location,
      when: expect.stringMatching(/^(tomorrow|in \d+ hours?)$/),
    });
    expect(res.body.body).toContain(`your appointment is ${res.body.variables.when}, on ${appt.start.slice(0, 10)}`);
    expect((await finalMessage(t, res.body.id)).status).toBe('delivered');

    const reply = await t.request('POST', '/v1/simulator/replies', { body: { messageId: res.body.id, body: ' c ' } });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ messageId: res.body.id, keyword: 'C', action: 'confirmed' });
    const after = await t.request('GET', '/v1/appointments');
    expect(after.body.data.find((a: any) => a.id === 'appt-1001').status).toBe('confirmed');
    // From the clinical record's outbox, relayed into messaging's events.
    const confirmed = await eventually(async () => {
      const found = await outbox('appointment.confirmed');
      return found.length > 0 ? found : undefined;
    }, 'the relayed appointment.confirmed');
    expect(confirmed).toEqual([{ appointmentId: 'appt-1001', patientId: 'p-1001', status: 'confirmed', start: appt.start }]);
    const response = (await outbox('message.response')).find((d) => d.messageId === res.body.id);
    expect(response).toEqual({ messageId: res.body.id, patientId: 'p-1001', channel: 'sms', body: ' c ', receivedAt: expect.any(String) });
    // A second C changes nothing more.
    const again = await t.request('POST', '/v1/simulator/replies', { body: { messageId: res.body.id, body: 'YES' } });
    expect(again.body.action).toBe('ignored');
    expect(await outbox('appointment.confirmed')).toHaveLength(1);
  });

  it('[MSG-010] answers 409 for reminding a cancelled appointment and 404 for an unknown one', async () => {
    await t.platform.db!.query(
      `INSERT INTO ehr."Appointment" ("tenantId", id, "patientId", start, "end", status, "updatedAt") VALUES ('demo', 'appt-x', 'p-1001', now() + interval '2 days', now() + interval '2 days 30 minutes', 'cancelled', now())`,
    );
    const cancelled = await t.request('POST', '/v1/appointments/appt-x/remind', { body: {} });
    expect(cancelled.status).toBe(409);
    expect(cancelled.body.error.code).toBe('CONFLICT');
    expect((await t.request('POST', '/v1/appointments/nope/remind')).status).toBe(404);
    const badBody = await t.request('POST', '/v1/appointments/appt-1001/remind', { body: { channel: 'fax' } });
    expect(badBody.status).toBe(400);
  });

  it('[MSG-005] makes a repeated Idempotency-Key return the first message, and 409 for another body', async () => {
    const body = { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS };
    const first = await send(t, body, { 'Idempotency-Key': 'key-1' });
    const count = await countRows(t, 'Message');
    const second = await send(t, body, { 'Idempotency-Key': 'key-1' });
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
    const other = await send(t, { ...body, variables: { ...VARS, time: '10:00' } }, { 'Idempotency-Key': 'key-1' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('CONFLICT');
    expect(await countRows(t, 'Message')).toBe(count);
    const gql = await t.graphql(`mutation($input: SendMessageInput!) { sendMessage(input: $input, idempotencyKey: "key-1") { id } }`, { input: body });
    expect(gql.body.data.sendMessage.id).toBe(first.body.id);
  });

  it('[MSG-006] accepts the valid items of a batch and refuses the others one by one', async () => {
    const res = await t.request('POST', '/v1/messages/batch', {
      body: {
        messages: [
          { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS },
          { patientId: 'p-9999', templateId: 'appointment-reminder', channel: 'sms', variables: VARS },
          { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 42 },
          { patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'sms', variables: VARS },
          { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: 'tomorrow' } },
          { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'email', variables: VARS },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBe(2);
    expect(res.body.rejected).toBe(4);
    expect(res.body.results.map((r: any) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(res.body.results[0]).toEqual({ index: 0, id: expect.any(String), status: 'queued', createdAt: expect.any(String) });
    expect(res.body.results.slice(1, 5).map((r: any) => r.error.code)).toEqual([
      'NOT_FOUND',
      'VALIDATION_ERROR',
      'PATIENT_OPTED_OUT',
      'TEMPLATE_VARIABLES_INVALID',
    ]);
    expect(res.body.results[5].id).toEqual(expect.any(String));
    await finalMessage(t, res.body.results[5].id);

    // 1000 items, held by quiet hours so they do not crowd the rest of this suite's deliveries.
    const hhmm = (offsetMin: number) => new Date(Date.now() + offsetMin * 60_000).toISOString().slice(11, 16);
    await t.request('PATCH', '/v1/patients/p-1003/preferences', { body: { quietHours: { start: hhmm(-60), end: hhmm(180), timezone: 'UTC' } } });
    const big = Array.from({ length: 1000 }, () => ({ patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: VARS }));
    const thousand = await t.request('POST', '/v1/messages/batch', { body: { messages: big } });
    expect(thousand.status).toBe(200);
    expect(thousand.body.accepted).toBe(1000);
    await t.request('PATCH', '/v1/patients/p-1003/preferences', { body: { quietHours: null } });
    for (const messages of [[], [...big, big[0]]]) {
      const refused = await t.request('POST', '/v1/messages/batch', { body: { messages } });
      expect(refused.status).toBe(400);
    }
  });

  it("keeps each item's idempotency key at its place in the request when malformed items come before it", async () => {
    const item = { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS };
    const headers = { 'Idempotency-Key': 'batch-malformed-first' };
    const later = { ...item, variables: { ...VARS, time: '16:40' } };
    const first = await t.request('POST', '/v1/messages/batch', { body: { messages: [{ ...item, channel: 'fax' }, item, later] }, headers });
    expect(first.body.results.map((r: any) => r.error?.code ?? 'ok')).toEqual(['VALIDATION_ERROR', 'ok', 'ok']);
    const before = await countRows(t, 'Message');
    // The client corrects item 0 and retries under the same key: items 1 and 2 are the messages already queued.
    const retry = await t.request('POST', '/v1/messages/batch', { body: { messages: [item, item, later] }, headers });
    expect(retry.status).toBe(200);
    expect(retry.body.results.map((r: any) => r.error?.code ?? 'ok')).toEqual(['ok', 'ok', 'ok']);
    expect(retry.body.results[1].id).toBe(first.body.results[1].id);
    expect(retry.body.results[2].id).toBe(first.body.results[2].id);
    expect(await countRows(t, 'Message')).toBe(before + 1);
    // Delivered before the next test counts status rows.
    for (const result of retry.body.results) await finalMessage(t, result.id);
  });

  it('[MSG-006] queues exactly the accepted items of a mixed batch, each with its job and queued event', async () => {
    // p-1003 (email on, sms off) is held by quiet hours, so the jobs are still waiting when they are counted.
    const hhmm = (offsetMin: number) => new Date(Date.now() + offsetMin * 60_000).toISOString().slice(11, 16);
    await t.request('PATCH', '/v1/patients/p-1003/preferences', { body: { quietHours: { start: hhmm(-60), end: hhmm(180), timezone: 'UTC' } } });
    const item = (patientId: string, channel: string, variables: Record<string, string> = VARS) => ({
      patientId,
      templateId: 'appointment-reminder',
      channel,
      variables,
    });
    const headers = { 'Idempotency-Key': 'mixed-batch' };
    const first = await t.request('POST', '/v1/messages/batch', { body: { messages: [item('p-1003', 'email'), item('p-1003', 'email')] }, headers });
    expect(first.body.accepted).toBe(2);
    const [repeatId, conflictingId] = first.body.results.map((r: any) => r.id);
    const messagesBefore = await countRows(t, 'Message');
    const historyBefore = await countRows(t, 'MessageStatusChange');

    const res = await t.request('POST', '/v1/messages/batch', {
      body: {
        messages: [
          item('p-1003', 'email'), // #0 repeats the first batch's item 0: its message, nothing new
          item('p-1003', 'email', { ...VARS, location: 'Room 9' }), // #1 another request under a used key
          item('p-1003', 'email', { ...VARS, time: '10:15' }),
          item('p-1003', 'sms'), // sms off in p-1003's preferences
          item('p-9999', 'email'),
          item('p-1003', 'email', { date: 'tomorrow', time: '09:30' }),
          item('p-1003', 'email', { ...VARS, time: '11:45' }),
          { ...item('p-1003', 'email'), channel: 'fax' },
        ],
      },
      headers,
    });
    expect(res.status).toBe(200);
    const results = res.body.results;
    expect(results.map((r: any) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(results[0]).toEqual({ index: 0, id: repeatId, status: expect.any(String), createdAt: expect.any(String) });
    expect(results.map((r: any) => r.error?.code ?? 'ok')).toEqual([
      'ok',
      'CONFLICT',
      'ok',
      'PATIENT_OPTED_OUT',
      'NOT_FOUND',
      'TEMPLATE_VARIABLES_INVALID',
      'ok',
      'VALIDATION_ERROR',
    ]);
    expect(results[1].id).toBeUndefined();
    expect(res.body).toMatchObject({ accepted: 3, rejected: 5 });
    const created = [results[2].id, results[6].id];
    expect(new Set([...created, repeatId, conflictingId]).size).toBe(4);
    expect(results[2]).toEqual({ index: 2, id: expect.any(String), status: 'queued', createdAt: expect.any(String) });

    // Exactly the two new messages were stored, each with one queued history row, one delivery job and one queued event.
    expect(await countRows(t, 'Message')).toBe(messagesBefore + 2);
    expect(await countRows(t, 'MessageStatusChange')).toBe(historyBefore + 2);
    for (const [n, id] of created.entries()) {
      const message = (await t.request('GET', `/v1/messages/${id}`)).body;
      // What was stored reads back as the batch answered it (the timestamps included).
      expect(message).toMatchObject({
        status: 'queued',
        patientId: 'p-1003',
        channel: 'email',
        createdAt: results[n === 0 ? 2 : 6].createdAt,
      });
      expect(message.body).toContain(n === 0 ? '10:15' : '11:45');
      expect(message.statusHistory.map((s: any) => s.status)).toEqual(['queued']);
      expect(bus.filter((e) => e.type === 'message.status' && e.data.messageId === id).map((e) => e.data.status)).toEqual(['queued']);
    }
    const { rows: jobs } = await t.platform.db!.query<{ messageId: string; held: boolean }>(
      `SELECT data->>'messageId' AS "messageId", start_after > now() AS held FROM pgboss.job WHERE name = 'messaging-deliver' AND data->>'messageId' = ANY($1)`,
      [[...created, repeatId, conflictingId]],
    );
    // The new messages have a job each (held until quiet hours end); the repeated items added none.
    expect(jobs.filter((j) => created.includes(j.messageId)).map((j) => j.held)).toEqual([true, true]);
    expect(jobs.filter((j) => j.messageId === repeatId || j.messageId === conflictingId)).toHaveLength(2);
    await t.request('PATCH', '/v1/patients/p-1003/preferences', { body: { quietHours: null } });
  });

  it('[MSG-004] refuses bad input of every kind with 4xx and stores nothing', async () => {
    const before = await countRows(t, 'Message');
    const ok = { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS };
    const cases: [unknown, number, string][] = [
      [{ ...ok, channel: 'fax' }, 400, 'VALIDATION_ERROR'],
      [{ ...ok, patientId: 1001 }, 400, 'VALIDATION_ERROR'],
      [{ ...ok, extra: true }, 400, 'VALIDATION_ERROR'],
      [{ ...ok, variables: { date: 20261201 } }, 400, 'VALIDATION_ERROR'],
      [{ templateId: 'appointment-reminder', channel: 'sms' }, 400, 'VALIDATION_ERROR'],
      [[ok], 400, 'VALIDATION_ERROR'],
      [{ ...ok, patientId: 'p-9999' }, 404, 'NOT_FOUND'],
      [{ ...ok, patientId: 'p-2001' }, 404, 'NOT_FOUND'],
      [{ ...ok, templateId: 'nope' }, 404, 'NOT_FOUND'],
      [{ ...ok, variables: { date: '2026-02-30', time: '25:00' } }, 422, 'TEMPLATE_VARIABLES_INVALID'],
      [{ ...ok, variables: { time: '09:30' } }, 422, 'TEMPLATE_VARIABLES_INVALID'],
      [{ ...ok, variables: { ...VARS, colour: 'red' } }, 422, 'TEMPLATE_VARIABLES_INVALID'],
    ];
    for (const [body, status, code] of cases) {
      const res = await send(t, body);
      expect({ body, status: res.status, code: res.body?.error?.code }).toEqual({ body, status, code });
    }
    const invalid = await send(t, { ...ok, variables: { date: '2026-02-30', time: '9:30' } });
    expect(invalid.body.error.details.map((d: any) => d.path).sort()).toEqual(['variables.date', 'variables.time']);

    const malformed = await t.request('POST', '/v1/messages', { rawBody: '{"patientId":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    const text = await t.request('POST', '/v1/messages', { rawBody: JSON.stringify(ok), headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const huge = JSON.stringify({ ...ok, variables: { location: 'x'.repeat(2 * 1024 * 1024) } });
    const tooLarge = await t.request('POST', '/v1/messages', { rawBody: huge, headers: { 'content-type': 'application/json' } });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const badKey = await send(t, ok, { 'Idempotency-Key': 'x'.repeat(300) });
    expect(badKey.status).toBe(400);
    const query = await t.request('POST', '/v1/messages?debug=1', { body: ok });
    expect(query.status).toBe(400);
    expect(await countRows(t, 'Message')).toBe(before);
    expect(await countRows(t, 'MessageStatusChange')).toBeGreaterThan(0);
  });

  it('[MSG-007] pages the message list and refuses bad paging', async () => {
    const page = await t.request('GET', '/v1/messages?patientId=p-1002');
    expect(page.status).toBe(200);
    expect(page.body.pagination).toEqual({ limit: 20, offset: 0, total: 1 });
    const two = await t.request('GET', '/v1/messages?limit=2&offset=1');
    expect(two.body.data).toHaveLength(2);
    const all = await t.request('GET', '/v1/messages?limit=3');
    expect(two.body.data[0].id).toBe(all.body.data[1].id);
    expect(new Date(all.body.data[0].createdAt) >= new Date(all.body.data[1].createdAt)).toBe(true);
    for (const q of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'offset=-1', 'offset=1.5', 'limit=1&limit=2', 'sort=asc']) {
      const res = await t.request('GET', `/v1/messages?${q}`);
      expect({ q, status: res.status, code: res.body.error?.code }).toEqual({ q, status: 400, code: 'VALIDATION_ERROR' });
    }
    expect((await t.request('GET', '/v1/messages/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    const other = await t.request('GET', `/v1/messages/${page.body.data[0].id}`, { token: await t.token({ tenants: ['acme'] }) });
    expect(other.status).toBe(404);
  });

  it('[MSG-008] changes preferences with PATCH, logs each change, and refuses unknown fields', async () => {
    const res = await t.request('PATCH', '/v1/patients/p-1002/preferences', {
      body: { language: 'nl', quietHours: { start: '22:00', end: '07:00', timezone: 'Europe/Amsterdam' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      channels: { sms: true, email: true },
      language: 'nl',
      quietHours: { start: '22:00', end: '07:00', timezone: 'Europe/Amsterdam' },
    });
    const patient = await t.request('GET', '/v1/patients/p-1002');
    expect(patient.body.preferences).toEqual(res.body);
    const cleared = await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { quietHours: null } });
    expect(cleared.body.quietHours).toBeNull();
    const before = await countRows(t, 'PreferenceChange');
    for (const body of [
      { sms: false },
      { channels: { sms: 'no' } },
      { channels: { fax: true } },
      { quietHours: { start: '22:00', end: '7:00', timezone: 'Europe/Amsterdam' } },
      { quietHours: { start: '22:00', end: '07:00', timezone: 'Mars/Base' } },
      { language: 'english please' },
    ]) {
      const bad = await t.request('PATCH', '/v1/patients/p-1002/preferences', { body });
      expect({ body, status: bad.status }).toEqual({ body, status: 400 });
    }
    expect((await t.request('PATCH', '/v1/patients/p-9999/preferences', { body: { language: 'en' } })).status).toBe(404);
    expect(
      (
        await t.request('PATCH', '/v1/patients/p-1002/preferences', {
          rawBody: 'language=en',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      ).status,
    ).toBe(415);
    expect(await countRows(t, 'PreferenceChange')).toBe(before);
    const { rows } = await t.platform.db!.query(`SELECT source, actor FROM messaging."PreferenceChange" WHERE "patientId" = 'p-1002'`);
    expect(rows).toEqual([
      { source: 'api', actor: 'test-user' },
      { source: 'api', actor: 'test-user' },
    ]);
  });

  it("holds a message due in the patient's quiet hours until they end", async () => {
    const now = new Date();
    const hhmm = (d: Date) => d.toISOString().slice(11, 16);
    const start = hhmm(new Date(now.getTime() - 60 * 60_000));
    const end = hhmm(new Date(now.getTime() + 2 * 60 * 60_000));
    await t.request('PATCH', '/v1/patients/p-1003/preferences', { body: { quietHours: { start, end, timezone: 'UTC' } } });
    const res = await send(t, { patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: VARS });
    expect(res.status).toBe(201);
    expect(res.body.dueAt.slice(11, 16)).toBe(end);
    expect(new Date(res.body.dueAt).getTime()).toBeGreaterThan(now.getTime());
    const { rows } = await t.platform.db!.query<{ start_after: Date }>(
      `SELECT start_after FROM pgboss.job WHERE name = 'messaging-deliver' AND data->>'messageId' = $1`,
      [res.body.id],
    );
    // pg-boss takes the due time as a delay from the database's now() (common/clock.ts): equal up to the request's own time.
    expect(rows).toHaveLength(1);
    expect(Math.abs(new Date(rows[0].start_after).getTime() - new Date(res.body.dueAt).getTime())).toBeLessThan(5000);
    expect((await t.request('GET', `/v1/messages/${res.body.id}`)).body.status).toBe('queued');
  });

  it('lists templates and lets admins create and version them', async () => {
    const list = await t.request('GET', '/v1/templates');
    expect(list.body.data).toContainEqual(
      expect.objectContaining({
        id: 'appointment-reminder',
        channel: 'sms',
        language: 'en',
        variables: [
          { name: 'date', type: 'date', required: true },
          { name: 'time', type: 'time', required: true },
          { name: 'location', type: 'string', required: false },
          { name: 'when', type: 'string', required: false },
        ],
      }),
    );
    expect((await t.request('GET', '/v1/templates/appointment-reminder')).body.version).toBe(1);
    expect((await t.request('GET', '/v1/templates/nope')).status).toBe(404);
    const input = {
      name: 'Lab results',
      channel: 'sms',
      language: 'nl',
      body: 'Uw uitslag van {{date}} is binnen.',
      variables: [{ name: 'date', type: 'date', required: true }],
    };
    const create = `mutation($input: TemplateInput!) { createTemplate(id: "lab-results", input: $input) { id version language } }`;
    expect((await t.graphql(create, { input })).body.data.createTemplate).toEqual({ id: 'lab-results', version: 1, language: 'nl' });
    expect((await t.graphql(create, { input })).body.errors[0].extensions.code).toBe('CONFLICT');
    const update = await t.graphql(`mutation($input: TemplateInput!) { updateTemplate(id: "lab-results", input: $input) { version body } }`, {
      input: { ...input, body: 'Uitslag {{date}}.' },
    });
    expect(update.body.data.updateTemplate).toEqual({ version: 2, body: 'Uitslag {{date}}.' });
    const undeclared = await t.graphql(create.replace('lab-results', 'x'), { input: { ...input, body: 'Hi {{name}}' } });
    expect(undeclared.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const nurse = await t.graphql(create.replace('lab-results', 'y'), { input }, { token: await t.token({ roles: ['nurse'] }) });
    expect(nurse.body.errors[0].extensions.code).toBe('FORBIDDEN');
    // p-1002 prefers Dutch: the Dutch variant is used.
    await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { language: 'nl' } });
    const dutch = await send(t, { patientId: 'p-1002', templateId: 'lab-results', channel: 'email', variables: { date: '2026-11-20' } });
    expect(dutch.body).toMatchObject({ body: 'Uitslag 2026-11-20.', language: 'nl', templateVersion: 2 });
  });

  it('[MSG-009] lists appointments by date range and refuses bad ranges', async () => {
    expect((await t.request('GET', '/v1/appointments')).body.data.map((a: any) => a.id)).toContain('appt-1001');
    for (const q of ['from=2026-02-30', 'from=2026-12-02&to=2026-12-01', 'from=2026-01-01&to=2027-01-03', 'to=soon', 'day=1']) {
      const res = await t.request('GET', `/v1/appointments?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
    }
  });

  it('keeps sends, replies and reminders to the roles allowed', async () => {
    const patient = await t.token({ roles: ['patient'], patientId: 'p-1001' });
    const res = await t.request('POST', '/v1/messages', {
      token: patient,
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS },
    });
    expect(res.status).toBe(403);
    const own = await t.request('GET', '/v1/messages', { token: patient });
    expect(own.body.data.every((m: any) => m.patientId === 'p-1001')).toBe(true);
    const nurse = await t.token({ roles: ['nurse'] });
    const message = (await t.request('GET', '/v1/messages?limit=1')).body.data[0];
    expect((await t.request('POST', '/v1/simulator/replies', { token: nurse, body: { messageId: message.id, body: 'hi' } })).status).toBe(403);
    expect((await t.request('POST', '/v1/simulator/replies', { body: { messageId: 'nope', body: 'hi' } })).status).toBe(404);
    expect((await t.request('POST', '/v1/simulator/replies', { body: { messageId: message.id } })).status).toBe(400);
    expect((await t.request('POST', '/v1/messages', { token: null, body: {} })).status).toBe(401);
  });

  it('[MSG-011] records inbound SMS replies and obeys STOP and START', async () => {
    const first = await send(t, { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS });
    await finalMessage(t, first.body.id);
    const inbound = await t.request('POST', '/v1/inbound/sms', {
      rawBody: 'From=%2B31612345671&Body=Thanks!&MessageSid=SM1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(inbound.status).toBe(201);
    expect(inbound.body).toMatchObject({ messageId: first.body.id, patientId: 'p-1001', action: 'none', keyword: null });
    const duplicate = await t.request('POST', '/v1/inbound/sms', { body: { From: '+31612345671', Body: 'Thanks!', MessageSid: 'SM1' } });
    expect(duplicate.body.id).toBe(inbound.body.id);
    expect((await t.request('POST', '/v1/inbound/sms', { body: { From: '+49000', Body: 'who?' } })).status).toBe(404);
    expect((await t.request('POST', '/v1/inbound/sms', { rawBody: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415);

    const stop = await t.request('POST', '/v1/simulator/replies', { body: { messageId: first.body.id, body: 'Stop' } });
    expect(stop.body.action).toBe('opted_out');
    expect((await t.request('GET', '/v1/patients/p-1001')).body.preferences.channels.sms).toBe(false);
    const refused = await send(t, { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('PATIENT_OPTED_OUT');
    const { rows } = await t.platform.db!.query(`SELECT source, actor FROM messaging."PreferenceChange" WHERE "patientId" = 'p-1001'`);
    expect(rows).toEqual([{ source: 'keyword', actor: 'patient:p-1001' }]);

    const start = await t.request('POST', '/v1/inbound/sms', { body: { From: '+31 6 1234 5671', Body: 'START' } });
    expect(start.body.action).toBe('opted_in');
    expect((await send(t, { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS })).status).toBe(201);
  });

  it('stops a queued SMS whose patient sent STOP before it went out', async () => {
    const tomorrowish = new Date(Date.now() + 3 * 60 * 60_000).toISOString().slice(11, 16);
    const startNow = new Date(Date.now() - 60 * 60_000).toISOString().slice(11, 16);
    await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { quietHours: { start: startNow, end: tomorrowish, timezone: 'UTC' } } });
    const held = await send(t, { patientId: 'p-1002', templateId: 'appointment-reminder', channel: 'sms', variables: VARS });
    expect(held.status).toBe(201);
    await t.request('PATCH', '/v1/patients/p-1002/preferences', { body: { channels: { sms: false }, quietHours: null } });
    // Make the held job due now, as if quiet hours had ended.
    await t.platform.db!.query(`UPDATE pgboss.job SET start_after = now() WHERE name = 'messaging-deliver' AND data->>'messageId' = $1`, [held.body.id]);
    const done = await finalMessage(t, held.body.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/opted out/);
    expect(done.statusHistory.map((s: any) => s.status)).toEqual(['queued', 'failed']);
  });
});
