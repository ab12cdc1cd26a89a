import type { SubgraphStartOptions } from '../../common/runtime';
import { prepareSubgraph, subgraphServerOptions } from '../../common/subgraph-start';
import { startSubgraphServer, type RunningSubgraph } from '../../common/graphql/subgraph-server';
import { createEhrPrisma } from './db/client';
import { seedEhr } from './seed';
import { backfillClinicalIndex } from './compositions/index-backfill';
import { EmbeddedStatistics } from './db/statistics';
import { buildEhrSchema, createEhrContext, EHR_SUBGRAPH } from './index';
import { join } from 'node:path';
import { chainKey } from './audit/chain';
import { AuditCheckpointer, CheckpointLog } from './audit/checkpoints';
import { aqlGateMetrics, ehrMetrics } from './metrics';
import { ConcurrencyGate } from '../../common/concurrency-gate';
import { RecordRetention, scheduleRecordPurge } from './privacy/retention';
import { XdsRepositoryClient } from './exchange/xds/repository-client';

/** Migrates and (outside production) seeds the clinical record's schema, then serves the subgraph. */
export async function startEhrSubgraph(options: SubgraphStartOptions): Promise<RunningSubgraph> {
  const { logger, cipher } = await prepareSubgraph(options, 'ehr', EHR_SUBGRAPH);
  const prisma = createEhrPrisma(options.db);
  const auditSeal = {
    chainKey: chainKey(options.secrets.auditKey),
    checkpoints: new CheckpointLog(options.config.AUDIT_CHECKPOINT_FILE ?? join(options.config.DATA_DIR, 'audit-checkpoints.jsonl'), options.secrets.auditKey),
  };
  // Demo patients are for development: a production database starts empty.
  if (!options.config.production && (await seedEhr(prisma, cipher, auditSeal.chainKey))) logger.info('ehr demo data seeded');
  // Before serving: indexed searches must see every composition, including those committed before the index existed.
  const backfill = await backfillClinicalIndex(prisma, cipher, (progress) => logger.info(progress, 'clinical index backfill: compositions indexed so far'));
  if (backfill.indexed > 0) logger.info({ indexed: backfill.indexed }, 'clinical index backfilled');
  if (backfill.unreadable.length > 0)
    logger.warn({ unreadable: backfill.unreadable }, 'compositions not indexed (again): no configured key reads them; rows they had are kept');
  // PGlite has no autovacuum: the planner's statistics are kept here (PostgreSQL's autovacuum keeps its own).
  const statistics = options.db.kind === 'pglite' ? new EmbeddedStatistics(options.db, logger.child({ component: 'statistics' })) : undefined;
  await statistics?.start();
  const metrics = ehrMetrics(options.metrics);
  const aqlGate = new ConcurrencyGate(options.config.AQL_CONCURRENCY);
  aqlGateMetrics(options.metrics, aqlGate);
  const checkpointer = new AuditCheckpointer(
    prisma,
    auditSeal.checkpoints,
    logger.child({ component: 'audit-checkpoints' }),
    options.config.AUDIT_CHECKPOINT_INTERVAL,
    metrics,
    options.clock,
  );
  await checkpointer.start();
  const transactionalReads = options.db.kind === 'postgres';
  const retention = new RecordRetention(prisma, auditSeal.chainKey, checkpointer, auditSeal.checkpoints, transactionalReads, options.clock);
  const purge = await scheduleRecordPurge(options.boss, retention, logger.child({ component: 'retention' }));
  const config = options.config;
  const xdsRepository = config.XDS_REPOSITORY_URL
    ? new XdsRepositoryClient({
        url: config.XDS_REPOSITORY_URL,
        token: config.XDS_REPOSITORY_TOKEN,
        caFile: config.XDS_REPOSITORY_CA_FILE,
        certFile: config.XDS_REPOSITORY_CERT_FILE,
        keyFile: config.XDS_REPOSITORY_KEY_FILE,
        timeoutMs: config.XDS_REPOSITORY_TIMEOUT_MS,
      })
    : undefined;
  const { schema } = await buildEhrSchema();
  const server = await startSubgraphServer({
    ...subgraphServerOptions(
      options,
      EHR_SUBGRAPH,
      logger,
      schema,
      createEhrContext({
        prisma,
        cipher,
        systemId: options.config.OPENEHR_SYSTEM_ID,
        aiAgentClients: config.AI_AGENT_CLIENTS,
        transactionalReads,
        auditSeal,
        clock: options.clock,
        metrics,
        aqlGate,
        xds: { assigningAuthority: config.XDS_ASSIGNING_AUTHORITY, repositoryUniqueId: config.XDS_REPOSITORY_UNIQUE_ID, sourceId: config.XDS_SOURCE_ID },
        xdsRepository,
      }),
    ),
    // Every change and every access log entry of the clinical record goes through the request's store.
    readAccount: (context) => context.readAccount,
  });
  return {
    ...server,
    close: async () => {
      await server.close();
      await statistics?.stop();
      await purge.close();
      await checkpointer.stop();
      await xdsRepository?.close();
      await prisma.$disconnect();
    },
  };
}
