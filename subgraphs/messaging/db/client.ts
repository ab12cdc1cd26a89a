import { PrismaClient } from './generated/client';
import type { Database } from '../../../common/db/database';

export type MessagingPrisma = InstanceType<typeof PrismaClient>;

/** The messaging subgraph's Prisma client, bound to the `messaging` PostgreSQL schema. */
export function createMessagingPrisma(db: Database): MessagingPrisma {
  return new PrismaClient({ adapter: db.adapterFactory('messaging') });
}
