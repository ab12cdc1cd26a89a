import 'reflect-metadata';
import { ConfigError } from '../common/config';
import { ROLES, startPlatform, type ProcessRole } from './platform';

/** `node dist/bin/caregraph.js [all|gateway|messaging|ehr|worker]`: one CareGraph process. */
async function main(): Promise<void> {
  const role = (process.argv[2] ?? 'all') as ProcessRole;
  if (!ROLES.includes(role)) {
    console.error(`Unknown role '${role}'. Use one of: ${ROLES.join(', ')}`);
    process.exit(2);
  }
  const platform = await startPlatform(role);
  const { logger } = platform.runtime;
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
