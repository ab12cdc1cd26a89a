import 'reflect-metadata';
import { ConfigError, loadConfig } from '../common/config';
import { isDatabaseUnavailable } from '../common/db/unavailable';
import { createLogger } from '../common/logger';
import { ROLES, startPlatform, type ProcessRole } from './platform';

/** `node dist/bin/caregraph.js [all|gateway|messaging|ehr|worker]`: one CareGraph process. */
async function main(): Promise<void> {
  const role = (process.argv[2] ?? 'all') as ProcessRole;
  if (!ROLES.includes(role)) {
    console.error(`Unknown role '${role}'. Use one of: ${ROLES.join(', ')}`);
    process.exit(2);
  }
  const logger = createLogger(loadConfig(process.env).LOG_LEVEL);
  // A rejection nothing awaited. pg-boss 10 marks a job completed or failed without awaiting it, so a
  // database outage at that moment lands here; that job stays active until it expires and is handed out
  // again. A connection error is the outage the process rides out (requests answer 503, the loops retry):
  // logged, not fatal. Anything else is a bug, and the process exits as Node's default would have it.
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnavailable(reason)) {
      logger.warn({ err: reason }, 'database unavailable under a background task; it is retried');
      return;
    }
    logger.fatal({ err: reason }, 'unhandled promise rejection; exiting');
    process.exit(1);
  });
  const platform = await startPlatform(role, process.env, { logger });
  logger.info({ role }, 'started');
  if (platform.gateway) logger.info(`CareGraph is serving on ${platform.gateway.url} (GraphQL at /graphql, REST at /v1 and /api/ehr)`);

  // One shutdown, on the first SIGTERM or SIGINT (Ctrl-C in a terminal reaches both npm and this
  // process, so a second signal is expected and changes nothing). Apollo's own signal handlers are
  // off (stopOnTerminationSignals: false): each started a stop() of its own, and a second stop()
  // during one waits on a barrier @apollo/server 5 resolves only when stopping fails, so every
  // shutdown hung until the backstop and exited 1.
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const began = Date.now();
    const { SHUTDOWN_GRACE_MS } = platform.runtime.config;
    logger.info({ signal, graceMs: SHUTDOWN_GRACE_MS }, 'shutting down: draining requests in flight, then stopping workers, subgraphs, queue, database');
    // The backstop for a part that never finishes stopping; each part is bounded well below it.
    const force = setTimeout(() => {
      logger.error({ ms: Date.now() - began }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS + 10_000);
    force.unref();
    platform.stop().then(
      () => {
        logger.info({ ms: Date.now() - began }, 'shutdown complete');
        process.exit(0);
      },
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error('CareGraph failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
