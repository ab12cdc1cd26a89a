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
  if (platform.gateway) logger.info(`CareGraph is serving on ${platform.gateway.url} (GraphQL at /graphql, REST at /v1 and /api/ehr)`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took longer than 15 s; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    platform.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error('CareGraph failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
