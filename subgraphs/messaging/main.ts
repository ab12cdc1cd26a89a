import { migrate } from '../../common/db/migrate';
import { startSubgraphServer } from '../../common/graphql/subgraph-server';
import type { RunningServer } from '../../common/http/listen';
import type { SubgraphStartOptions } from '../../common/runtime';
import { createMessagingPrisma } from './db/client';
import { seedMessaging } from './seed';
import { buildMessagingSchema, createMessagingContext, MESSAGING_SUBGRAPH } from './index';

/** Migrates and seeds the messaging schema, then serves the subgraph. */
export async function startMessagingSubgraph(options: SubgraphStartOptions): Promise<RunningServer> {
  const logger = options.logger.child({ subgraph: MESSAGING_SUBGRAPH });
  const { applied } = await migrate(options.db, 'messaging', (msg) => logger.info(msg));
  if (applied.length > 0) logger.info({ applied }, 'messaging migrations applied');
  const prisma = createMessagingPrisma(options.db);
  if (await seedMessaging(prisma)) logger.info('messaging demo data seeded');
  const { schema } = await buildMessagingSchema();
  const server = await startSubgraphServer({
    name: MESSAGING_SUBGRAPH,
    schema,
    internalKey: options.secrets.internalKey,
    logger,
    host: options.host,
    port: options.port,
    createContext: createMessagingContext({ prisma }),
  });
  return {
    ...server,
    close: async () => {
      await server.close();
      await prisma.$disconnect();
    },
  };
}
