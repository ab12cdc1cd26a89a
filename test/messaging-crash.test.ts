import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { issueAccessToken } from '../common/auth/tokens';
import { createTestDatabase, openDatabase, type TestDatabase } from '../common/db/database';
import { projectRoot } from '../common/paths';
import { backendName } from './harness';
import { eventually } from './messaging-helpers';

const VARS = { date: '2026-12-01', time: '09:30' };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The compiled all-in-one process, killed with SIGKILL while messages are
 * queued and being sent, then restarted on the same database: every accepted
 * message must end in exactly one final status.
 */
describe(`messaging crash recovery (${backendName})`, () => {
  const root = projectRoot();
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-crash-'));
  const secret = randomBytes(32).toString('base64url');
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let base: string;
  let child: ChildProcess | undefined;
  let token: string;

  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
    database = process.env.TEST_DATABASE_URL ? await createTestDatabase() : { databaseUrl: '', drop: async () => {} };
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      AUTH_JWT_SECRET: secret,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
      // Slow sends, so the kill finds messages in every state; a short lease so recovery is quick.
      SIM_SEND_DELAY_MS: '1500',
      SIM_DELIVER_DELAY_MS: '300',
      DELIVERY_LEASE_MS: '3000',
    };
    token = await issueAccessToken(new TextEncoder().encode(secret), { sub: 'crash-test', tenants: ['demo'], roles: ['admin'], ttlSeconds: 600 });
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  async function start(): Promise<void> {
    child = spawn(process.execPath, [join(root, 'dist/bin/caregraph.js'), 'all'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
    await eventually(async () => {
      try {
        return (await fetch(`${base}/readyz`)).status === 200 ? true : undefined;
      } catch {
        return undefined;
      }
    }, 'the process to be ready', 60_000);
  }

  async function kill(): Promise<void> {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child!.kill('SIGKILL');
    await exited;
  }

  const allMessages = async () => (await api('GET', '/v1/messages?limit=100')).body.data as { id: string; status: string; patientId: string }[];

  it('brings every accepted message to exactly one final status after a SIGKILL', async () => {
    await start();
    const items = [
      ...Array.from({ length: 12 }, () => ({ patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS })),
      ...Array.from({ length: 6 }, () => ({ patientId: 'p-1002', templateId: 'appointment-reminder', channel: 'sms', variables: VARS })),
      ...Array.from({ length: 12 }, () => ({ patientId: 'p-1003', templateId: 'appointment-reminder', channel: 'email', variables: VARS })),
    ];
    const batch = await api('POST', '/v1/messages/batch', { messages: items });
    expect(batch.body.accepted).toBe(items.length);
    const accepted: string[] = batch.body.results.map((r: any) => r.id);
    // Kill while some sends are in flight.
    await eventually(async () => ((await allMessages()).some((m) => m.status === 'sending') ? true : undefined), 'a send in flight');
    await kill();

    await start();
    const final = await eventually(async () => {
      const messages = await allMessages();
      return messages.length === accepted.length && messages.every((m) => m.status === 'delivered' || m.status === 'failed') ? messages : undefined;
    }, 'every message to finish after the restart', 90_000);
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
    const db = await openDatabase({ databaseUrl: database.databaseUrl || undefined, dataDir });
    try {
      const { rows } = await db.query<{ id: string; n: number }>(
        `SELECT data->>'messageId' AS id, count(*)::int AS n FROM messaging."Event" WHERE type IN ('message.delivered', 'message.failed') GROUP BY 1`,
      );
      expect(rows.map((r) => r.id).sort()).toEqual([...accepted].sort());
      expect(rows.every((r) => r.n === 1)).toBe(true);
    } finally {
      await db.close();
    }
  }, 240_000);
});
