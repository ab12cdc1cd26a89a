import type { SubgraphStartOptions } from '../../common/runtime';
import { prepareSubgraph, subgraphServerOptions } from '../../common/subgraph-start';
import { startSubgraphServer, type RunningSubgraph } from '../../common/graphql/subgraph-server';
import { createEhrPrisma } from './db/client';
import { seedEhr } from './seed';
import { backfillClinicalIndex } from './compositions/index-backfill';
import { buildEhrSchema, createEhrContext, EHR_SUBGRAPH } from './index';
import { join } from 'node:path';
import { chainKey } from './audit/chain';
import { AuditCheckpointer, CheckpointLog } from './audit/checkpoints';
import { ehrMetrics } from './metrics';
import { RecordRetention, scheduleRecordPurge } from './privacy/retention';

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
  const backfill = await backfillClinicalIndex(prisma, cipher);
  if (backfill.indexed > 0) logger.info({ indexed: backfill.indexed }, 'clinical index backfilled');
  if (backfill.unreadable.length > 0)
    logger.warn({ unreadable: backfill.unreadable }, 'compositions left out of the clinical index: no configured key reads them');
  const metrics = ehrMetrics(options.metrics);
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
  const { schema } = await buildEhrSchema();
  const server = await startSubgraphServer(
    subgraphServerOptions(
      options,
      EHR_SUBGRAPH,
      logger,
      schema,
      createEhrContext({
        prisma,
        cipher,
        systemId: options.config.OPENEHR_SYSTEM_ID,
        transactionalReads,
        auditSeal,
        clock: options.clock,
        metrics,
        xds: { assigningAuthority: options.config.XDS_ASSIGNING_AUTHORITY, repositoryUniqueId: options.config.XDS_REPOSITORY_UNIQUE_ID },
      }),
    ),
  );
  return {
    ...server,
    close: async () => {
      await server.close();
      await purge.close();
      await checkpointer.stop();
      await prisma.$disconnect();
    },
  };
}
