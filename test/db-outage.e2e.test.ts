import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../common/db/test-backends';
import { killIfRunning, startServer, type ServerProcess } from '../scripts/support/server-process';
import { eventually, finalMessage } from './messaging-helpers';
import { startTestPlatform, type TestPlatform } from './harness';
import { processDatabase, type ProcessDatabase } from './support/process-database';

/**
 * A TCP proxy in front of the machine's PostgreSQL: closing it makes the
 * database unreachable for the platform (refused connections, open ones cut)
 * without touching the server other tests share.
 */
class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every open connection. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * While PostgreSQL is unreachable every call answers 503 SERVICE_UNAVAILABLE
 * with Retry-After (it used to be 500 INTERNAL_ERROR), /readyz says not
 * ready, and everything recovers by itself when the database is back.
 * PostgreSQL only: the embedded PGlite runs inside the process and cannot
 * become unreachable.
 */
(process.env.TEST_DATABASE_URL ? describe : describe.skip)('database outage (PostgreSQL)', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let t: TestPlatform;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.databaseUrl);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.open();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    t = await startTestPlatform({ DATABASE_URL: url.toString() });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await proxy?.close();
    await database?.drop();
  });

  const calls = {
    rest: () => t.request('GET', '/v1/patients/p-1001'),
    ehrRest: () => t.request('GET', '/api/ehr/patients/p-1001', { headers: { 'X-Tenant-Id': 'demo' } }),
    restWrite: () =>
      t.request('POST', '/v1/messages', {
        body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } },
      }),
    fhir: () => t.request('GET', '/fhir/R4/Patient/p-1001'),
    graphqlMessaging: () => t.graphql('{ templates { data { id } } }'),
    graphqlEhr: () => t.graphql('{ patient(id: "p-1001") { id ehrId } }'),
  };

  it('[OPS-002] answers 503 with Retry-After while the database is unreachable, and 200 again after', async () => {
    expect((await calls.rest()).status).toBe(200);

    await proxy.close();
    for (const [name, call] of Object.entries(calls)) {
      const res = await call();
      if (name.startsWith('graphql')) {
        expect({ name, code: res.body.errors?.[0]?.extensions?.code }).toEqual({ name, code: 'SERVICE_UNAVAILABLE' });
        expect(res.body.data?.templates ?? res.body.data?.patient ?? null).toBeNull();
      } else if (name === 'fhir') {
        expect({ name, status: res.status }).toEqual({ name, status: 503 });
        expect(res.body.resourceType).toBe('OperationOutcome');
      } else {
        expect({ name, status: res.status, code: res.body?.error?.code }).toEqual({ name, status: 503, code: 'SERVICE_UNAVAILABLE' });
        expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);
      }
      expect({ name, retryAfter: res.headers.get('retry-after') }).toEqual({ name, retryAfter: expect.stringMatching(/^\d+$/) });
    }
    const ready = await t.request('GET', '/readyz', { token: null });
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database).toBe('unavailable');

    await proxy.open();
    await eventually(async () => ((await t.request('GET', '/readyz', { token: null })).status === 200 ? true : undefined), 'ready again', 30_000);
    for (const [name, call] of Object.entries(calls)) {
      const res = await call();
      expect({ name, status: res.status, errors: res.body?.errors }).toEqual({ name, status: name === 'restWrite' ? 201 : 200, errors: undefined });
      // The job queue and the delivery worker came back too: the message is sent and delivered.
      if (name === 'restWrite') expect((await finalMessage(t, res.body.id)).status).toBe('delivered');
    }
  }, 120_000);
});

/** Cuts of the process test, each long enough for every background loop to meet the outage. */
const CUTS = 6;
const CUT_MS = 5_000;
/** How soon after the database is back the process must serve again. */
const RECOVERY_MS = 10_000;
/** In the database URL: the server (trust authentication) never asks for it, so no log line may show it. */
const PASSWORD = 'outage-password-not-for-logs';

