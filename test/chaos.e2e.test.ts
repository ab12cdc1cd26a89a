import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { issueAccessToken } from '../common/auth/tokens';
import { projectRoot } from '../common/paths';
import { startCluster, type Cluster } from '../scripts/cluster';
import { killIfRunning, signalAndWait } from '../scripts/support/server-process';
import { startReplicatedStores, type ReplicatedStores } from '../scripts/support/replicated-stores';
import { VITALS } from './ehr-fixtures';
import { scaleOutEnv } from './harness';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver';
import { liveEvents } from './support/live-events';

/**
 * `npm run chaos` (CHAOS=1): the scale-out cluster on the replicated stores
 * (Patroni + etcd + HAProxy, Redis + Sentinel; docs/deploy.md), under load of
 * sends, batches, webhook deliveries to an HTTPS receiver, a GraphQL
 * subscription and clinical commits, while in turn the PostgreSQL primary's
 * postmaster, the Redis master, and then a gateway and a worker are killed
 * with SIGKILL. Nothing accepted may be lost, no message sent twice, no final
 * webhook event delivered under two ids, and writes must resume within 30 s of
 * each kill. Prints its figures. Needs root or the Debian packages installed
 * (scripts/support/replicated-stores.ts); not part of `npm test`.
 */
const chaos = process.env.CHAOS === '1' ? describe : describe.skip;

const VARS = { date: '2026-12-01', time: '09:30' };
const FINAL = new Set(['delivered', 'failed']);
const HOOK_TYPES = ['message.sent', 'message.delivered', 'message.failed'];
const RECOVERY_LIMIT_MS = 30_000;
/** Load keeps flowing this long after a recovery before the next kill. */
const STEADY_MS = 8_000;
const RATE_LIMIT = 10;

interface Write {
  startedAt: number;
  at: number;
}

