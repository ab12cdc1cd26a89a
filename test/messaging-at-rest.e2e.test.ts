import { randomBytes, randomUUID } from 'node:crypto';
import { FieldCipher } from '../common/crypto';
import type { PlatformEvent } from '../common/events/types';
import { createMessagingPrisma, type MessagingPrisma } from '../subgraphs/messaging/db/client';
import { sealMessagingContent } from '../subgraphs/messaging/keys/seal';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { finalMessage } from './messaging-helpers';
import { startReceiver, verifySignature, waitFor, type Receiver } from './webhook-receiver';

const SECRET = 'whsec-at-rest-0123456789abcdef';

/**
 * Patient content in the messaging schema (message bodies, subjects and
 * variables, reply text, event data, webhook payloads) is encrypted at rest;
 * every reader (REST, GraphQL, webhooks, subscriptions) still sees plaintext.
 */
describe(`messaging content encrypted at rest (${backendName})`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  let prisma: MessagingPrisma;
  const bus: PlatformEvent<any>[] = [];
  const marker = randomUUID().slice(0, 8);
  const location = `Wing-${marker}-location`;
  const date = '2031-07-19';
  const replyText = `Running late ${marker}-reply`;

  /** Every row of every table of the messaging schema, as text, read straight from the database. */
  async function rawSchemaText(): Promise<string> {
    const db = t.platform.db!;
    const tables = (await db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'messaging'`)).rows;
    expect(tables.map((r) => r.table_name)).toEqual(expect.arrayContaining(['Message', 'InboundMessage', 'Event', 'WebhookDelivery']));
    const parts: string[] = [];
    for (const { table_name } of tables) {
      const { rows } = await db.query<{ row: string }>(`SELECT r::text AS row FROM messaging."${table_name}" r`);
      parts.push(...rows.map((r) => r.row));
    }
    return parts.join('\n');
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestPlatform({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_CA_FILE: receiver.caFile });
    t.platform.runtime.events.subscribe((event) => void bus.push(event));
    prisma = createMessagingPrisma(t.platform.db!);
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await t?.stop();
    await receiver?.close();
  });

  it('[SEC-009] stores no plaintext of bodies, variables or replies, and every reader still sees plaintext', async () => {
    const hook = await t.request('POST', '/v1/webhooks', {
      body: { url: receiver.url('/at-rest'), events: ['message.response', 'message.delivered'], secret: SECRET },
    });
    expect(hook.status).toBe(201);

    const sms = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date, time: '06:47', location } },
    });
    expect(sms.status).toBe(201);
    expect(sms.body.body).toContain(location);
    const email = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: { date, time: '06:47', location } },
    });
    expect(email.status).toBe(201);
    expect(email.body.subject).toBe(`Your appointment on ${date}`);
    expect((await finalMessage(t, sms.body.id)).status).toBe('delivered');
    expect((await finalMessage(t, email.body.id)).status).toBe('delivered');

    const reply = await t.request('POST', '/v1/simulator/replies', { body: { messageId: sms.body.id, body: replyText } });
    expect(reply.status).toBe(201);
    const inbound = await t.request('POST', '/v1/inbound/sms', {
      body: { From: '+31612345671', Body: `${replyText} again`, MessageSid: `SM-${randomUUID()}` },
    });
    expect(inbound.status).toBe(201);

    // Webhooks: the exact plaintext body, signed as always.
    const hooks = await waitFor('the two message.response deliveries', () => {
      const got = receiver.received('/at-rest').filter((h) => h.body.type === 'message.response');
      return got.length >= 2 && got;
    });
    expect(hooks.map((h) => h.body.data.body).sort()).toEqual([replyText, `${replyText} again`]);
    for (const h of hooks) expect(verifySignature(SECRET, h.raw, h.headers['x-webhook-signature'])).toBe(true);
    // Subscriptions mirror the same event.
    const mirrored = bus.find((e) => e.type === 'message.response' && e.id === hooks[0].body.id);
    expect(mirrored?.data).toEqual(hooks[0].body.data);

    // Nothing of it in clear anywhere in the messaging schema.
    const raw = await rawSchemaText();
    expect(raw).toContain(sms.body.id);
    // (The templates' own text is not patient content and stays readable.)
    for (const secret of [location, marker, date, sms.body.body, email.body.body, `Your appointment on ${date}`]) expect(raw).not.toContain(secret);

    // Readers see plaintext: REST, GraphQL, the delivery log.
    const rest = await t.request('GET', `/v1/messages/${sms.body.id}`);
    expect(rest.body).toMatchObject({ body: sms.body.body, variables: { date, time: '06:47', location } });
    const gql = await t.graphql(`query($id: ID!) { message(id: $id) { body subject variables } }`, { id: email.body.id });
    expect(gql.body.data.message).toEqual({ body: email.body.body, subject: `Your appointment on ${date}`, variables: { date, time: '06:47', location } });
    const list = await t.request('GET', '/v1/messages?patientId=p-1001&limit=5');
    expect(list.body.data.find((m: any) => m.id === sms.body.id).body).toBe(sms.body.body);
    const log = await t.graphql(`query($id: ID!) { webhookDeliveries(webhookId: $id) { data { eventType payload } } }`, { id: hook.body.id });
    const logged = log.body.data.webhookDeliveries.data.filter((d: any) => d.eventType === 'message.response');
    expect(logged.map((d: any) => d.payload).sort()).toEqual(hooks.map((h) => h.raw.toString('utf8')).sort());
  });

  it('encrypts rows written before encryption at start-up, and key rotation re-encrypts everything', async () => {
    const db = t.platform.db!;
    const id = randomUUID();
    const legacyBody = `Legacy body ${marker}-old`;
    await db.query(
      `INSERT INTO messaging."Message" ("tenantId", id, "patientId", "templateId", channel, variables, body, subject, status, "updatedAt")
       VALUES ('demo', $1, 'p-1001', 'appointment-reminder', 'sms', $2::jsonb, $3, NULL, 'delivered', now())`,
      [id, JSON.stringify({ date: '2030-01-02', time: '10:00', location: `Old-${marker}-room` }), legacyBody],
    );
    await db.query(
      `INSERT INTO messaging."InboundMessage" (id, "tenantId", "messageId", "patientId", channel, body, action, provider) VALUES ($1, 'demo', $2, 'p-1001', 'sms', $3, 'none', 'api')`,
      [randomUUID(), id, `Legacy reply ${marker}-old`],
    );
    await db.query(`INSERT INTO messaging."Event" ("tenantId", id, type, data, "dispatchedAt") VALUES ('demo', $1, 'message.response', $2::jsonb, now())`, [
      `evt_${randomUUID()}`,
      JSON.stringify({ messageId: id, patientId: 'p-1001', channel: 'sms', body: `Legacy reply ${marker}-old`, receivedAt: new Date().toISOString() }),
    ]);
    // A subject access archive written before archives were sealed: plain ZIP bytes.
    const exportId = randomUUID();
    const legacyChunk = Buffer.from(`PK\u0003\u0004 legacy archive ${marker}-old`);
    await db.query(
      `INSERT INTO messaging."PatientExport" (id, "tenantId", "patientId", "requestedBy", requester, status, size, "expiresAt")
       VALUES ($1, 'demo', 'p-1001', 'admin', '{"roles":["admin"]}'::jsonb, 'done', $2, now() + interval '1 day')`,
      [exportId, legacyChunk.length],
    );
    await db.query(`INSERT INTO messaging."PatientExportChunk" ("exportId", "tenantId", seq, data) VALUES ($1, 'demo', 0, $2)`, [exportId, legacyChunk]);
    const chunkOf = async () =>
      (
        await db.query<{ data: Buffer | null; dataEnc: string | null }>(`SELECT data, "dataEnc" FROM messaging."PatientExportChunk" WHERE "exportId" = $1`, [
          exportId,
        ])
      ).rows[0];
    // Legacy plaintext is readable as it is.
    expect((await t.request('GET', `/v1/messages/${id}`)).body.body).toBe(legacyBody);
    expect(await rawSchemaText()).toContain(`${marker}-old`);

    // What start-up runs.
    const current = new FieldCipher(t.platform.runtime.secrets.encryptionKey);
    const sealed = await sealMessagingContent(prisma, current, { rotate: false });
    expect(sealed.tenants.demo).toMatchObject({
      Message: { sealed: 2 },
      InboundMessage: { sealed: 1 },
      Event: { sealed: 1 },
      PatientExportChunk: { sealed: 1, rotated: 0 },
    });
    const sealedChunk = await chunkOf();
    expect(sealedChunk.data).toBeNull();
    expect(current.decryptBytes(sealedChunk.dataEnc!).equals(legacyChunk)).toBe(true);
    expect(await rawSchemaText()).not.toContain(`${marker}-old`);
    const read = await t.request('GET', `/v1/messages/${id}`);
    expect(read.body).toMatchObject({ body: legacyBody, variables: { date: '2030-01-02', time: '10:00', location: `Old-${marker}-room` } });
    // A second run finds nothing to do.
    expect((await sealMessagingContent(prisma, current, { rotate: false })).tenants).toEqual({});

    // A subscription in a secret rotation's overlap holds its previous secret sealed too.
    const rotating = await t.request('POST', '/v1/webhooks', { body: { url: receiver.url('/at-rest-rotating'), events: ['message.sent'], secret: SECRET } });
    expect((await t.request('PATCH', `/v1/webhooks/${rotating.body.id}`, { body: { secret: `${SECRET}-next` } })).status).toBe(200);
    const previous = await db.query<{ previousSecret: string }>(`SELECT "previousSecret" FROM messaging."WebhookSubscription" WHERE id = $1`, [
      rotating.body.id,
    ]);
    expect(previous.rows[0].previousSecret).not.toContain(SECRET);
    expect(current.decrypt(previous.rows[0].previousSecret)).toBe(SECRET);

    // Rotation to a new key: every encrypted value of the schema then reads with the new key alone.
    const newKey = randomBytes(32);
    const next = new FieldCipher(newKey, [t.platform.runtime.secrets.encryptionKey]);
    const rotated = await sealMessagingContent(prisma, next, { rotate: true });
    expect(rotated.unreadable).toEqual([]);
    expect(rotated.tenants.demo.Message.rotated).toBeGreaterThan(0);
    const onlyNew = new FieldCipher(newKey);
    const { rows } = await db.query<{ v: string }>(
      `SELECT "bodyEnc" AS v FROM messaging."Message" UNION ALL SELECT "variablesEnc" FROM messaging."Message" UNION ALL SELECT "recipientEnc" FROM messaging."Message"
       UNION ALL SELECT "bodyEnc" FROM messaging."InboundMessage" UNION ALL SELECT "dataEnc" FROM messaging."Event"
       UNION ALL SELECT "payloadEnc" FROM messaging."WebhookDelivery" UNION ALL SELECT secret FROM messaging."WebhookSubscription"
       UNION ALL SELECT "previousSecret" FROM messaging."WebhookSubscription"`,
    );
    const values = rows.map((r) => r.v).filter((v) => v !== null);
    expect(values.length).toBeGreaterThan(10);
    expect(values).toContain(
      (await db.query<{ v: string }>(`SELECT "previousSecret" AS v FROM messaging."WebhookSubscription" WHERE id = $1`, [rotating.body.id])).rows[0].v,
    );
    for (const value of values) expect(() => onlyNew.decrypt(value)).not.toThrow();
    // Export archives are covered too: their chunk reads with the new key alone.
    expect(rotated.tenants.demo.PatientExportChunk).toEqual({ sealed: 0, rotated: 1 });
    expect(onlyNew.decryptBytes((await chunkOf()).dataEnc!).equals(legacyChunk)).toBe(true);
  });
});
