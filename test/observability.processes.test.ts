import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../common/db/test-backends';
import { issueAccessToken } from '../common/auth/tokens';
import { resolveSecrets } from '../common/secrets';
import { loadConfig } from '../common/config';
import { scaleOutEnv } from './harness';
import { eventually } from './messaging-helpers';
import { startReceiver, waitFor, type Receiver } from './webhook-receiver';
import { freePort, killIfRunning, signalAndWait, startServer, type ServerProcess } from '../scripts/support/server-process';
import { serverApi } from './support/process-database';
import { startCollector, type Collector } from './support/otlp-collector';
import { scrape } from './support/metrics';

const scaleOut = process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL ? describe : describe.skip;

/**
 * The deployment as operators run it: gateway, messaging, ehr and worker as
 * four compiled processes on PostgreSQL and Redis, exporting traces to one
 * OTLP endpoint and each serving its own /metrics.
 */
scaleOut('observability across separate processes (PostgreSQL + Redis)', () => {
  let database: TestDatabase;
  let receiver: Receiver;
  let collector: Collector;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-obs-'));
  const processes: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startReceiver();
    collector = await startCollector();
  });
  afterAll(async () => {
    for (const p of processes.reverse()) {
      if (p.child.exitCode === null) await signalAndWait(p, 'SIGTERM');
      killIfRunning(p);
    }
    await database?.drop();
    await receiver?.close();
    await collector?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('one trace crosses the gateway, messaging and worker processes, each with its service.name; each process serves its own series', async () => {
    const [ehrPort, messagingPort] = [await freePort(), await freePort()];
    const env = {
      ...scaleOutEnv(dataDir, database.databaseUrl, {
        WEBHOOK_ALLOW_INSECURE: 'true',
        WEBHOOK_CA_FILE: receiver.caFile,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        LOG_LEVEL: 'warn',
      }),
      EHR_URL: `http://127.0.0.1:${ehrPort}/graphql`,
      MESSAGING_URL: `http://127.0.0.1:${messagingPort}/graphql`,
    };
    delete (env as Record<string, string>).METRICS_PORT;
    const start = async (role: 'ehr' | 'messaging' | 'worker' | 'gateway', port?: number) => {
      const server = await startServer(env, { role, port });
      processes.push(server);
      return server;
    };
    const ehr = await start('ehr', ehrPort);
    const messaging = await start('messaging', messagingPort);
    const worker = await start('worker');
    const gateway = await start('gateway');

    // The roles share the development secrets written into DATA_DIR by the first one.
    const secrets = resolveSecrets(loadConfig({ DATA_DIR: dataDir }));
    const api = serverApi(gateway.base, await issueAccessToken(secrets.jwtSecret!, { sub: 't', tenants: ['demo'], roles: ['admin'], ttlSeconds: 300 }));
    expect(
      (await api('POST', '/v1/webhooks', { url: receiver.url('/processes'), events: ['message.delivered'], secret: 'whsec-processes-0123456789' })).status,
    ).toBe(201);
    const sent = await api('POST', '/v1/messages', {
      patientId: 'p-1001',
      templateId: 'appointment-reminder',
      channel: 'sms',
      variables: { date: '2026-12-01', time: '09:30' },
    });
    expect(sent.status).toBe(201);
    const hook = await waitFor('the webhook delivery', () => receiver.received('/processes')[0], 60_000);
    const [, traceId, webhookSpanId] = String(hook.headers.traceparent).split('-');
    await eventually(async () => (collector.spans.some((s) => s.spanId === webhookSpanId) ? true : undefined), 'the exported webhook span');

    const spans = collector.spans.filter((s) => s.traceId === traceId);
    const serviceOf = (name: string) => [...new Set(spans.filter((s) => s.name === name).map((s) => s.service))];
    expect(serviceOf('gateway POST /v1/messages')).toEqual(['caregraph-gateway']);
    expect(serviceOf('fetch messaging')).toEqual(['caregraph-gateway']);
    expect(serviceOf('subgraph messaging POST /graphql')).toEqual(['caregraph-messaging']);
    expect(serviceOf('job messaging-deliver')).toEqual(['caregraph-worker']);
    expect(serviceOf('provider simulator send')).toEqual(['caregraph-worker']);
    expect(serviceOf('webhook send')).toEqual(['caregraph-worker']);
    const ids = new Set(spans.map((s) => s.spanId));
    expect(spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId)).map((s) => s.name)).toEqual([]);

    await eventually(async () => ((await api('GET', `/v1/messages/${sent.body.id}`)).body.status === 'delivered' ? true : undefined), 'delivery');
    const [g, m, e, w] = await Promise.all([
      scrape(`${gateway.base}/metrics`),
      scrape(`${messaging.base}/metrics`),
      scrape(`${ehr.base}/metrics`),
      scrape(`${worker.base}/metrics`),
    ]);
    expect(g.total('caregraph_http_requests_total', { route: '/v1/messages', method: 'POST', status: '201' })).toBe(1);
    expect(m.total('caregraph_message_status_transitions_total', { from: 'none', to: 'queued', channel: 'sms' })).toBe(1);
    expect(w.total('caregraph_message_status_transitions_total', { from: 'sent', to: 'delivered', channel: 'sms' })).toBe(1);
    expect(w.total('caregraph_webhook_attempts_total', { outcome: 'success' })).toBe(1);
    expect(e.samples('caregraph_audit_checkpoint_age_seconds')).toHaveLength(1);
  });
});
