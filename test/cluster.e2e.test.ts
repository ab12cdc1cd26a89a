import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../common/db/test-backends';
import { issueAccessToken } from '../common/auth/tokens';
import { startCluster, type Cluster } from '../scripts/cluster';
import { scaleOutEnv } from './harness';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver';
import { liveEvents } from './support/live-events';
import { killIfRunning, signalAndWait } from '../scripts/support/server-process';

/**
 * `npm run cluster`'s topology (HAProxy, two gateways, the two subgraphs, two
 * workers, as OS processes on PostgreSQL and Redis) under steady load of single
 * sends and batches while one gateway and one worker are killed with SIGKILL,
 * a batch in flight (docs/deploy.md).
 */
const scaleOut = process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL ? describe : describe.skip;

const VARS = { date: '2026-12-01', time: '09:30' };
const FINAL = new Set(['delivered', 'failed']);
const HOOK_TYPES = ['message.sent', 'message.delivered', 'message.failed'];
/** Requests may fail from the kill until HAProxy has taken the gateway out (two failed checks 500 ms apart) and a little after. */
const FAILOVER_WINDOW_MS = 5_000;
const RATE_LIMIT = 10;

scaleOut('the scale-out cluster behind HAProxy (PostgreSQL + Redis)', () => {
  let database: TestDatabase;
  let receiver: Receiver;
  let cluster: Cluster | undefined;
  let secret: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-cluster-test-'));

  beforeAll(async () => {
    [database, receiver] = await Promise.all([createTestDatabase(), startReceiver()]);
    secret = randomBytes(32).toString('base64url');
    const env = scaleOutEnv(dataDir, database.databaseUrl, {
      AUTH_JWT_SECRET: secret,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      AUDIT_HMAC_KEY: randomBytes(32).toString('base64'),
      TENANTS: 'demo,acme',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s,2s,5s',
      // A delivery the killed worker had claimed is taken over when its claim ends: this timeout plus 30 s.
      WEBHOOK_TIMEOUT_MS: '2000',
      SIM_SEND_DELAY_MS: '100',
      SIM_DELIVER_DELAY_MS: '100',
      // A killed worker's sends are taken over quickly.
      DELIVERY_LEASE_MS: '2000',
      DELIVERY_JOB_EXPIRY_SECONDS: '3',
      RATE_LIMIT_MESSAGES_SEND: '100000',
      RATE_LIMIT_PATIENTS: String(RATE_LIMIT),
    });
    cluster = await startCluster({ env });
  }, 240_000);

  afterAll(async () => {
    if (cluster) {
      for (const server of [...cluster.gateways, ...cluster.workers, cluster.messaging, cluster.ehr]) killIfRunning(server);
      if (cluster.haproxy.exitCode === null) cluster.haproxy.kill('SIGKILL');
    }
    await receiver?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const token = (sub: string) => issueAccessToken(new TextEncoder().encode(secret), { sub, tenants: ['demo'], roles: ['admin'], ttlSeconds: 600 });

  async function call(base: string, auth: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
  }

  /** N requests within one window alternate between two gateways; the N+1th is refused on either. */
  async function expectExactLimit(bases: string[], subject: string): Promise<void> {
    const auth = await token(subject);
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT; i++) statuses.push((await call(bases[i % bases.length], auth, 'GET', '/v1/patients/p-1001')).status);
    expect(statuses).toEqual(Array(RATE_LIMIT).fill(200));
    for (const base of bases) expect((await call(base, auth, 'GET', '/v1/patients/p-1001')).status).toBe(429);
  }

  it('[MSG-015] keeps every accepted message, event and rate limit exact through a gateway and a worker SIGKILL', async () => {
    const c = cluster!;
    const began = Date.now();
    const phases: string[] = [];
    const phase = (name: string) => phases.push(`${name} +${Date.now() - began} ms`);
    const admin = await token('cluster-load');
    await expectExactLimit(
      c.gateways.map((g) => g.base),
      `rl-${randomUUID()}`,
    );

    const hook = await call(c.base, admin, 'POST', '/v1/webhooks', { url: receiver.url('/hooks'), events: HOOK_TYPES, secret: 'cluster-test-secret-16' });
    expect(hook.status).toBe(201);

    // A graphql-ws subscriber through HAProxy that reconnects when its gateway dies.
    const subscriber = await liveEvents(c.base, admin, 1_000);
    const live = subscriber.heard;

    // Steady load: four clients sending one message after another, each retrying a failed send with its Idempotency-Key.
    const accepted = new Map<string, string>();
    const failures: { at: number; what: string }[] = [];
    let sending = true;
    const sender = async (n: number) => {
      for (let i = 0; sending; i++) {
        const key = `load-${n}-${i}`;
        const body = { patientId: i % 5 === 4 ? 'p-1002' : 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS };
        for (;;) {
          try {
            const res = await call(c.base, admin, 'POST', '/v1/messages', body, { 'idempotency-key': key });
            if (res.status >= 200 && res.status < 300) {
              accepted.set(key, res.body.id);
              break;
            }
            failures.push({ at: Date.now(), what: `${res.status} ${res.body?.error?.code ?? ''}` });
          } catch (err) {
            failures.push({ at: Date.now(), what: String((err as Error).cause ?? err) });
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    // And one client sending batches of 20 straight to the gateway that will be killed (through HAProxy once that
    // gateway has failed it), retrying each with its Idempotency-Key until the whole batch is accepted. Its third
    // batch is 200 items, and the kill comes 5 ms after it is sent: the gateway dies with that batch in its hands.
    const KILL_BATCH = 2;
    let batchBase = c.gateways[0].base;
    let killBatchSent!: () => void;
    const killBatchOnItsWay = new Promise<void>((resolve) => (killBatchSent = resolve));
    let batchesRetried = 0;
    const batchSender = async () => {
      for (let i = 0; sending; i++) {
        const key = `batch-${i}`;
        const messages = Array.from({ length: i === KILL_BATCH ? 200 : 20 }, (_, j) => ({
          patientId: j % 5 === 4 ? 'p-1002' : 'p-1001',
          templateId: 'appointment-reminder',
          channel: 'sms',
          variables: VARS,
        }));
        for (let attempt = 0; ; attempt++) {
          try {
            const request = call(batchBase, admin, 'POST', '/v1/messages/batch', { messages }, { 'idempotency-key': key });
            if (i === KILL_BATCH && attempt === 0) setTimeout(killBatchSent, 5);
            const res = await request;
            if (res.status === 200 && res.body.accepted === messages.length) {
              res.body.results.forEach((r: { id: string }, j: number) => accepted.set(`${key}#${j}`, r.id));
              if (attempt > 0) batchesRetried++;
              // A batch every quarter second: steady load, not a backlog the webhooks would drain for minutes.
              await new Promise((resolve) => setTimeout(resolve, 250));
              break;
            }
            failures.push({
              at: Date.now(),
              what: `batch ${res.status} ${res.body?.error?.code ?? JSON.stringify(res.body?.results?.find((r: any) => r.error))}`,
            });
          } catch (err) {
            failures.push({ at: Date.now(), what: `batch ${String((err as Error).cause ?? err)}` });
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    };
    const load = Promise.all([...[0, 1, 2, 3].map(sender), batchSender()]);
    await waitFor('load to flow', () => accepted.size >= 10);
    await killBatchOnItsWay;

    const killedAt = Date.now();
    batchBase = c.base;
    const [gatewayExit, workerExit] = await Promise.all([signalAndWait(c.gateways[0], 'SIGKILL'), signalAndWait(c.workers[0], 'SIGKILL')]);
    expect([gatewayExit.signal, workerExit.signal]).toEqual(['SIGKILL', 'SIGKILL']);
    phase('killed');
    const acceptedAtKill = accepted.size;
    // The load goes on through the failover window and until sends are accepted again.
    await new Promise((resolve) => setTimeout(resolve, FAILOVER_WINDOW_MS));
    await waitFor('load to flow after the kill', () => accepted.size >= acceptedAtKill + 10, 30_000);
    sending = false;
    await load;
    phase('load stopped');
    // The batch the gateway died with was sent again and accepted whole (its items are among the accepted below).
    expect(batchesRetried).toBeGreaterThanOrEqual(1);

    // Every accepted message: exactly one message row, exactly one final status.
    const ids = [...new Set(accepted.values())];
    expect(ids.length).toBe(accepted.size);
    const db = new pg.Client({ connectionString: database.databaseUrl });
    await db.connect();
    try {
      const finals = await waitFor(
        'every accepted message to reach a final status',
        async () => {
          const { rows } = await db.query<{ id: string; status: string; finals: number }>(
            `SELECT m.id, m.status, (SELECT count(*)::int FROM messaging."MessageStatusChange" s WHERE s."messageId" = m.id AND s.status IN ('delivered', 'failed')) AS finals
               FROM messaging."Message" m`,
          );
          return rows.length === ids.length && rows.every((r) => FINAL.has(r.status)) ? rows : undefined;
        },
        45_000,
      );
      phase('all final');
      expect(finals.map((r) => r.id).sort()).toEqual([...ids].sort());
      expect(finals.filter((r) => r.finals !== 1)).toEqual([]);

      // Every event of the subscribed types reached the webhook at least once (deduplicated by event id).
      const { rows: events } = await db.query<{ id: string }>(`SELECT id FROM messaging."Event" WHERE type = ANY($1)`, [HOOK_TYPES]);
      const received = () => new Set(receiver.received('/hooks').map((h) => String(h.headers['x-webhook-id'])));
      // One set per check, not one per event: the receiver shares this process's event loop.
      await waitFor(
        'every event at the webhook',
        () => {
          const got = received();
          return events.every((e) => got.has(e.id));
        },
        45_000,
      );
      phase('all at the webhook');
      const finalHooks = new Map<string, Set<string>>();
      for (const h of receiver.received('/hooks').filter((h) => h.body.type !== 'message.sent')) {
        finalHooks.set(h.body.data.messageId, (finalHooks.get(h.body.data.messageId) ?? new Set()).add(h.body.id));
      }
      expect([...finalHooks.keys()].sort()).toEqual([...ids].sort());
      expect([...finalHooks.values()].filter((s) => s.size !== 1)).toEqual([]);
      const duplicates = receiver.received('/hooks').length - received().size;

      // Failed requests only in the failover window.
      const late = failures.filter((f) => f.at < killedAt || f.at > killedAt + FAILOVER_WINDOW_MS);
      expect(late).toEqual([]);
      // The live stream went on after the failover (the subscriber reconnected when its gateway was the one killed).
      expect(live.some((e) => e.at > killedAt + FAILOVER_WINDOW_MS)).toBe(true);

      // Rate limits stay exact with the surviving gateway, through HAProxy.
      await expectExactLimit([c.base], `rl-${randomUUID()}`);

      console.log(
        `cluster failover: ${ids.length} messages accepted (${acceptedAtKill} before the kill; ${batchesRetried} batch(es) retried), ${failures.length} failed requests ` +
          `(${failures.map((f) => `${f.what} at +${f.at - killedAt} ms`).join(', ') || 'none'}), ${events.length} webhook events, ` +
          `${duplicates} duplicate webhook deliveries, ${live.length} live events over ${subscriber.connections()} WebSocket connection(s)${subscriber.errors.length ? ` (ended by: ${subscriber.errors.join('; ')})` : ''}; ${phases.join(', ')}`,
      );
    } finally {
      await db.end();
      await subscriber.dispose();
    }
  }, 180_000);
});
