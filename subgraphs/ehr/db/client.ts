import { PrismaClient } from './generated/client';
import type { Database } from '../../../common/db/database';

export type EhrPrisma = InstanceType<typeof PrismaClient>;

/** The clinical record subgraph's Prisma client, bound to the `ehr` PostgreSQL schema. */
export function createEhrPrisma(db: Database): EhrPrisma {
  return new PrismaClient({ adapter: db.adapterFactory('ehr') });
}