chaos('chaos: kills under load on the replicated stores', () => {
  let stores: ReplicatedStores | undefined;
  let receiver: Receiver;
  let cluster: Cluster | undefined;
  let secret: string;
  let env: Record<string, string>;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-chaos-'));

  beforeAll(async () => {
    [stores, receiver] = await Promise.all([startReplicatedStores(), startReceiver()]);
    secret = randomBytes(32).toString('base64url');
    env = scaleOutEnv(dataDir, stores.databaseUrl, {
      REDIS_URL: stores.redisUrl,
      AUTH_JWT_SECRET: secret,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      AUDIT_HMAC_KEY: randomBytes(32).toString('base64'),
      TENANTS: 'demo,acme',
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_CA_FILE: receiver.caFile,
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s,2s,5s',
      WEBHOOK_TIMEOUT_MS: '2000',
      SIM_SEND_DELAY_MS: '100',
      SIM_DELIVER_DELAY_MS: '100',
      DELIVERY_LEASE_MS: '2000',
      DELIVERY_JOB_EXPIRY_SECONDS: '3',
      RATE_LIMIT_MESSAGES_SEND: '100000',
      RATE_LIMIT_EHR: '100000',
      RATE_LIMIT_PATIENTS: String(RATE_LIMIT),
    });
    // The migrations once before the roles start (as the compose file's `migrate` step), not under the roles' start-up lock.
    await promisify(execFile)(process.execPath, [join(projectRoot(), 'dist/scripts/db-migrate.js')], { env: { PATH: process.env.PATH, ...env } });
    // Six processes start at once beside the stores: on a busy 2-core machine that takes minutes.
    // A second try when a role fails to start: the demo seed's 5 s transaction can run out there (reported, not fixed here).
    cluster = await startCluster({ env, readyTimeoutMs: 300_000 }).catch((err: Error) => {
      console.log(`cluster start failed, trying again: ${err.message.split('\n').slice(-12).join('\n')}`);
      return startCluster({ env, readyTimeoutMs: 300_000 });
    });
  }, 900_000);

  afterAll(async () => {
    if (cluster) {
      for (const server of [...cluster.gateways, ...cluster.workers, cluster.messaging, cluster.ehr]) killIfRunning(server);
      if (cluster.haproxy.exitCode === null) cluster.haproxy.kill('SIGKILL');
    }
    await receiver?.close();
    await stores?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  const token = (sub: string) => issueAccessToken(new TextEncoder().encode(secret), { sub, tenants: ['demo'], roles: ['admin'], ttlSeconds: 3600 });

  async function call(base: string, auth: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
  }

  /** N requests within one window alternate between the gateways; the N+1th is refused on each: the counters are shared in Redis. */
  async function expectExactLimit(bases: string[]): Promise<void> {
    const auth = await token(`rl-${randomUUID()}`);
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT; i++) statuses.push((await call(bases[i % bases.length], auth, 'GET', '/v1/patients/p-1001')).status);
    expect(statuses).toEqual(Array(RATE_LIMIT).fill(200));
    for (const base of bases) expect((await call(base, auth, 'GET', '/v1/patients/p-1001')).status).toBe(429);
  }

  /** A role's log without its request lines: warnings, errors and whatever names Redis. */
  const warningsAndRedis = (output: string) =>
    output
      .split('\n')
      .filter((line) => /redis|sentinel/i.test(line) || /"level":(4|5|6)0/.test(line))
      .join('\n');

  /** For 10 s: the messages on the event channel of the current Redis master, and the events a new subscription on `base` hears. */
  async function whereEventsStop(base: string, auth: string): Promise<{ onChannel: number; direct: number }> {
    const master = await stores!.redisMaster();
    const raw = new Redis({ host: '127.0.0.1', port: master!.port, lazyConnect: true });
    let onChannel = 0;
    let direct = 0;
    raw.on('message', () => void onChannel++);
    await raw.connect();
    await raw.subscribe(env.REDIS_EVENTS_CHANNEL);
    const probe = createClient({
      url: `${base.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${auth}` },
    });
    probe.subscribe(
      { query: 'subscription { events(types: [MESSAGE_DELIVERED, MESSAGE_FAILED]) { id } }' },
      { next: () => void direct++, error: () => {}, complete: () => {} },
    );
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    await probe.dispose();
    raw.disconnect();
    return { onChannel, direct };
  }

  it('loses nothing accepted, sends nothing twice and resumes writes within 30 s of each kill', async () => {
    const c = cluster!;
    const s = stores!;
    const admin = await token('chaos-load');
    const hook = await call(c.base, admin, 'POST', '/v1/webhooks', { url: receiver.url('/hooks'), events: HOOK_TYPES, secret: 'chaos-test-secret-16' });
    expect(hook.status).toBe(201);

    const subscriber = await liveEvents(c.base, admin, 10_000);
    const live = subscriber.heard;

    const accepted = new Map<string, string>();
    const compositions = new Set<string>();
    const writes: Write[] = [];
    const failures: { at: number; what: string }[] = [];
    let sending = true;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    /** Retries one write until it is accepted; the Idempotency-Key (where there is one) makes a retry return the first answer. */
    const untilAccepted = async (what: string, attempt: () => Promise<{ status: number; body: any }>, ok: (res: { status: number; body: any }) => boolean) => {
      for (;;) {
        const startedAt = Date.now();
        try {
          const res = await attempt();
          if (ok(res)) {
            writes.push({ startedAt, at: Date.now() });
            return res;
          }
          failures.push({
            at: Date.now(),
            what: `${what} ${res.status} ${res.body?.error?.code ?? JSON.stringify(res.body?.results?.find((r: any) => r.error) ?? '')}`,
          });
        } catch (err) {
          failures.push({ at: Date.now(), what: `${what} ${String((err as Error).cause ?? err)}` });
        }
        await pause(100);
      }
    };
    const sender = async (n: number) => {
      for (let i = 0; sending; i++) {
        const key = `send-${n}-${i}`;
        const body = { patientId: i % 5 === 4 ? 'p-1002' : 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: VARS };
        const res = await untilAccepted(
          'send',
          () => call(c.base, admin, 'POST', '/v1/messages', body, { 'idempotency-key': key }),
          (r) => r.status === 201,
        );
        accepted.set(key, res.body.id);
      }
    };
    const batchSender = async () => {
      for (let i = 0; sending; i++) {
        const key = `batch-${i}`;
        const messages = Array.from({ length: 20 }, (_, j) => ({
          patientId: j % 5 === 4 ? 'p-1002' : 'p-1001',
          templateId: 'appointment-reminder',
          channel: 'sms',
          variables: VARS,
        }));
        const res = await untilAccepted(
          'batch',
          () => call(c.base, admin, 'POST', '/v1/messages/batch', { messages }, { 'idempotency-key': key }),
          (r) => r.status === 200 && r.body.accepted === messages.length,
        );
        res.body.results.forEach((r: { id: string }, j: number) => accepted.set(`${key}#${j}`, r.id));
        await pause(500);
      }
    };
    const committer = async () => {
      while (sending) {
        const res = await untilAccepted(
          'commit',
          () =>
            call(
              c.base,
              admin,
              'POST',
              '/api/ehr/compositions',
              { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS },
              { 'x-tenant-id': 'demo' },
            ),
          (r) => r.status === 201,
        );
        compositions.add(String(res.body.uid).split('::')[0]);
        await pause(200);
      }
    };
    const load = Promise.all([...[0, 1, 2].map(sender), batchSender(), committer()]);
    await waitFor('load to flow', () => accepted.size >= 20 && compositions.size >= 2, 60_000);

    const kills: { what: string; at: number; recoveredMs?: number; failedRequests: number; live: boolean }[] = [];
    /** Kills, then waits for the first write that started after the kill to succeed, then for steady load again. */
    const kill = async (what: string, act: () => Promise<void>) => {
      await pause(STEADY_MS);
      const at = Date.now();
      await act();
      const first = await waitFor(`a write after killing ${what}`, () => writes.find((w) => w.startedAt > at), 60_000).catch(() => undefined);
      const entry: (typeof kills)[number] = { what, at, recoveredMs: first ? first.at - at : undefined, failedRequests: 0, live: false };
      kills.push(entry);
      // Live events again after the kill: the subscription (or its reconnection) hears the event bus.
      entry.live = await waitFor(`a live event after killing ${what}`, () => live.some((e) => e.at > at + (entry.recoveredMs ?? 0)), 30_000)
        .then(() => true)
        .catch(() => false);
      return entry;
    };

    const leader = await s.leader();
    expect(leader).toBeDefined();
    await kill(`the PostgreSQL primary (${leader!.name}, postmaster kill -9)`, async () => {
      process.kill(s.postmasterPid(leader!), 'SIGKILL');
    });
    const newLeader = await waitFor('a new PostgreSQL leader', () => s.leader(), 60_000);
    expect(newLeader.name).not.toBe(leader!.name);

    const master = await s.redisMaster();
    expect(master).toBeDefined();
    await kill(`the Redis master (127.0.0.1:${master!.port}, kill -9)`, async () => {
      master!.child.kill('SIGKILL');
    });
    await waitFor('Sentinel to name a new Redis master', async () => ((await s.redisMaster())?.port !== master!.port ? true : undefined), 60_000);
    // Both gateways' rate-limit counters in the new master again.
    await waitFor(
      'shared rate limits on the new Redis master',
      () =>
        expectExactLimit(c.gateways.map((g) => g.base)).then(
          () => true,
          () => undefined,
        ),
      30_000,
    );

    // A role that died on its own before this kill failed to survive the stores' failovers: show why.
    for (const server of [...c.gateways, ...c.workers, c.messaging, c.ehr]) {
      expect({
        pid: server.child.pid,
        exit: server.child.exitCode ?? server.child.signalCode,
        output: server.child.exitCode === null && server.child.signalCode === null ? '' : server.output().slice(-4000),
      }).toEqual({
        pid: server.child.pid,
        exit: null,
        output: '',
      });
    }
    const roleKill = await kill('a gateway and a worker (SIGKILL)', async () => {
      const [gatewayExit, workerExit] = await Promise.all([signalAndWait(c.gateways[0], 'SIGKILL'), signalAndWait(c.workers[0], 'SIGKILL')]);
      expect([gatewayExit.signal, workerExit.signal]).toEqual(['SIGKILL', 'SIGKILL']);
    });
    // No live event through the load balancer after it: where the events stop, on the Redis channel or in the surviving gateway.
    const silence = roleKill.live ? undefined : await whereEventsStop(c.gateways[1].base, admin);
    await pause(STEADY_MS);
    sending = false;
    await load;
    for (const [i, k] of kills.entries()) {
      const until = kills[i + 1]?.at ?? Infinity;
      k.failedRequests = failures.filter((f) => f.at >= k.at && f.at < until).length;
    }

    // The surviving processes all still serve (every process recovered without an operator).
    for (const server of [c.gateways[1], c.messaging, c.ehr, c.workers[1]]) expect(server.child.exitCode).toBeNull();

    const ids = [...new Set(accepted.values())];
    const db = new pg.Client({ connectionString: s.databaseUrl });
    await db.connect();
    try {
      const finals = await waitFor(
        'every accepted message to reach a final status',
        async () => {
          const { rows } = await db.query<{ id: string; status: string; finals: number; sends: number; attempts: number }>(
            `SELECT m.id, m.status,
                    (SELECT count(*)::int FROM messaging."MessageStatusChange" s WHERE s."messageId" = m.id AND s.status IN ('delivered', 'failed')) AS finals,
                    (SELECT count(*)::int FROM messaging."MessageStatusChange" s WHERE s."messageId" = m.id AND s.status = 'sent') AS sends,
                    m.attempts
               FROM messaging."Message" m WHERE m.id = ANY($1)`,
            [ids],
          );
          return rows.length === ids.length && rows.every((r) => FINAL.has(r.status)) ? rows : undefined;
        },
        120_000,
      ).catch(async () => {
        const { rows } = await db.query<{ id: string; status: string; finals: number; sends: number; attempts: number }>(
          `SELECT m.id, m.status, 0 AS finals, 0 AS sends, m.attempts FROM messaging."Message" m WHERE m.id = ANY($1)`,
          [ids],
        );
        return rows;
      });
      const lostMessages = ids.filter((id) => !finals.some((r) => r.id === id));
      const unfinished = finals.filter((r) => !FINAL.has(r.status));
      const sentTwice = finals.filter((r) => r.sends > 1);
      const twoFinals = finals.filter((r) => r.finals > 1);

      const { rows: events } = await db.query<{ id: string }>(`SELECT id FROM messaging."Event" WHERE type = ANY($1)`, [HOOK_TYPES]);
      const received = () => new Set(receiver.received('/hooks').map((h) => String(h.headers['x-webhook-id'])));
      // The backlog drains at the endpoint's pace: wait while the receiver keeps getting events, up to 10 minutes.
      const drainStarted = Date.now();
      const atStart = received().size;
      let lastCount = atStart;
      let lastProgress = Date.now();
      await waitFor(
        'every event at the webhook',
        () => {
          // One set per check: building it per event starved the receiver, which runs in this process, of its event loop.
          const got = received();
          if (got.size > lastCount) [lastCount, lastProgress] = [got.size, Date.now()];
          if (Date.now() - lastProgress > 30_000) throw new Error('the webhook receiver got nothing new for 30 s');
          return events.every((e) => got.has(e.id));
        },
        600_000,
      ).catch(() => undefined);
      const drainSeconds = (Date.now() - drainStarted) / 1000;
      const drainRate = (received().size - atStart) / Math.max(drainSeconds, 0.001);
      const receivedIds = received();
      const lostEvents = events.filter((e) => !receivedIds.has(e.id));
      // Where the missing events stand: their deliveries by status (none: never dispatched), and the subscription.
      const { rows: missing } = await db.query<{ status: string | null; n: number; attempts: number }>(
        `SELECT d.status, count(*)::int AS n, coalesce(sum(d.attempts), 0)::int AS attempts
           FROM messaging."Event" e LEFT JOIN messaging."WebhookDelivery" d ON d."eventId" = e.id
          WHERE e.id = ANY($1) GROUP BY d.status`,
        [lostEvents.map((e) => e.id)],
      );
      const { rows: subscriptions } = await db.query<{ status: string; disabledReason: string | null }>(
        `SELECT status, "disabledReason" FROM messaging."WebhookSubscription"`,
      );
      const finalHooks = new Map<string, Set<string>>();
      for (const h of receiver.received('/hooks').filter((h) => h.body.type !== 'message.sent')) {
        finalHooks.set(h.body.data.messageId, (finalHooks.get(h.body.data.messageId) ?? new Set()).add(h.body.id));
      }
      const lostFinalHooks = ids.filter((id) => !finalHooks.has(id));
      const finalUnderTwoIds = [...finalHooks.values()].filter((set) => set.size > 1);

      const { rows: stored } = await db.query<{ id: string }>(`SELECT id FROM ehr."Composition" WHERE id = ANY($1)`, [[...compositions]]);
      const lostCompositions = [...compositions].filter((id) => !stored.some((r) => r.id === id));

      const figures = [
        `chaos: ${ids.length} messages, ${compositions.size} compositions, ${events.length} webhook events accepted; ` +
          `${receiver.received('/hooks').length - receivedIds.size} duplicate webhook deliveries (same event id, allowed), ` +
          `${live.length} live events over ${subscriber.connections()} WebSocket connection(s)${subscriber.errors.length ? ` (ended by: ${subscriber.errors.join('; ')})` : ''}`,
        `lost: messages ${lostMessages.length}, unfinished ${unfinished.length}, events ${lostEvents.length}, final webhook deliveries ${lostFinalHooks.length}, compositions ${lostCompositions.length}`,
        `duplicated: messages sent twice ${sentTwice.length}, two final statuses ${twoFinals.length}, final events under two ids ${finalUnderTwoIds.length}; ` +
          `${finals.filter((r) => r.attempts > 1).length} sends resumed after a lost claim (the provider may have had those twice)`,
        ...kills.map(
          (k) =>
            `kill ${k.what}: first successful write after ${k.recoveredMs === undefined ? 'NONE' : `${(k.recoveredMs / 1000).toFixed(1)} s`}, ` +
            `${k.failedRequests} failed requests (retried), live events after: ${k.live ? 'yes' : 'NO'}`,
        ),
        `after the load stopped: ${received().size - atStart} more events at the webhook in ${drainSeconds.toFixed(0)} s (${drainRate.toFixed(1)} per second)`,
        `missing events' deliveries: ${missing.map((m) => `${m.status ?? 'none'} ${m.n} (${m.attempts} attempts)`).join(', ') || 'none missing'}; ` +
          `subscription: ${subscriptions.map((sub) => `${sub.status}${sub.disabledReason ? ` (${sub.disabledReason})` : ''}`).join(', ')}`,
        `PostgreSQL leader ${leader!.name} -> ${newLeader.name}; Redis master 127.0.0.1:${master!.port} -> 127.0.0.1:${(await s.redisMaster())?.port}`,
        ...(silence
          ? [
              `after the gateway kill, in 10 s: ${silence.onChannel} messages on the Redis channel, ${silence.direct} events to a new subscription on the surviving gateway`,
              ...Object.entries({ 'the surviving gateway': c.gateways[1], 'the surviving worker': c.workers[1], messaging: c.messaging }).map(
                ([name, role]) => `${name}'s warnings and Redis lines:\n${warningsAndRedis(role.output()).slice(-4000)}`,
              ),
            ]
          : []),
      ];
      console.log(figures.join('\n'));

      expect({ lostMessages, unfinished, lostEvents, lostFinalHooks, lostCompositions }).toEqual({
        lostMessages: [],
        unfinished: [],
        lostEvents: [],
        lostFinalHooks: [],
        lostCompositions: [],
      });
      expect({ sentTwice, twoFinals, finalUnderTwoIds }).toEqual({ sentTwice: [], twoFinals: [], finalUnderTwoIds: [] });
      for (const k of kills) {
        expect({ kill: k.what, recovered: k.recoveredMs !== undefined && k.recoveredMs <= RECOVERY_LIMIT_MS, live: k.live }).toEqual({
          kill: k.what,
          recovered: true,
          live: true,
        });
      }
    } finally {
      await db.end();
      await subscriber.dispose();
    }
  }, 1_500_000);
});
