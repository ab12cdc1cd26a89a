import type PgBoss from 'pg-boss';
import { loadConfig, type Config } from '../common/config';
import { resolveSecrets } from '../common/secrets';
import { createLogger, type Logger } from '../common/logger';
import { openDatabase, isPostgresUrl, redactUrl, type Database, type OpenDatabaseOptions } from '../common/db/database';
import { isDatabaseUnavailable } from '../common/db/unavailable';
import type { Runtime, Stoppable } from '../common/runtime';
import { systemClock, type Clock } from '../common/clock';
import { createEventBus } from '../common/events';
import { createTenantActivity } from '../common/activity/tenant-activity';
import type { RunningGateway } from '../gateway/server';
import type { RunningSubgraph } from '../common/graphql/subgraph-server';
import type { ClinicalRecord } from '../subgraphs/messaging/clinical-record/client';
import { createMetricsRegistry } from '../common/metrics/registry';

export const ROLES = ['all', 'gateway', 'messaging', 'ehr', 'worker'] as const;
export type ProcessRole = (typeof ROLES)[number];

export interface Platform {
  runtime: Runtime;
  /** Set for roles that serve the gateway. */
  gateway?: RunningGateway;
  /** Subgraph URLs of this process, by name. */
  subgraphUrls: Record<string, string>;
  db?: Database;
  /** The durable job queue, for roles that have one. */
  boss?: PgBoss;
  /** The metrics-only listener's /metrics URL, when this process has one (the worker role, or METRICS_PORT set). */
  metricsUrl?: string;
  stop(): Promise<void>;
}

/** What a process may be started with besides its environment (tests and embedding). */
export interface PlatformOptions {
  logger?: Logger;
  /** Opens the process database (default: `openDatabase`); tests open a copy of a migrated one. */
  openDatabase?: (options: OpenDatabaseOptions) => Promise<Database>;
  /** The time of leases, retries and schedules (default: the system clock). */
  clock?: Clock;
}

const DEFAULT_SUBGRAPH_PORTS = { messaging: 4001, ehr: 4002 } as const;
/** The worker role has no HTTP server of its own: its /metrics listens here unless METRICS_PORT says otherwise. */
const DEFAULT_WORKER_METRICS_PORT = 9464;

/** Scale-out roles share state through PostgreSQL and Redis; refuse to start without them. */
export function checkScaleOut(role: ProcessRole, config: Config): void {
  if (role === 'all') return;
  const missing: string[] = [];
  if (role !== 'gateway' && !isPostgresUrl(config.DATABASE_URL)) missing.push('DATABASE_URL=postgres://…');
  if (!config.REDIS_URL) missing.push('REDIS_URL=redis://…');
  if (missing.length > 0) {
    throw new Error(`The '${role}' role runs beside other instances and needs ${missing.join(' and ')} (use 'npm start' for the all-in-one process)`);
  }
}

/**
 * The modules of the process's parts (the gateway, the subgraphs, the workers, the job queue): about
 * a quarter of a compiled process's start-up is loading them. Loaded while the embedded database
 * starts on its own thread, rather than before it.
 */
async function loadParts() {
  const [boss, gateway, ehr, webhooks, messaging, clinicalRecord, messagingRest, processMetrics, metricsHttp] = await Promise.all([
    import('../common/db/boss'),
    import('../gateway/server'),
    import('../subgraphs/ehr/main'),
    import('../subgraphs/messaging/webhooks/worker'),
    import('../subgraphs/messaging/main'),
    import('../subgraphs/messaging/clinical-record/client'),
    import('../gateway/rest/messaging'),
    import('../common/metrics/process'),
    import('../common/metrics/http'),
  ]);
  return {
    createBoss: boss.createBoss,
    startGateway: gateway.startGateway,
    startEhrSubgraph: ehr.startEhrSubgraph,
    startWebhookWorker: webhooks.startWebhookWorker,
    startMessagingSubgraph: messaging.startMessagingSubgraph,
    startMessagingWorker: messaging.startMessagingWorker,
    GraphQLClinicalRecord: clinicalRecord.GraphQLClinicalRecord,
    httpTransport: clinicalRecord.httpTransport,
    inProcessTransport: clinicalRecord.inProcessTransport,
    providerCallbackUrls: messagingRest.providerCallbackUrls,
    registerProcessMetrics: processMetrics.registerProcessMetrics,
    startMetricsListener: metricsHttp.startMetricsListener,
  };
}

