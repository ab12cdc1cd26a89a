import net from 'node:net';
import { createTestDatabase, type TestDatabase } from '../common/db/test-backends';
import { eventually, finalMessage } from './messaging-helpers';
import { startTestPlatform, type TestPlatform } from './harness';

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

  it('answers 503 with Retry-After while the database is unreachable, and 200 again after', async () => {
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
