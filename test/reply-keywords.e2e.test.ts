import { FieldCipher } from '../common/crypto';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { eventually, finalMessage } from './messaging-helpers';

const VARS = { date: '2026-12-01', time: '09:30' };
const SENDER = 'Clinic Amstel';
const ORG_KEYWORDS = `mutation($settings: OrganizationSettingsInput) {
  updateOrganization(id: "demo", name: "${SENDER}", settings: $settings, reason: "reply keywords") { settings { replyKeywords { language optOut optIn help } } }
}`;

describe(`reply keywords in the patient's language (${backendName})`, () => {
  let t: TestPlatform;
  let platformAdmin: string;
  /** A plain SMS to p-1001 (not a reminder): the conversation most replies below answer. */
  let conversation: string;

  beforeAll(async () => {
    t = await startTestPlatform();
    platformAdmin = await t.token({ tenants: [], roles: ['platform_admin'], sub: 'ops-1' });
    const org = await t.graphql(
      ORG_KEYWORDS,
      {
        settings: {
          replyKeywords: [
            { language: 'nl', optOut: ['Uitschrijven'] },
            { language: 'en', optOut: ['CANCEL'] },
          ],
        },
      },
      { token: platformAdmin },
    );
    expect(org.body.errors).toBeUndefined();
    expect(org.body.data.updateOrganization.settings.replyKeywords).toEqual([
      { language: 'en', optOut: ['CANCEL'], optIn: [], help: [] },
      { language: 'nl', optOut: ['Uitschrijven'], optIn: [], help: [] },
    ]);
    const sent = await t.request('POST', '/v1/messages', {
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS },
    });
    expect(sent.status).toBe(201);
    conversation = sent.body.id;
    await finalMessage(t, conversation);
  });
  afterAll(() => t?.stop());

  const speaks = async (language: string) => {
    const res = await t.request('PATCH', '/v1/patients/p-1001/preferences', { body: { language } });
    expect(res.status).toBe(200);
  };
  const reply = async (body: string, messageId = conversation) => {
    const res = await t.request('POST', '/v1/simulator/replies', { body: { messageId, body } });
    expect(res.status).toBe(201);
    return res.body;
  };
  const sms = async () => (await t.request('GET', '/v1/patients/p-1001')).body.preferences.channels.sms;
  const helpReplies = async () =>
    (await t.request('GET', '/v1/messages?patientId=p-1001&limit=100')).body.data.filter((m: { templateId: string }) => m.templateId === 'keyword-help');
  const outbox = async (type: string) => {
    const cipher = new FieldCipher(t.platform.runtime.secrets.encryptionKey);
    const { rows } = await t.platform.db!.query<{ dataEnc: string }>(`SELECT "dataEnc" FROM messaging."Event" WHERE type = $1 ORDER BY "createdAt"`, [type]);
    return rows.map((r) => JSON.parse(cipher.decrypt(r.dataEnc)));
  };

  it.each([
    ['en', 'Stop', 'STOP', 'unstop', 'UNSTOP'],
    ['nl', 'afmelden', 'AFMELDEN', 'Aanmelden', 'AANMELDEN'],
    ['de', 'STOPP', 'STOPP', 'anmelden', 'ANMELDEN'],
    ['fr', 'arrêt', 'ARRET', 'Reprendre', 'REPRENDRE'],
    ['fr', 'Désabonner', 'DESABONNER', 'reprendre', 'REPRENDRE'],
    ['es', 'baja', 'BAJA', 'ALTA', 'ALTA'],
  ])('%s: %j opts out and %j… opts in again', async (language, out, outKeyword, back, backKeyword) => {
    await speaks(language);
    const before = (await outbox('message.response')).length;
    expect(await reply(out)).toMatchObject({ action: 'opted_out', keyword: outKeyword });
    expect(await sms()).toBe(false);
    expect(await reply(back)).toMatchObject({ action: 'opted_in', keyword: backKeyword });
    expect(await sms()).toBe(true);
    // Each reply is a message.response, as any reply; the change is logged as a keyword preference change.
    expect((await outbox('message.response')).length).toBe(before + 2);
    const { rows } = await t.platform.db!.query<{ source: string; actor: string }>(
      `SELECT source, actor FROM messaging."PreferenceChange" WHERE "patientId" = 'p-1001' ORDER BY at DESC LIMIT 2`,
    );
    expect(rows).toEqual([
      { source: 'keyword', actor: 'patient:p-1001' },
      { source: 'keyword', actor: 'patient:p-1001' },
    ]);
  });

  it.each([
    ['en', 'help', 'Clinic Amstel: this is an automatic message. Reply STOP'],
    ['en', 'INFO', 'Clinic Amstel: this is an automatic message. Reply STOP'],
    ['nl', 'Hulp', 'Clinic Amstel: dit is een automatisch bericht. Antwoord AFMELDEN'],
    ['de', 'hilfe', 'Clinic Amstel: Dies ist eine automatische Nachricht. Antworten Sie ABMELDEN'],
    ['fr', 'AIDE', 'Clinic Amstel : ceci est un message automatique. Répondez ARRET'],
    ['es', 'ayuda', 'Clinic Amstel: este es un mensaje automático. Responda BAJA'],
  ])('%s: %j is answered with the help reply in that language, naming the sender, sent like any message', async (language, word, start) => {
    await speaks(language);
    const earlier = new Set((await helpReplies()).map((m: { id: string }) => m.id));
    expect(await reply(word)).toMatchObject({ action: 'help', keyword: word.toUpperCase() });
    const [answer] = (await helpReplies()).filter((m: { id: string }) => !earlier.has(m.id));
    expect(answer).toMatchObject({ patientId: 'p-1001', channel: 'sms', language, templateId: 'keyword-help' });
    expect(answer.body.startsWith(start)).toBe(true);
    const done = await finalMessage(t, answer.id);
    expect(done.status).toBe('delivered');
    expect(done.statusHistory.map((s: { status: string }) => s.status)).toEqual(['queued', 'sending', 'sent', 'delivered']);
    expect((await outbox('message.delivered')).filter((d) => d.messageId === answer.id)).toHaveLength(1);
  });

  it('takes the English words from a Dutch patient', async () => {
    await speaks('nl-BE');
    expect(await reply('UNSUBSCRIBE')).toMatchObject({ action: 'opted_out', keyword: 'UNSUBSCRIBE' });
    expect(await reply('start')).toMatchObject({ action: 'opted_in', keyword: 'START' });
    expect(await sms()).toBe(true);
  });

  it("[MSG-011] reads another language's word as a plain reply: AFMELDEN from an English patient, STOPP from a Dutch one", async () => {
    await speaks('en');
    expect(await reply('AFMELDEN')).toMatchObject({ action: 'none', keyword: null });
    await speaks('nl');
    expect(await reply('stopp')).toMatchObject({ action: 'none', keyword: null });
    expect(await sms()).toBe(true);
  });

  it("takes the tenant's own words in their language only", async () => {
    await speaks('nl');
    expect(await reply('uitschrijven')).toMatchObject({ action: 'opted_out', keyword: 'UITSCHRIJVEN' });
    expect(await reply('AANMELDEN')).toMatchObject({ action: 'opted_in' });
    await speaks('de');
    expect(await reply('uitschrijven')).toMatchObject({ action: 'none' });
    expect(await sms()).toBe(true);
  });

  it('sends no help reply while the patient has sms off', async () => {
    await speaks('en');
    await reply('STOP');
    const before = (await helpReplies()).length;
    expect(await reply('HELP')).toMatchObject({ action: 'help' });
    expect((await helpReplies()).length).toBe(before);
    await reply('START');
  });

  it('refuses tenant words that clash (VALIDATION_ERROR naming where the word clashes) and keeps the settings', async () => {
    const clash = await t.request('POST', '/graphql', {
      token: platformAdmin,
      body: { query: ORG_KEYWORDS, variables: { settings: { replyKeywords: [{ language: 'nl', optOut: ['aanmelden'] }] } } },
    });
    expect(clash.body.errors[0].extensions).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'replyKeywords.nl.optOut', message: "'AANMELDEN' is already an opt-in word" }],
    });
    const twice = await t.graphql(
      ORG_KEYWORDS,
      {
        settings: {
          replyKeywords: [
            { language: 'de', help: ['Frage'] },
            { language: 'de', help: ['Fragen'] },
          ],
        },
      },
      { token: platformAdmin },
    );
    expect(twice.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const org = await t.graphql('{ organization(id: "demo") { name settings { replyKeywords { language optOut } } } }', undefined, { token: platformAdmin });
    expect(org.body.data.organization).toEqual({
      name: SENDER,
      settings: {
        replyKeywords: [
          { language: 'en', optOut: ['CANCEL'] },
          { language: 'nl', optOut: ['Uitschrijven'] },
        ],
      },
    });
  });

  it("[MSG-011] cancels the appointment on CANCEL to a reminder and never opts out, through the provider's inbound path, also after a help reply", async () => {
    await speaks('en');
    const reminder = await t.request('POST', '/v1/appointments/appt-1001/remind');
    expect(reminder.status).toBe(201);
    expect((await finalMessage(t, reminder.body.id)).status).toBe('delivered');
    const inbound = (body: string) => t.request('POST', '/v1/inbound/sms', { body: { From: '+31612345671', Body: body } });

    // HELP to the reminder: answered, and the reminder stays the conversation.
    const help = await inbound('Help');
    expect(help.body).toMatchObject({ messageId: reminder.body.id, action: 'help' });
    const answer = (await helpReplies()).find((m: { createdAt: string }) => Date.parse(m.createdAt) >= Date.parse(reminder.body.createdAt));
    await finalMessage(t, answer.id);

    const cancel = await inbound('cancel');
    expect(cancel.status).toBe(201);
    expect(cancel.body).toMatchObject({ messageId: reminder.body.id, keyword: 'CANCEL', action: 'cancelled' });
    expect(await sms()).toBe(true);
    const appointments = await t.request('GET', '/v1/appointments');
    expect(appointments.body.data.find((a: { id: string }) => a.id === 'appt-1001').status).toBe('cancelled');
    await eventually(async () => ((await outbox('appointment.cancelled')).length > 0 ? true : undefined), 'the relayed appointment.cancelled');

    // The same word to a message that is no reminder is the tenant's opt-out word.
    expect(await reply('CANCEL')).toMatchObject({ action: 'opted_out', keyword: 'CANCEL' });
    expect(await sms()).toBe(false);
    expect(await reply('START')).toMatchObject({ action: 'opted_in' });
  });
  it("lets the tenant's admin read the words in force and set their own words of one language", async () => {
    const admin = await t.token({ sub: 'demo-admin' });
    const SET =
      'mutation($language: String!, $optOut: [String!], $optIn: [String!]) { setReplyKeywords(language: $language, optOut: $optOut, optIn: $optIn, reason: "our words") { language optOut optIn help } }';
    const set = await t.graphql(SET, { language: 'de', optOut: ['Austragen'] }, { token: admin });
    expect(set.body.errors).toBeUndefined();
    expect(set.body.data.setReplyKeywords[0]).toEqual({
      language: 'en',
      optOut: ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'END', 'QUIT', 'REVOKE', 'OPTOUT', 'CANCEL'],
      optIn: ['START', 'UNSTOP'],
      help: ['HELP', 'INFO'],
    });
    expect(set.body.data.setReplyKeywords.find((k: { language: string }) => k.language === 'de')).toEqual({
      language: 'de',
      optOut: ['STOPP', 'ABMELDEN', 'AUSTRAGEN'],
      optIn: ['ANMELDEN'],
      help: ['HILFE'],
    });
    await speaks('de');
    expect(await reply('austragen')).toMatchObject({ action: 'opted_out', keyword: 'AUSTRAGEN' });
    expect(await reply('Anmelden')).toMatchObject({ action: 'opted_in' });

    const clash = await t.graphql(SET, { language: 'de', optIn: ['stopp'] }, { token: admin });
    expect(clash.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'replyKeywords.de.optIn' }] });
    const nurse = await t.token({ roles: ['nurse'] });
    expect((await t.graphql(SET, { language: 'de', optOut: ['weg'] }, { token: nurse })).body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await t.graphql('{ replyKeywords { language } }', undefined, { token: nurse })).body.errors[0].extensions.code).toBe('FORBIDDEN');

    const removed = await t.graphql(SET, { language: 'de' }, { token: admin });
    expect(removed.body.data.setReplyKeywords.find((k: { language: string }) => k.language === 'de').optOut).toEqual(['STOPP', 'ABMELDEN']);
    const { rows } = await t.platform.db!.query<{ actor: string; reason: string }>(
      `SELECT actor, reason FROM messaging."OrganizationChange" WHERE "organizationId" = 'demo' ORDER BY at DESC LIMIT 2`,
    );
    expect(rows).toEqual([
      { actor: 'demo-admin', reason: 'our words' },
      { actor: 'demo-admin', reason: 'our words' },
    ]);
    // The other languages' own words stay.
    const all = await t.graphql('{ replyKeywords { language optOut } }', undefined, { token: admin });
    expect(all.body.data.replyKeywords.find((k: { language: string }) => k.language === 'nl').optOut).toEqual(['AFMELDEN', 'UITSCHRIJVEN']);
  });
});