/**
 * The composition root: starts the parts of one process in order and stops
 * them in reverse. `npm start` runs role 'all'; scale-out runs one role per process.
 */
export async function startPlatform(role: ProcessRole, env: NodeJS.ProcessEnv = process.env, options: PlatformOptions = {}): Promise<Platform> {
  const config = loadConfig(env);
  checkScaleOut(role, config);
  const log = options.logger ?? createLogger(config.LOG_LEVEL);
  const secrets = resolveSecrets(config);
  if (secrets.source === 'dev-file')
    log.warn(`using development secrets from ${config.DATA_DIR} (set AUTH_JWT_SECRET, ENCRYPTION_KEY and AUDIT_HMAC_KEY in production)`);
  const started: Stoppable[] = [];
  // Traces (when OTEL_EXPORTER_OTLP_ENDPOINT is set) are flushed last, after every part has stopped.
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const { startTracing } = await import('../common/telemetry/setup');
    const tracing = startTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_SERVICE_NAME ?? (role === 'all' ? 'caregraph' : `caregraph-${role}`));
    started.push({ name: 'tracing', close: () => tracing.shutdown() });
  }
  const events = await createEventBus(config, secrets, log);
  started.push({ name: 'event bus', close: () => events.close() });
  // Written by the gateway, read by messaging (the support desk); no other role needs it.
  const activity = role === 'all' || role === 'gateway' || role === 'messaging' ? createTenantActivity(config, log) : undefined;
  if (activity) started.push({ name: 'tenant activity', close: () => activity.close() });
  const runtime: Runtime = { config, secrets, logger: log, events, metrics: createMetricsRegistry(), clock: options.clock ?? systemClock, activity };
  // The shutdown sequence is the start in reverse: the gateway stops accepting and drains its
  // requests in flight (bounded by SHUTDOWN_GRACE_MS) while everything they need still runs; then
  // the workers, the subgraphs, the job queue, the database and the event bus.
  const stop = async () => {
    for (const part of started.reverse()) {
      const began = Date.now();
      try {
        await part.close();
        log.info({ part: part.name, ms: Date.now() - began }, 'stopped');
      } catch (err) {
        log.error({ err, part: part.name }, 'error while stopping');
      }
    }
    started.length = 0;
  };

  try {
    const opening =
      role === 'gateway'
        ? undefined
        : (options.openDatabase ?? openDatabase)({
            databaseUrl: config.DATABASE_URL,
            ownerUrl: config.DATABASE_OWNER_URL,
            dataDir: config.DATA_DIR,
            poolSize: config.DATABASE_POOL_SIZE,
            onStaleLock: (message) => log.warn(message),
          });
    const [opened, loaded] = await Promise.allSettled([opening, loadParts()]);
    const db = opened.status === 'fulfilled' ? opened.value : undefined;
    if (db) started.push({ name: 'database', close: () => db.close() });
    if (opened.status === 'rejected') throw opened.reason;
    if (loaded.status === 'rejected') throw loaded.reason;
    const parts = loaded.value;
    let boss: PgBoss | undefined;
    if (db) {
      log.info({ database: db.kind === 'postgres' ? redactUrl(config.DATABASE_URL!) : (db.dataDir ?? 'pglite'), role: db.runtimeRole }, 'database open');
      // Expired jobs (their worker died) are handed out again at maintenance: run it often.
      const queue = await parts.createBoss(db, { boss: { maintenanceIntervalSeconds: 10 } });
      // During an outage every poll of every queue fails: the job queue resumes by itself when the database is back.
      queue.on('error', (err) => (isDatabaseUnavailable(err) ? log.warn({ err }, 'job queue: database unavailable') : log.error({ err }, 'job queue error')));
      await queue.start();
      boss = queue;
      // The workers wait for the jobs they hold; pg-boss also waits for a batch a worker fetched while it was
      // being stopped. One still running after 5 s is failed and retried after the next start. (At 1 s, a loaded
      // machine saw the database closed under a job that was still running.)
      started.push({ name: 'job queue', close: () => queue.stop({ graceful: true, wait: true, timeout: 5_000 }) });
      parts.registerProcessMetrics(runtime.metrics, db, queue, log);
    }
    let metricsUrl: string | undefined;
    const metricsPort = config.METRICS_PORT ?? (role === 'worker' ? DEFAULT_WORKER_METRICS_PORT : undefined);
    if (metricsPort !== undefined) {
      const listener = await parts.startMetricsListener(runtime.metrics, config.HOST, metricsPort);
      started.push({ name: 'metrics listener', close: () => listener.close() });
      metricsUrl = listener.url;
      log.info({ url: metricsUrl }, 'metrics listening');
    }
    const subgraphUrls: Record<string, string> = {};
    const localSubgraphs: Record<string, RunningSubgraph> = {};
    const subgraphHost = role === 'all' ? '127.0.0.1' : config.HOST;
    if (role === 'all' || role === 'ehr') {
      const ehr = await parts.startEhrSubgraph({
        ...runtime,
        db: db!,
        boss: boss!,
        host: subgraphHost,
        port: config.EHR_PORT ?? (role === 'all' ? 0 : DEFAULT_SUBGRAPH_PORTS.ehr),
      });
      started.push({ name: 'ehr subgraph', close: () => ehr.close() });
      subgraphUrls.ehr = ehr.url;
      localSubgraphs.ehr = ehr;
    }
    // Messaging reads the clinical record through one boundary (ClinicalRecord): on the EHR
    // subgraph's schema in this process when it runs here, else over HTTP to EHR_URL.
    let clinical: ClinicalRecord | undefined;
    if (role === 'all' || role === 'messaging' || role === 'worker') {
      const ehrUrl = subgraphUrls.ehr ?? config.EHR_URL ?? `http://127.0.0.1:${DEFAULT_SUBGRAPH_PORTS.ehr}/graphql`;
      const inProcess = role === 'all' && config.SUBGRAPH_TRANSPORT === 'inprocess';
      clinical = new parts.GraphQLClinicalRecord(inProcess ? parts.inProcessTransport(localSubgraphs.ehr) : parts.httpTransport(ehrUrl, secrets.internalKey));
    }
    if (role === 'all' || role === 'messaging') {
      const messaging = await parts.startMessagingSubgraph({
        ...runtime,
        db: db!,
        boss: boss!,
        host: subgraphHost,
        port: config.MESSAGING_PORT ?? (role === 'all' ? 0 : DEFAULT_SUBGRAPH_PORTS.messaging),
        clinical: clinical!,
      });
      started.push({ name: 'messaging subgraph', close: () => messaging.close() });
      subgraphUrls.messaging = messaging.url;
      localSubgraphs.messaging = messaging;
    }
    if (role === 'all' || role === 'worker') started.push(await parts.startWebhookWorker({ ...runtime, db: db!, boss: boss! }));
    if (role === 'all' || role === 'worker') {
      const worker = await parts.startMessagingWorker({
        ...runtime,
        db: db!,
        boss: boss!,
        clinical: clinical!,
        callbackUrls: parts.providerCallbackUrls(config),
      });
      started.push({ name: 'delivery worker', close: () => worker.close() });
    }
    let gateway: RunningGateway | undefined;
    if (role === 'all' || role === 'gateway') {
      const urls =
        role === 'all'
          ? subgraphUrls
          : {
              messaging: config.MESSAGING_URL ?? `http://127.0.0.1:${DEFAULT_SUBGRAPH_PORTS.messaging}/graphql`,
              ehr: config.EHR_URL ?? `http://127.0.0.1:${DEFAULT_SUBGRAPH_PORTS.ehr}/graphql`,
            };
      gateway = await parts.startGateway({
        ...runtime,
        subgraphUrls: urls,
        localSubgraphs: role === 'all' && config.SUBGRAPH_TRANSPORT === 'inprocess' ? localSubgraphs : undefined,
        readiness: db ? [{ name: 'database', check: () => db.ping() }] : [],
      });
      started.push({ name: 'gateway', close: () => gateway!.close() });
    }
    return { runtime, gateway, subgraphUrls, db, boss, metricsUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
