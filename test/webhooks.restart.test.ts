import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { processDatabase, type ProcessDatabase } from './support/process-database';
import { startReceiver, verifySignature, waitFor, type Receiver } from './webhook-receiver';

const SECRET = 'whsec-restart-0123456789';
// Not imported from ./harness: this file runs the platform in child processes only, and loading the
// whole platform here without using it upsets jest's module cache for the next file of the same worker.
const backendName = process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite';

/** One CareGraph process (test/support/webhook-child.js) that the test can SIGKILL. */
interface Child {
  url: string;
  process: ChildProcessWithoutNullStreams;
  emit(type: string, data: object): Promise<{ id: string; timestamp: string }>;
  exited: Promise<number | null>;
}

async function startChild(env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, [join(__dirname, 'support/webhook-child.js')], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waiting: Array<(line: any) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.startsWith('{"')) return;
    const parsed = JSON.parse(line);
    if (parsed.ready || parsed.event) waiting.shift()?.(parsed);
  });
  const next = () => new Promise<any>((resolve) => waiting.push(resolve));
  const ready = await Promise.race([next(), exited.then((code) => Promise.reject(new Error(`child exited (${code}) before ready: ${stderr}`)))]);
  return {
    url: ready.url,
    process: child,
    exited,
    emit: async (type, data) => {
      const answer = next();
      child.stdin.write(`${JSON.stringify({ tenantId: 'demo', type, data })}\n`);
      return (await answer).event;
    },
  };
}

describe(`webhook retries across a crash (${backendName})`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-webhook-restart-'));
  let database: ProcessDatabase | undefined;
  let receiver: Receiver;
  const children: Child[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    // A file-backed PGlite in DATA_DIR, or a database on the test server: either survives the kill.
    database = await processDatabase(dataDir);
  });
  afterAll(async () => {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await database?.drop();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('[WHK-008] makes a pending retry at its due time after the process was killed, with no extra deliveries', async () => {
    const env = {
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ...database!.env,
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_RETRY_SCHEDULE: '5s,1s,1s,1s,1s',
      // Its own event channel and rate-limit keys on a Redis that other test files share; both processes of this test use the same.
      ...(process.env.TEST_REDIS_URL
        ? { REDIS_URL: process.env.TEST_REDIS_URL, REDIS_EVENTS_CHANNEL: `caregraph:test:${randomUUID()}`, RATE_LIMIT_KEY_PREFIX: `test:${randomUUID()}` }
        : {}),
    };
    const token = await database!.token();
    const call = async (base: string, method: string, path: string, body?: object) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    receiver.behave('/flaky', (n) => (n === 1 ? { status: 503 } : { status: 200 }));
    const first = await startChild(env);
    children.push(first);
    const healthy = await call(first.url, 'POST', '/v1/webhooks', { url: receiver.url('/healthy'), events: ['message.delivered'], secret: SECRET });
    const flaky = await call(first.url, 'POST', '/v1/webhooks', { url: receiver.url('/flaky'), events: ['message.delivered'], secret: SECRET });
    expect([healthy.status, flaky.status]).toEqual([201, 201]);

    const event = await first.emit('message.delivered', { messageId: 'm-restart', patientId: 'p-1001', channel: 'sms', status: 'delivered' });
    await waitFor('the healthy delivery', () => receiver.received('/healthy').length === 1);
    const pending = await waitFor('the failed first attempt to be recorded', async () => {
      const [delivery] = (await call(first.url, 'GET', `/v1/webhooks/${flaky.body.id}/deliveries`)).body.data;
      return delivery?.attemptCount === 1 && delivery;
    });
    expect(pending).toMatchObject({ eventId: event.id, status: 'pending', nextAttemptAt: expect.any(String) });
    const due = Date.parse(pending.nextAttemptAt);

    // Crash: no drain, no shutdown hooks.
    first.process.kill('SIGKILL');
    await first.exited;
    expect(receiver.received('/flaky')).toHaveLength(1);

    const second = await startChild(env);
    children.push(second);
    const retry = await waitFor('the retry after the restart', () => receiver.received('/flaky')[1], 30_000);
    expect(retry.body.id).toBe(event.id);
    expect(retry.at).toBeGreaterThanOrEqual(due);
    expect(verifySignature(SECRET, retry.raw, retry.headers['x-webhook-signature'])).toBe(true);

    const [done] = await waitFor('the retry to be recorded', async () => {
      const log = (await call(second.url, 'GET', `/v1/webhooks/${flaky.body.id}/deliveries`)).body.data;
      return log?.[0]?.status === 'succeeded' && log;
    });
    expect(done.attempts.map((a: any) => [a.attempt, a.statusCode])).toEqual([
      [1, 503],
      [2, 200],
    ]);

    // A later event reaches the healthy receiver; the one delivered before the crash was not sent again.
    const later = await second.emit('message.delivered', { messageId: 'm-later', patientId: 'p-1001', channel: 'sms', status: 'delivered' });
    await waitFor('the later event', () => receiver.received('/healthy').some((h) => h.body.id === later.id));
    expect(receiver.received('/healthy').map((h) => h.body.id)).toEqual([event.id, later.id]);
    await waitFor('the later event on the flaky endpoint', () => receiver.received('/flaky').some((h) => h.body.id === later.id));
    expect(receiver.received('/flaky').map((h) => h.body.id)).toEqual([event.id, event.id, later.id]);

    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
