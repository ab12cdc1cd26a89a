import type { Config } from './config';
import type { Secrets } from './secrets';
import type { Logger } from './logger';
import type { Database } from './db/database';
import type { EventBus } from './events/bus';
import type PgBoss from 'pg-boss';

/** What every role of a CareGraph process is started with. */
export interface Runtime {
  config: Config;
  secrets: Secrets;
  logger: Logger;
  /** Live event fan-out (in-process, or Redis when REDIS_URL is set). */
  events: EventBus;
}

export interface SubgraphStartOptions extends Runtime {
  db: Database;
  /** The durable job queue on the process database (started). */
  boss: PgBoss;
  host: string;
  port: number;
  /** The EHR subgraph's GraphQL URL (messaging reads patients and appointments there). */
  ehrUrl?: string;
}

/** Something started that must be stopped on shutdown, in reverse order of start. */
export interface Stoppable {
  name: string;
  close(): Promise<void>;
}
