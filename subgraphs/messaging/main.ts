import { ensureRecoveryQueue } from './webhooks/recovery';
import { startPatientExportWorker } from './privacy/export.service';
import { MessagingRetention, scheduleMessagingPurge } from './privacy/retention';
import { createHmac } from 'node:crypto';
import { ensureMigrated } from '../../common/db/migrate';
import { FieldCipher } from '../../common/crypto';
import { startSubgraphServer, type RunningSubgraph } from '../../common/graphql/subgraph-server';
import { prepareSubgraph, subgraphServerOptions } from '../../common/subgraph-start';
import type { Runtime, SubgraphStartOptions } from '../../common/runtime';
import type { Database } from '../../common/db/database';
import type PgBoss from 'pg-boss';
import { createMessagingPrisma } from './db/client';
import { seedMessaging } from './seed';
import { ensureOrganizations } from './organizations/organization.service';
import { createWebhookEngine } from './webhooks/worker';
import type { ClinicalRecord } from './clinical-record/client';
import { ensureQueues } from './delivery/jobs';
import { relayClinicalEvents } from './events/clinical-relay';
import { startAppointmentReplyWorker } from './replies/appointment-reply';
import { startReminderWorker } from './reminders/sender';
import { startDeliveryWorker } from './delivery/worker';
import type { CallbackUrls } from './delivery/providers';
import { sealMessagingContent } from './keys/seal';
import { buildMessagingSchema, createMessagingContext, MESSAGING_SUBGRAPH } from './index';
import { messagingMetrics } from './metrics';

/** A key for recipient hashes, derived from the encryption key (never stored). */
function recipientHashKey(encryptionKey: Buffer): Buffer {
  return createHmac('sha256', encryptionKey).update('caregraph:recipient-hash').digest();
}

/** What messaging is started with besides the subgraph basics: its way into the clinical record (chosen by the composition root). */
export interface MessagingStartOptions extends SubgraphStartOptions {
  clinical: ClinicalRecord;
}

/** Migrates and (outside production) seeds the messaging schema, then serves the subgraph. */
export async function startMessagingSubgraph(options: MessagingStartOptions): Promise<RunningSubgraph> {
  const { logger, cipher } = await prepareSubgraph(options, 'messaging', MESSAGING_SUBGRAPH);
  const prisma = createMessagingPrisma(options.db);
  // Rows written before message content was encrypted at rest: encrypt them now (a no-op once done).
  const sealed = await sealMessagingContent(prisma, cipher, { rotate: false, log: (msg) => logger.info(msg) });
  if (Object.keys(sealed.tenants).length > 0) logger.info('legacy plaintext message content encrypted');
  if (!options.config.production && (await seedMessaging(prisma))) logger.info('messaging demo data seeded');
  // The tenants the deployment names exist as records (the demo tenants, or a production deployment's first ones).
  const bootstrapped = await ensureOrganizations(prisma, options.config.TENANTS);
  if (bootstrapped.length > 0) logger.info({ tenants: bootstrapped }, 'tenant records created');
  await ensureQueues(options.boss, options.config.DELIVERY_JOB_EXPIRY_SECONDS);
  await ensureRecoveryQueue(options.boss);
  const { schema } = await buildMessagingSchema();
  // The subgraph's own engine makes the first attempt of test events (the sendTestEvent mutation).
  const webhookEngine = createWebhookEngine(options, prisma);
  const { clinical } = options;
  const relay = () => relayClinicalEvents(prisma, cipher, options.events, options.boss, options.clock);
  const hashKey = recipientHashKey(options.secrets.encryptionKey);
  const metrics = messagingMetrics(options.metrics);
  const server = await startSubgraphServer(
    subgraphServerOptions(
      options,
      MESSAGING_SUBGRAPH,
      logger,
      schema,
      createMessagingContext({
        prisma,
        webhooks: {
          cipher,
          allowInsecure: options.config.WEBHOOK_ALLOW_INSECURE,
          engine: webhookEngine.engine,
          secretOverlapMs: options.config.WEBHOOK_SECRET_OVERLAP,
          clock: options.clock,
          boss: options.boss,
          retentionDays: options.config.WEBHOOK_RETENTION_DAYS,
        },
        cipher,
        hashKey,
        clinical,
        boss: options.boss,
        events: options.events,
        relayClinicalEvents: relay,
        metrics,
        rateLimits: options.config.rateLimits,
        activity: options.activity,
        clock: options.clock,
      }),
    ),
  );
  // Replies whose appointment change did not settle at once (clinical record down, process died) are retried here.
  const replyWorker = await startAppointmentReplyWorker(options.boss, { prisma, clinical, relay, logger });
  // Automatic reminders, scheduled by the relay when appointments are booked or moved, go out here when due.
  const reminderWorker = await startReminderWorker(
    options.boss,
    { prisma, cipher, clinical, boss: options.boss, events: options.events, hashKey, metrics, clock: options.clock },
    logger,
  );
  // Subject access exports requested on any instance are packed here.
  const exportWorker = await startPatientExportWorker(options.boss, { prisma, cipher, clinical, logger: logger.child({ component: 'export' }) });
  return {
    ...server,
    close: async () => {
      await server.close();
      await exportWorker.close();
      await replyWorker.close();
      await reminderWorker.close();
      await webhookEngine.sender.close();
      await prisma.$disconnect();
    },
  };
}

/**
 * The delivery worker role: sends queued messages (migrates first, so it may start before the subgraph);
 * asks the clinical record for consent. `callbackUrls`: where providers post delivery reports (the gateway's public routes).
 */
export async function startMessagingWorker(
  options: Runtime & { db: Database; boss: PgBoss; clinical: ClinicalRecord; callbackUrls?: CallbackUrls },
): Promise<{ close(): Promise<void> }> {
  const logger = options.logger.child({ role: 'worker' });
  await ensureMigrated(options.db, 'messaging', (msg) => logger.info(msg));
  const prisma = createMessagingPrisma(options.db);
  const worker = await startDeliveryWorker({
    prisma,
    boss: options.boss,
    events: options.events,
    config: options.config,
    cipher: new FieldCipher(options.secrets.encryptionKey, options.config.PREVIOUS_ENCRYPTION_KEYS),
    clinical: options.clinical,
    callbackUrls: options.callbackUrls,
    logger,
    metrics: messagingMetrics(options.metrics),
    clock: options.clock,
  });
  const purge = await scheduleMessagingPurge(
    options.boss,
    new MessagingRetention(prisma, options.clinical, options.clock),
    logger.child({ component: 'retention' }),
  );
  return {
    close: async () => {
      await purge.close();
      await worker.close();
      await prisma.$disconnect();
    },
  };
}
