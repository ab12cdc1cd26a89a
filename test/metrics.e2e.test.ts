import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueAccessToken } from '../common/auth/tokens';
import { createTestDatabase, type TestDatabase } from '../common/db/test-backends';
import { startPlatform, type Platform } from '../bin/platform';
import { backendName, scaleOutEnv, startTestPlatform, type TestPlatform } from './harness';
import { eventually } from './messaging-helpers';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver';
import { connectAs, Subscription, type Connection } from './subscriptions.helpers';
import { scrape, type Scrape } from './support/metrics';
import { problemsOf, shippedQueries } from './support/rules';

const SEND = { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } };
const PATIENT = 'query PatientForMetrics { patient(id: "p-1001") { id preferences { channels { sms } } } }';

describe(`metrics (${backendName}, all-in-one)`, () => {
  let t: TestPlatform;
  let receiver: Receiver;
  let connection: Connection;
  let metrics: Scrape;
  let messageId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestPlatform({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_CA_FILE: receiver.caFile, RATE_LIMIT_PATIENTS: '1' });
    connection = await connectAs(t, await t.token());
    const live = new Subscription(connection.client, 'subscription { events(types: [MESSAGE_DELIVERED]) { id type } }');

    expect(
      (
        await t.request('POST', '/v1/webhooks', {
          body: { url: receiver.url('/metrics-hook'), events: ['message.delivered'], secret: 'whsec-metrics-0123456789' },
        })
      ).status,
    ).toBe(201);
    const sent = await t.request('POST', '/v1/messages', { body: SEND });
    expect(sent.status).toBe(201);
    messageId = sent.body.id;
    await eventually(async () => ((await t.request('GET', `/v1/messages/${messageId}`)).body.status === 'delivered' ? true : undefined), 'delivery');
    await waitFor('the webhook delivery', () => receiver.received('/metrics-hook').length >= 1);
    expect(await live.take(1)).toHaveLength(1);
    // The PATIENTS budget is 1: the second call is refused.
    expect((await t.graphql(PATIENT)).body.errors).toBeUndefined();
    expect((await t.graphql(PATIENT)).body.errors[0].extensions.code).toBe('RATE_LIMIT_EXCEEDED');
    metrics = await scrape(`${t.url}/metrics`);
  });
  afterAll(async () => {
    await connection?.dispose();
    await t?.stop();
    await receiver?.close();
  });

  it('labels HTTP requests by route template and status, with a latency histogram', () => {
    expect(metrics.total('caregraph_http_requests_total', { route: '/v1/messages', method: 'POST', status: '201' })).toBe(1);
    expect(metrics.total('caregraph_http_requests_total', { route: '/v1/messages/:id', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(metrics.total('caregraph_http_requests_total', { route: '/graphql', method: 'POST', status: '429' })).toBe(1);
    expect(metrics.total('caregraph_http_request_duration_seconds', { route: '/v1/messages', method: 'POST' })).toBe(1);
    // No raw path, and so no id, in any label.
    expect(metrics.text).not.toContain(messageId);
  });

  it('counts GraphQL operations by name and error code, and subgraph fetches by outcome', () => {
    expect(metrics.total('caregraph_graphql_operations_total', { operation: 'PatientForMetrics', type: 'query', code: 'none' })).toBe(1);
    expect(metrics.total('caregraph_graphql_operations_total', { operation: 'PatientForMetrics', type: 'query', code: 'RATE_LIMIT_EXCEEDED' })).toBe(1);
    expect(metrics.total('caregraph_subgraph_fetches_total', { subgraph: 'ehr', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(metrics.total('caregraph_subgraph_fetches_total', { subgraph: 'messaging', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(metrics.total('caregraph_subgraph_fetch_duration_seconds', { subgraph: 'messaging', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(metrics.total('caregraph_rate_limit_refusals_total', { category: 'PATIENTS' })).toBe(1);
  });

  it('counts every status transition of the message and its queued → delivered time', () => {
    for (const [from, to] of [
      ['none', 'queued'],
      ['queued', 'sending'],
      ['sending', 'sent'],
      ['sent', 'delivered'],
    ]) {
      expect([from, to, metrics.total('caregraph_message_status_transitions_total', { from, to, channel: 'sms' })]).toEqual([from, to, 1]);
    }
    expect(metrics.total('caregraph_message_delivery_seconds', { channel: 'sms' })).toBe(1);
    expect(metrics.total('caregraph_webhook_attempts_total', { outcome: 'success' })).toBe(1);
    expect(metrics.total('caregraph_webhook_attempt_duration_seconds', { outcome: 'success' })).toBe(1);
  });

  it('reads the job queues, live subscriptions, pools and audit checkpoints on scrape', () => {
    expect(metrics.samples('caregraph_job_queue_depth', { queue: 'messaging-deliver' })).toHaveLength(1);
    expect(metrics.samples('caregraph_job_queue_oldest_seconds', { queue: 'messaging-deliver' })).toHaveLength(1);
    expect(metrics.total('caregraph_subscriptions_active')).toBe(1);
    expect(metrics.samples('caregraph_db_pool_connections', { pool: 'runtime' })).toHaveLength(t.platform.db!.kind === 'postgres' ? 1 : 0);
    expect(metrics.samples('caregraph_audit_checkpoint_age_seconds')).toHaveLength(1);
    expect(metrics.names.has('caregraph_audit_checkpoints_total')).toBe(true);
  });

  it('every alert rule and dashboard query names series and labels this scrape has', () => {
    const queries = shippedQueries();
    expect(queries.length).toBeGreaterThan(20);
    const problems = queries.flatMap(({ where, expr }) => problemsOf(expr, metrics).map((p) => `${where}: ${p}`));
    // Only the pool series are absent on PGlite (no pg pool there), and the queries over them with them.
    const expected =
      t.platform.db!.kind === 'postgres' ? [] : problems.filter((p) => /^(alert CareGraphDatabasePoolExhausted|panel 'Database pools'):/.test(p));
    expect(problems).toEqual(expected);
  });

  it('finds a misspelt series or label in a query', () => {
    expect(problemsOf('sum(rate(caregraph_webhook_attempt_total[5m]))', metrics)).toEqual(['series caregraph_webhook_attempt_total is not in the scrape']);
    expect(problemsOf('sum by (queue) (caregraph_webhook_attempts_total{result="success"})', metrics)).toEqual([
      "caregraph_webhook_attempts_total has no label 'result'",
      "no selected series has the label 'queue' it groups by",
    ]);
  });
});

const scaleOut = process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL ? describe : describe.skip;

scaleOut('metrics per process (scale-out roles on PostgreSQL + Redis)', () => {
  let database: TestDatabase;
  let receiver: Receiver;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-metrics-'));
  const started: Platform[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const platform of started.reverse()) await platform.stop();
    await database?.drop();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('each role serves its own series: gateway, messaging and ehr on their ports, the worker on METRICS_PORT', async () => {
    const env = scaleOutEnv(dataDir, database.databaseUrl, {
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_CA_FILE: receiver.caFile,
      SIM_SEND_DELAY_MS: '20',
      SIM_DELIVER_DELAY_MS: '50',
    });
    const ehr = await startPlatform('ehr', env);
    started.push(ehr);
    const messaging = await startPlatform('messaging', { ...env, EHR_URL: ehr.subgraphUrls.ehr });
    started.push(messaging);
    const worker = await startPlatform('worker', { ...env, EHR_URL: ehr.subgraphUrls.ehr });
    started.push(worker);
    const gateway = await startPlatform('gateway', { ...env, EHR_URL: ehr.subgraphUrls.ehr, MESSAGING_URL: messaging.subgraphUrls.messaging });
    started.push(gateway);

    const token = await issueAccessToken(gateway.runtime.secrets.jwtSecret!, { sub: 't', tenants: ['demo'], roles: ['admin'], ttlSeconds: 300 });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${gateway.gateway!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    expect(
      (await call('POST', '/v1/webhooks', { url: receiver.url('/scale'), events: ['message.delivered'], secret: 'whsec-metrics-0123456789' })).status,
    ).toBe(201);
    const sent = await call('POST', '/v1/messages', SEND);
    expect(sent.status).toBe(201);
    await eventually(async () => ((await call('GET', `/v1/messages/${sent.body.id}`)).body.status === 'delivered' ? true : undefined), 'delivery');
    await waitFor('the webhook delivery', () => receiver.received('/scale').length >= 1);

    const base = (url: string) => url.replace(/\/graphql$/, '');
    const [g, m, e, w] = await Promise.all([
      scrape(`${gateway.gateway!.url}/metrics`),
      scrape(`${base(messaging.subgraphUrls.messaging)}/metrics`),
      scrape(`${base(ehr.subgraphUrls.ehr)}/metrics`),
      scrape(worker.metricsUrl!),
    ]);
    expect(g.total('caregraph_http_requests_total', { route: '/v1/messages', method: 'POST', status: '201' })).toBe(1);
    expect(g.total('caregraph_subgraph_fetches_total', { subgraph: 'messaging', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(g.names.has('caregraph_message_status_transitions_total')).toBe(false);
    // Accepted by the messaging process; sent and delivered by the worker's.
    expect(m.total('caregraph_message_status_transitions_total', { from: 'none', to: 'queued', channel: 'sms' })).toBe(1);
    expect(w.total('caregraph_message_status_transitions_total', { from: 'sent', to: 'delivered', channel: 'sms' })).toBe(1);
    expect(w.total('caregraph_message_delivery_seconds', { channel: 'sms' })).toBe(1);
    expect(w.total('caregraph_webhook_attempts_total', { outcome: 'success' })).toBe(1);
    expect(w.samples('caregraph_job_queue_depth', { queue: 'messaging-deliver' })).toHaveLength(1);
    // Every role with a database has a sample of each pool series for each of its pools, not only their declarations.
    for (const [role, scraped] of [
      ['messaging', m],
      ['ehr', e],
      ['worker', w],
    ] as const) {
      for (const series of ['caregraph_db_pool_connections', 'caregraph_db_pool_idle', 'caregraph_db_pool_waiting']) {
        for (const pool of ['runtime', 'owner', 'jobqueue'])
          expect([role, series, pool, scraped.samples(series, { pool }).length]).toEqual([role, series, pool, 1]);
      }
    }
    expect(g.names.has('caregraph_db_pool_connections')).toBe(false);
    expect(e.samples('caregraph_audit_checkpoint_age_seconds')).toHaveLength(1);
    expect(m.names.has('caregraph_audit_checkpoint_age_seconds')).toBe(false);
  });
});
