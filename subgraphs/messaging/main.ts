import { createHmac } from 'node:crypto';
import { migrate } from '../../common/db/migrate';
import { FieldCipher } from '../../common/crypto';
import { startSubgraphServer, type RunningSubgraph } from '../../common/graphql/subgraph-server';
import type { Runtime, SubgraphStartOptions } from '../../common/runtime';
import type { Database } from '../../common/db/database';
import type PgBoss from 'pg-boss';
import { createMessagingPrisma } from './db/client';
import { seedMessaging } from './seed';
import { createWebhookEngine } from './webhooks/worker';
import { ClinicalRecordClient } from './clinical-record/client';
import { ensureQueues } from './delivery/jobs';
import { startDeliveryWorker } from './delivery/worker';
import { buildMessagingSchema, createMessagingContext, MESSAGING_SUBGRAPH } from './index';

/** A key for recipient hashes, derived from the encryption key (never stored). */
export function recipientHashKey(encryptionKey: Buffer): Buffer {
  return createHmac('sha256', encryptionKey).update('caregraph:recipient-hash').digest();
}

/** Migrates and seeds the messaging schema, then serves the subgraph. */
export async function startMessagingSubgraph(options: SubgraphStartOptions): Promise<RunningSubgraph> {
  const logger = options.logger.child({ subgraph: MESSAGING_SUBGRAPH });
  const { applied } = await migrate(options.db, 'messaging', (msg) => logger.info(msg));
  if (applied.length > 0) logger.info({ applied }, 'messaging migrations applied');
  const prisma = createMessagingPrisma(options.db);
  if (await seedMessaging(prisma)) logger.info('messaging demo data seeded');
  await ensureQueues(options.boss);
  if (!options.ehrUrl) throw new Error('The messaging subgraph needs the EHR subgraph URL (EHR_URL)');
  const { schema } = await buildMessagingSchema();
  // The subgraph's own engine makes the first attempt of test events (POST /v1/webhooks/{id}/test).
  const webhookEngine = createWebhookEngine(options, prisma);
  const cipher = new FieldCipher(options.secrets.encryptionKey);
  const server = await startSubgraphServer({
    name: MESSAGING_SUBGRAPH,
    schema,
    internalKey: options.secrets.internalKey,
    logger,
    host: options.host,
    port: options.port,
    createContext: createMessagingContext({
      prisma,
      webhooks: { cipher, allowInsecure: options.config.WEBHOOK_ALLOW_INSECURE, engine: webhookEngine.engine },
      cipher,
      hashKey: recipientHashKey(options.secrets.encryptionKey),
      clinical: new ClinicalRecordClient(options.ehrUrl, options.secrets.internalKey),
      boss: options.boss,
      events: options.events,
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

/** The delivery worker role: sends queued messages (migrates first, so it may start before the subgraph). */
export async function startMessagingWorker(options: Runtime & { db: Database; boss: PgBoss }): Promise<{ close(): Promise<void> }> {
  const logger = options.logger.child({ role: 'worker' });
  await migrate(options.db, 'messaging', (msg) => logger.info(msg));
  const prisma = createMessagingPrisma(options.db);
  const worker = await startDeliveryWorker({
    prisma,
    boss: options.boss,
    events: options.events,
    config: options.config,
    cipher: new FieldCipher(options.secrets.encryptionKey),
    logger,
  });
  return {
    close: async () => {
      await worker.close();
      await prisma.$disconnect();
    },
  };
}
