import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type Database } from '../common/db/database';
import { createTestDatabase, type TestDatabase } from '../common/db/test-backends';
import { issueAccessToken } from '../common/auth/tokens';
import { startPlatform, type Platform } from '../bin/platform';
import { startTestPlatform, backendName, scaleOutEnv, type TestPlatform } from './harness';
import { countRows } from './messaging-helpers';

const TIMEOUT_MS = 1500;
const VARS = { date: '2026-12-01', time: '09:30', location: 'Room 2' };
const SEND = { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS };

type LockMode = 'EXCLUSIVE' | 'ACCESS EXCLUSIVE';

/**
 * Holds a lock on a messaging table from a second connection until the returned
 * function is called. On PostgreSQL, EXCLUSIVE lets reads through and stops writes;
 * ACCESS EXCLUSIVE stops reads too. PGlite has a single connection: while the
 * test's transaction is open every query of the platform waits.
 */
async function holdTable(db: Database, table: string, mode: LockMode): Promise<() => Promise<void>> {
  const lock = `LOCK TABLE messaging."${table}" IN ${mode} MODE`;
  if (db.kind === 'postgres') {
    const client = new pg.Client({ connectionString: db.connectionString });
    await client.connect();
    await client.query('BEGIN');
    await client.query(lock);
    return async () => {
      await client.query('COMMIT');
      await client.end();
    };
  }
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const done = db.pglite!.transaction(async (tx) => {
    await tx.query(lock);
    locked();
    await released;
  });
  await holding;
  return async () => {
    release();
    await done;
  };
}

/** Runs `request` while the lock is held, releasing it `holdMs` after the request went out. */
async function whileHeld<T>(db: Database, table: string, mode: LockMode, holdMs: number, request: () => Promise<T>): Promise<T> {
  const release = await holdTable(db, table, mode);
  const releasing = new Promise<void>((resolve, reject) => setTimeout(() => void release().then(resolve, reject), holdMs));
  try {
    return await request();
  } finally {
    await releasing;
  }
}

