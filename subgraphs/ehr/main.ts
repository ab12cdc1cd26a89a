import type { SubgraphStartOptions } from '../../common/runtime';
import { migrate } from '../../common/db/migrate';
import { FieldCipher } from '../../common/crypto';
import { startSubgraphServer, type RunningSubgraph } from '../../common/graphql/subgraph-server';
import { createEhrPrisma } from './db/client';
import { seedEhr } from './seed';
import { buildEhrSchema, createEhrContext, EHR_SUBGRAPH } from './index';

/** Migrates and seeds the clinical record's schema, then serves the subgraph. */
export async function startEhrSubgraph(options: SubgraphStartOptions): Promise<RunningSubgraph> {
  const logger = options.logger.child({ subgraph: EHR_SUBGRAPH });
  const { applied } = await migrate(options.db, 'ehr', (msg) => logger.info(msg));
  if (applied.length > 0) logger.info({ applied }, 'ehr migrations applied');
  const prisma = createEhrPrisma(options.db);
  const cipher = new FieldCipher(options.secrets.encryptionKey, options.config.PREVIOUS_ENCRYPTION_KEYS);
  if (await seedEhr(prisma, cipher)) logger.info('ehr demo data seeded');
  const { schema } = await buildEhrSchema();
  const server = await startSubgraphServer({
    name: EHR_SUBGRAPH,
    schema,
    internalKey: options.secrets.internalKey,
    logger,
    host: options.host,
    port: options.port,
    createContext: createEhrContext({ prisma, cipher, systemId: options.config.OPENEHR_SYSTEM_ID, rowLevelSecurity: options.db.kind === 'postgres' }),
  });
  return {
    ...server,
    close: async () => {
      await server.close();
      await prisma.$disconnect();
    },
  };
}
