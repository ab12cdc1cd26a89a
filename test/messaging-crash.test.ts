import { FieldCipher } from '../common/crypto';
import { openDatabase } from '../common/db/database';
import { backendName } from './harness';
import { eventually } from './messaging-helpers';
import { crashTestServer } from './support/crash-server';

const VARS = { date: '2026-12-01', time: '09:30' };

/**
 * The compiled all-in-one process, killed with SIGKILL while messages are
 * queued and being sent, then restarted on the same database: every accepted
 * message must end in exactly one final status.
 */
describe(`messaging crash recovery (${backendName})`, () => {
  const { dataDir, databaseUrl, encryptionKey, api, start, kill } = crashTestServer({
    // Slow sends, so the kill finds messages in every state; a short lease and job expiry so recovery is quick.
    SIM_SEND_DELAY_MS: '600',
    SIM_DELIVER_DELAY_MS: '300',
    DELIVERY_LEASE_MS: '3000',
    DELIVERY_JOB_EXPIRY_SECONDS: '5',
  });

  const allMessages = async () => (await api('GET', '/v1/messages?limit=100')).body.data as { id: string; status: string; patientId: string }[];

  it('[MSG-015] brings every accepted message to exactly one final status after a SIGKILL', async () => {
    await start();
    const items = [
      ...Array.from({ length: 6 }, () => ({ patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS })),
      ...Array.from({ length: 3 }, () => ({ patientId: 'p-1002', templateId: 'appointment-reminder', channel: 'sms', variables: VARS })),
      ...Array.from({ length: 6 }, () => ({ patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: VARS })),
    ];
    const batch = await api('POST', '/v1/messages/batch', { messages: items });
    expect(batch.body.accepted).toBe(items.length);
    const accepted: string[] = batch.body.results.map((r: any) => r.id);
    // Kill while some sends are in flight.
    await eventually(async () => ((await allMessages()).some((m) => m.status === 'sending') ? true : undefined), 'a send in flight');
    await kill();

    await start();
    const final = await eventually(
      async () => {
        const messages = await allMessages();
        return messages.length === accepted.length && messages.every((m) => m.status === 'delivered' || m.status === 'failed') ? messages : undefined;
      },
      'every message to finish after the restart',
      90_000,
    );
    expect(final.map((m) => m.id).sort()).toEqual([...accepted].sort());
    for (const message of final) {
      expect(message.status).toBe(message.patientId === 'p-1002' ? 'failed' : 'delivered');
      const full = (await api('GET', `/v1/messages/${message.id}`)).body;
      const history: string[] = full.statusHistory.map((s: any) => s.status);
      expect(new Set(history).size).toBe(history.length);
      expect(history.filter((s) => s === 'delivered' || s === 'failed')).toEqual([message.status]);
      expect(history[0]).toBe('queued');
    }
    await kill();
    // One final webhook event per message in the outbox, too.
    const db = await openDatabase({ databaseUrl: databaseUrl(), dataDir });
    try {
      // Event data is encrypted at rest: decrypt to find each event's message.
      const cipher = new FieldCipher(encryptionKey());
      const { rows } = await db.query<{ dataEnc: string }>(`SELECT "dataEnc" FROM messaging."Event" WHERE type IN ('message.delivered', 'message.failed')`);
      const ids = rows.map((r) => (JSON.parse(cipher.decrypt(r.dataEnc)) as { messageId: string }).messageId);
      expect([...ids].sort()).toEqual([...accepted].sort());
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await db.close();
    }
  }, 240_000);

  it('[MSG-006, MSG-015] stores a batch whole or not at all when the process is killed during its intake', async () => {
    // The batch's messages (p-1003, email, from now on) are held by quiet hours: nothing sends them while the rounds run.
    const since = new Date().toISOString();
    const hhmm = (offsetMin: number) => new Date(Date.now() + offsetMin * 60_000).toISOString().slice(11, 16);
    const items = Array.from({ length: 1000 }, () => ({ patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: VARS }));
    // What the batch left behind: its messages, their queued history rows and their delivery jobs.
    const stored = async () => {
      const db = await openDatabase({ databaseUrl: databaseUrl(), dataDir });
      try {
        const { rows } = await db.query<{ messages: number; history: number; jobs: number }>(
          `SELECT (SELECT count(*)::int FROM messaging."Message" m WHERE m."patientId" = 'p-1003' AND m.channel = 'email' AND m."createdAt" >= $1::timestamp) AS messages,
                  (SELECT count(*)::int FROM messaging."MessageStatusChange" h JOIN messaging."Message" m ON m.id = h."messageId"
                    WHERE m."patientId" = 'p-1003' AND m.channel = 'email' AND m."createdAt" >= $1::timestamp AND h.status = 'queued') AS history,
                  (SELECT count(*)::int FROM pgboss.job j JOIN messaging."Message" m ON m.id = j.data->>'messageId'
                    WHERE j.name = 'messaging-deliver' AND m."patientId" = 'p-1003' AND m.channel = 'email' AND m."createdAt" >= $1::timestamp) AS jobs`,
          [since],
        );
        return rows[0];
      } finally {
        await db.close();
      }
    };
    // Every message the batch left has its queued row and its job; returns how many it left, and the counts now
    // (the next round's starting point: nothing changes while the process is down).
    const addedSince = async (before: Awaited<ReturnType<typeof stored>>) => {
      const after = await stored();
      const added = after.messages - before.messages;
      expect(after.history - before.history).toBe(added);
      expect(after.jobs - before.jobs).toBe(added);
      return { added, after };
    };
    // A warm server (its first request pays for start-up work) times one whole intake; later rounds kill it at
    // points across that time: each time all 1,000 are stored or none.
    const warmUp = () =>
      api('POST', '/v1/messages/batch', { messages: [{ patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS }] });
    const before = await stored();
    await start();
    await api('PATCH', '/v1/patients/p-1003/preferences', { quietHours: { start: hhmm(-60), end: hhmm(180), timezone: 'UTC' } });
    await warmUp();
    const startedAt = Date.now();
    expect((await api('POST', '/v1/messages/batch', { messages: items })).body.accepted).toBe(1000);
    const intakeMs = Date.now() - startedAt;
    await kill();
    let round = await addedSince(before);
    expect(round.added).toBe(1000);
    for (const fraction of [0.3, 0.55, 0.8]) {
      await start();
      await warmUp();
      const request = api('POST', '/v1/messages/batch', { messages: items }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, intakeMs * fraction));
      await kill();
      await request;
      round = await addedSince(round.after);
      expect([0, 1000]).toContain(round.added);
    }
  }, 240_000);
});