/**
 * The compiled all-in-one process (`node dist/bin/caregraph.js all`, a child process) under the same
 * cuts, with sends right before each so that delivery jobs are in the job queue's hands when the
 * connection goes: an unhandled rejection there (pg-boss does not await marking a job failed) exited
 * the process with code 1. A child process, because in a jest worker an unhandled rejection does not
 * end anything.
 */
(process.env.TEST_DATABASE_URL ? describe : describe.skip)('database outage of the process (PostgreSQL)', () => {
  let dataDir: string;
  let database: ProcessDatabase;
  let proxy: TcpProxy;
  let server: ServerProcess;
  let token: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'caregraph-outage-'));
    database = await processDatabase(dataDir);
    const url = new URL(database.env.DATABASE_URL);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.open();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    url.password = PASSWORD;
    server = await startServer({
      DATA_DIR: dataDir,
      ...database.env,
      DATABASE_URL: url.toString(),
      RATE_LIMIT_MESSAGES_SEND: '100000',
      // Slow enough that the sends' deliveries are still running when the cut lands.
      SIM_SEND_DELAY_MS: '300',
      SIM_DELIVER_DELAY_MS: '300',
    });
    token = await database.token();
  }, 120_000);
  afterAll(async () => {
    killIfRunning(server);
    await proxy?.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }).catch((err: Error) => {
      // A refused or reset connection: say whether the process is still there, and what it last printed.
      throw new Error(`${method} ${path}: ${err.message} (${(err.cause as Error | undefined)?.message}); process ${JSON.stringify(alive())}:\n${lastOutput()}`);
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
  };
  const send = () =>
    call('POST', '/v1/messages', { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } });
  const alive = () => ({ exitCode: server.child.exitCode, signal: server.child.signalCode });
  const lastOutput = () => server.output().split('\n').slice(-20).join('\n');

  it(`survives ${CUTS} cuts with job-queue work in flight: 503 with Retry-After during each, serving again within 10 s after`, async () => {
    const sentIds: string[] = [];
    for (let cut = 1; cut <= CUTS; cut++) {
      const sends = await Promise.all(Array.from({ length: 10 }, send));
      expect(sends.map((res) => res.status)).toEqual(sends.map(() => 201));
      sentIds.push(...sends.map((res) => res.body.id as string));

      await proxy.close();
      const during = [await call('GET', '/v1/patients/p-1001'), await send()];
      for (const res of during) {
        expect({ cut, status: res.status, code: res.body?.error?.code }).toEqual({ cut, status: 503, code: 'SERVICE_UNAVAILABLE' });
        expect(res.retryAfter).toMatch(/^\d+$/);
      }
      await new Promise((resolve) => setTimeout(resolve, CUT_MS));
      if (alive().exitCode !== null) console.log(`the process exited during cut ${cut}:\n${lastOutput()}`);
      expect({ cut, ...alive() }).toEqual({ cut, exitCode: null, signal: null });

      await proxy.open();
      await eventually(async () => ((await call('GET', '/v1/patients/p-1001')).status === 200 ? true : undefined), `serving after cut ${cut}`, RECOVERY_MS);
      expect({ cut, ...alive() }).toEqual({ cut, exitCode: null, signal: null });
    }

    // The deliveries the cuts interrupted are taken up again: every message reaches a final status.
    await eventually(
      async () => {
        const statuses = await Promise.all(sentIds.map(async (id) => (await call('GET', `/v1/messages/${id}`)).body.status as string));
        return statuses.every((status) => status === 'delivered') ? true : undefined;
      },
      'every message sent before a cut delivered',
      120_000,
    );
    // Connection errors were logged without the pg client hung on them (its parameters, its cancel key).
    const output = server.output();
    expect(output).toMatch(/Connection terminated|ECONNREFUSED/);
    for (const secret of [PASSWORD, 'secretKey', 'connectionParameters', 'processID']) expect(output).not.toContain(secret);
  }, 300_000);
});