describe(`request deadlines (${backendName})`, () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform({ REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) });
    // Warm every path of a send, so only the lock below can hold one up.
    expect((await t.request('POST', '/v1/messages', { body: SEND })).status).toBe(201);
  });
  afterAll(() => t?.stop());

  it('answers a send held past its deadline with what happened, and its retry does not duplicate it', async () => {
    const before = await countRows(t, 'Message');
    // Released after the deadline, before the gateway's last word (twice the timeout).
    const res = await whileHeld(t.platform.db!, 'Message', 'EXCLUSIVE', TIMEOUT_MS + 1000, () => t.request('POST', '/v1/messages', { body: SEND }));
    // A client that got no message back sends again, as a 503 saying nothing was done invites it to (on a busy
    // machine the retry may miss the deadline too: it is then refused the same way and tried once more).
    for (let retry = res, tries = 0; retry.status === 503 && tries < 5; tries++) {
      expect(retry.headers.get('x-request-outcome')).toBe('not-started');
      retry = await t.request('POST', '/v1/messages', { body: SEND });
      if (retry.status !== 503) expect(retry.status).toBe(201);
    }
    expect(await countRows(t, 'Message')).toBe(before + 1);
    if (backendName === 'PGlite') {
      // Every query waited, so the send was stopped at its deadline before writing: refused, nothing stored.
      expect(res.status).toBe(503);
      expect(res.headers.get('x-request-outcome')).toBe('not-started');
      expect(res.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/nothing was done/i) });
    } else {
      // The write had started before the deadline: it finishes, and the late answer is its real result.
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ id: expect.any(String), status: 'queued' });
    }
  });

  it('refuses a GraphQL send that reaches its write after the deadline, saying nothing was done', async () => {
    const before = await countRows(t, 'Message');
    const mutation = `mutation($input: SendMessageInput!) { sendMessage(input: $input) { id } }`;
    // The send reads the patient's preferences before it writes: held, it reaches its write after the deadline.
    const res = await whileHeld(t.platform.db!, 'CommunicationPreference', 'ACCESS EXCLUSIVE', TIMEOUT_MS + 1000, () => t.graphql(mutation, { input: SEND }));
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: [{ outcome: 'not-started' }] });
    expect(res.headers.get('x-request-outcome')).toBe('not-started');
    expect(res.body.errors[0].message).toMatch(/nothing was done/);
    expect(await countRows(t, 'Message')).toBe(before);
  });

  it('refuses a whole batch that reaches its write after the deadline, and stores all of it on the retry', async () => {
    const before = await countRows(t, 'Message');
    const messages = [SEND, { ...SEND, channel: 'email' }, { ...SEND, patientId: 'p-9999' }];
    // The batch reads the patients' preferences before its one write transaction: held, it reaches it too late.
    const res = await whileHeld(t.platform.db!, 'CommunicationPreference', 'ACCESS EXCLUSIVE', TIMEOUT_MS + 1000, () =>
      t.request('POST', '/v1/messages/batch', { body: { messages } }),
    );
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-outcome')).toBe('not-started');
    expect(await countRows(t, 'Message')).toBe(before);
    // On a loaded machine the retry may miss the deadline too: refused the same way, it is tried again.
    let retry = await t.request('POST', '/v1/messages/batch', { body: { messages } });
    for (let tries = 1; retry.status === 503 && retry.headers.get('x-request-outcome') === 'not-started' && tries < 5; tries++)
      retry = await t.request('POST', '/v1/messages/batch', { body: { messages } });
    expect(retry.body).toMatchObject({ accepted: 2, rejected: 1 });
    expect(await countRows(t, 'Message')).toBe(before + 2);
  });

  // Only PostgreSQL can hold up a write that has begun: PGlite has one connection, so the lock there also stops the
  // send's reads and the send is refused at its deadline (above). gateway/security/timeout.test.ts covers this answer on both.
  const onPostgres = backendName === 'PostgreSQL' ? it : it.skip;

  onPostgres('answers a send still running at twice its deadline with outcome unknown and the key that makes its retry safe', async () => {
    const before = await countRows(t, 'Message');
    const res = await whileHeld(t.platform.db!, 'Message', 'EXCLUSIVE', 2 * TIMEOUT_MS + 1500, () => t.request('POST', '/v1/messages', { body: SEND }));
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-outcome')).toBe('unknown');
    const key = res.headers.get('idempotency-key');
    expect(key).toMatch(/^[\x21-\x7E]{1,255}$/);
    expect(res.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining(key!) });
    // The first attempt may commit now that the lock is gone; the retry with its key answers with that message.
    // A retry can itself outlast the deadline on a busy machine: a client retries again with the same key.
    let retry = await t.request('POST', '/v1/messages', { body: SEND, headers: { 'idempotency-key': key! } });
    for (let attempt = 1; retry.status === 503 && retry.headers.get('idempotency-key') === key && attempt < 5; attempt++)
      retry = await t.request('POST', '/v1/messages', { body: SEND, headers: { 'idempotency-key': key! } });
    expect(retry.status).toBe(201);
    const again = await t.request('POST', '/v1/messages', { body: SEND, headers: { 'idempotency-key': key! } });
    expect(again.body.id).toBe(retry.body.id);
    expect(await countRows(t, 'Message')).toBe(before + 1);
  });

  it('answers a read held past its deadline with 503 saying nothing was changed', async () => {
    const res = await whileHeld(t.platform.db!, 'Message', 'ACCESS EXCLUSIVE', TIMEOUT_MS + 1000, () => t.request('GET', '/v1/messages?limit=5'));
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-outcome')).toBe('not-started');
    expect(res.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/nothing was changed/i) });
  });
});

const scaleOut = process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL ? describe : describe.skip;

scaleOut('request deadlines over HTTP between roles (PostgreSQL + Redis)', () => {
  let database: TestDatabase;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-deadline-'));
  const started: Platform[] = [];
  afterAll(async () => {
    for (const platform of started.reverse()) await platform.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a messaging subgraph behind HTTP refuses a send that reaches its write after the deadline header', async () => {
    database = await createTestDatabase();
    const env = scaleOutEnv(dataDir, database.databaseUrl, { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) });
    const ehr = await startPlatform('ehr', env);
    started.push(ehr);
    const messaging = await startPlatform('messaging', { ...env, EHR_URL: ehr.subgraphUrls.ehr });
    started.push(messaging);
    const gateway = await startPlatform('gateway', { ...env, EHR_URL: ehr.subgraphUrls.ehr, MESSAGING_URL: messaging.subgraphUrls.messaging });
    started.push(gateway);
    const token = await issueAccessToken(gateway.runtime.secrets.jwtSecret!, { sub: 't', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 });
    const send = () =>
      fetch(`${gateway.gateway!.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(SEND),
      });
    // The first sends warm the cold roles: on a loaded machine the very first may pass the 1.5 s deadline itself.
    let warm = 0;
    for (let attempt = 0; attempt < 5 && warm !== 201; attempt++) warm = (await send()).status;
    expect(warm).toBe(201);
    const count = async () => (await messaging.db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM messaging."Message"`)).rows[0].n;
    const before = await count();

    const res = await whileHeld(messaging.db!, 'CommunicationPreference', 'ACCESS EXCLUSIVE', TIMEOUT_MS + 1000, send);
    expect(res.status).toBe(503);
    expect(res.headers.get('x-request-outcome')).toBe('not-started');
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/nothing was done/);
    expect(await count()).toBe(before);
  });
});
