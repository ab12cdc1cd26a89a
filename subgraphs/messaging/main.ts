import { migrate } from '../../common/db/migrate';
import { startSubgraphServer } from '../../common/graphql/subgraph-server';
import type { RunningServer } from '../../common/http/listen';
import type { SubgraphStartOptions } from '../../common/runtime';
import { createMessagingPrisma } from './db/client';
import { seedMessaging } from './seed';
import { FieldCipher } from '../../common/crypto';
import { createWebhookEngine } from './webhooks/worker';
import { buildMessagingSchema, createMessagingContext, MESSAGING_SUBGRAPH } from './index';

/** Migrates and seeds the messaging schema, then serves the subgraph. */
export async function startMessagingSubgraph(options: SubgraphStartOptions): Promise<RunningServer> {
  const logger = options.logger.child({ subgraph: MESSAGING_SUBGRAPH });
  const { applied } = await migrate(options.db, 'messaging', (msg) => logger.info(msg));
  if (applied.length > 0) logger.info({ applied }, 'messaging migrations applied');
  const prisma = createMessagingPrisma(options.db);
  if (await seedMessaging(prisma)) logger.info('messaging demo data seeded');
  const { schema } = await buildMessagingSchema();
  // The subgraph's own engine makes the first attempt of test events (POST /v1/webhooks/{id}/test).
  const webhookEngine = createWebhookEngine(options, prisma);
  const server = await startSubgraphServer({
    name: MESSAGING_SUBGRAPH,
    schema,
    internalKey: options.secrets.internalKey,
    logger,
    host: options.host,
    port: options.port,
    createContext: createMessagingContext({
      prisma,
      webhooks: { cipher: new FieldCipher(options.secrets.encryptionKey), allowInsecure: options.config.WEBHOOK_ALLOW_INSECURE, engine: webhookEngine.engine },
    }),
  });
  return {
    ...server,
    close: async () => {
      await server.close();
      await webhookEngine.sender.close();
      await prisma.$disconnect();
    },
  };
}
