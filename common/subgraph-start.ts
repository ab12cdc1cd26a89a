import type { GraphQLSchema } from 'graphql';
import { FieldCipher } from './crypto';
import { ensureMigrated, type Subgraph } from './db/migrate';
import type { BaseContext, SubgraphServerOptions } from './graphql/subgraph-server';
import type { Logger } from './logger';
import type { SubgraphStartOptions } from './runtime';

/** The first steps of every subgraph's start: its logger, its schema migrated, its field cipher. */
export async function prepareSubgraph(options: SubgraphStartOptions, subgraph: Subgraph, name: string): Promise<{ logger: Logger; cipher: FieldCipher }> {
  const logger = options.logger.child({ subgraph: name });
  const { applied } = await ensureMigrated(options.db, subgraph, (msg) => logger.info(msg));
  if (applied.length > 0) logger.info({ applied }, `${subgraph} migrations applied`);
  return { logger, cipher: new FieldCipher(options.secrets.encryptionKey, options.config.PREVIOUS_ENCRYPTION_KEYS) };
}

/** The server options every subgraph takes from its start options; the subgraph adds its context. */
export function subgraphServerOptions<Ctx extends BaseContext>(
  options: SubgraphStartOptions,
  name: string,
  logger: Logger,
  schema: GraphQLSchema,
  createContext: (base: BaseContext) => Ctx,
): SubgraphServerOptions<Ctx> {
  const { config, secrets, host, port, metrics } = options;
  return {
    name,
    schema,
    logger,
    host,
    port,
    metrics,
    createContext,
    internalKey: secrets.internalKey,
    production: config.production,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  };
}
