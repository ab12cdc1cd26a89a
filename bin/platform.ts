import type PgBoss from 'pg-boss';
import { loadConfig, type Config } from '../common/config';
import { resolveSecrets } from '../common/secrets';
import { createLogger, type Logger } from '../common/logger';
import { openDatabase, isPostgresUrl, redactUrl, type Database } from '../common/db/database';
import type { Runtime, Stoppable } from '../common/runtime';
import { createBoss } from '../common/db/boss';
import { createEventBus } from '../common/events';
import { startGateway, type RunningGateway } from '../gateway/server';
import { startEhrSubgraph } from '../subgraphs/ehr/main';
import { startWebhookWorker } from '../subgraphs/messaging/webhooks/worker';
import { startMessagingSubgraph, startMessagingWorker } from '../subgraphs/messaging/main';
import type { RunningSubgraph } from '../common/graphql/subgraph-server';

export const ROLES = ['all', 'gateway', 'messaging', 'ehr', 'worker'] as const;
export type ProcessRole = (typeof ROLES)[number];

export interface Platform {
  runtime: Runtime;
  /** Set for roles that serve the gateway. */
  gateway?: RunningGateway;
  /** Subgraph URLs of this process, by name. */
  subgraphUrls: Record<string, string>;
  db?: Database;
  stop(): Promise<void>;
}

const DEFAULT_SUBGRAPH_PORTS = { messaging: 4001, ehr: 4002 } as const;

/** Scale-out roles share state through PostgreSQL and Redis; refuse to start without them. */
function checkScaleOut(role: ProcessRole, config: Config): void {
  if (role === 'all') return;
  const missing: string[] = [];
  if (role !== 'gateway' && !isPostgresUrl(config.DATABASE_URL)) missing.push('DATABASE_URL=postgres://…');
  if (!config.REDIS_URL) missing.push('REDIS_URL=redis://…');
  if (missing.length > 0) {
    throw new Error(`The '${role}' role runs beside other instances and needs ${missing.join(' and ')} (use 'npm start' for the all-in-one process)`);
  }
}

/**
 * The composition root: starts the parts of one process in order and stops
 * them in reverse. `npm start` runs role 'all'; scale-out runs one role per process.
 */
export async function startPlatform(role: ProcessRole, env: NodeJS.ProcessEnv = process.env, logger?: Logger): Promise<Platform> {
  const config = loadConfig(env);
  checkScaleOut(role, config);
  const log = logger ?? createLogger(config.LOG_LEVEL);
  const secrets = resolveSecrets(config);
  if (secrets.source === 'dev-file') log.warn(`using development secrets from ${config.DATA_DIR} (set AUTH_JWT_SECRET and ENCRYPTION_KEY in production)`);
  const started: Stoppable[] = [];
  const events = await createEventBus(config, log);
  started.push({ name: 'event bus', close: () => events.close() });
  const runtime: Runtime = { config, secrets, logger: log, events };
  const stop = async () => {
    for (const part of started.reverse()) {
      try {
        await part.close();
      } catch (err) {
        log.error({ err, part: part.name }, 'error while stopping');
      }
    }
    started.length = 0;
  };

  try {
    let db: Database | undefined;
    if (role !== 'gateway') {
      db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
      started.push({ name: 'database', close: () => db!.close() });
      log.info({ database: db.kind === 'postgres' ? redactUrl(config.DATABASE_URL!) : (db.dataDir ?? 'pglite') }, 'database open');
    }
    let boss: PgBoss | undefined;
    if (db) {
      // Expired jobs (their worker died) are handed out again at maintenance: run it often.
      const queue = await createBoss(db, { boss: { maintenanceIntervalSeconds: 10 } });
      queue.on('error', (err) => log.error({ err }, 'job queue error'));
      await queue.start();
      boss = queue;
      started.push({ name: 'job queue', close: () => queue.stop({ graceful: true, wait: true, timeout: 10_000 }) });
    }
    const subgraphUrls: Record<string, string> = {};
    const localSubgraphs: Record<string, RunningSubgraph> = {};
    const subgraphHost = role === 'all' ? '127.0.0.1' : config.HOST;
    if (role === 'all' || role === 'ehr') {
      const ehr = await startEhrSubgraph({ ...runtime, db: db!, boss: boss!, host: subgraphHost, port: config.EHR_PORT ?? (role === 'all' ? 0 : DEFAULT_SUBGRAPH_PORTS.ehr) });
      started.push({ name: 'ehr subgraph', close: ehr.close });
      subgraphUrls.ehr = ehr.url;
      localSubgraphs.ehr = ehr;
    }
    if (role === 'all' || role === 'messaging') {
      const messaging = await startMessagingSubgraph({
        ...runtime,
        db: db!,
        boss: boss!,
        host: subgraphHost,
        port: config.MESSAGING_PORT ?? (role === 'all' ? 0 : DEFAULT_SUBGRAPH_PORTS.messaging),
        ehrUrl: subgraphUrls.ehr ?? config.EHR_URL ?? `http://127.0.0.1:${DEFAULT_SUBGRAPH_PORTS.ehr}/graphql`,
      });
      started.push({ name: 'messaging subgraph', close: messaging.close });
      subgraphUrls.messaging = messaging.url;
      localSubgraphs.messaging = messaging;
    }
    if (role === 'all' || role === 'worker') started.push(await startWebhookWorker({ ...runtime, db: db! }));
    if (role === 'all' || role === 'worker') {
      const worker = await startMessagingWorker({ ...runtime, db: db!, boss: boss! });
      started.push({ name: 'delivery worker', close: worker.close });
    }
    let gateway: RunningGateway | undefined;
    if (role === 'all' || role === 'gateway') {
      const urls = role === 'all'
        ? subgraphUrls
        : {
            messaging: config.MESSAGING_URL ?? `http://127.0.0.1:${DEFAULT_SUBGRAPH_PORTS.messaging}/graphql`,
            ehr: config.EHR_URL ?? `http://127.0.0.1:${DEFAULT_SUBGRAPH_PORTS.ehr}/graphql`,
          };
      gateway = await startGateway({
        ...runtime,
        subgraphUrls: urls,
        localSubgraphs: role === 'all' && config.SUBGRAPH_TRANSPORT === 'inprocess' ? localSubgraphs : undefined,
        readiness: db ? [{ name: 'database', check: () => db!.ping() }] : [],
      });
      started.push({ name: 'gateway', close: gateway.close });
    }
    return { runtime, gateway, subgraphUrls, db, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
