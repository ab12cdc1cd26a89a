import type { Config } from './config';
import type { Secrets } from './secrets';
import type { Logger } from './logger';
import type { Database } from './db/database';
import type { EventBus } from './events/bus';
import type PgBoss from 'pg-boss';
import type { MetricsRegistry } from './metrics/registry';
import type { Clock } from './clock';
import type { TenantActivity } from './activity/tenant-activity';

/** What every role of a CareGraph process is started with. */
export interface Runtime {
  config: Config;
  secrets: Secrets;
  logger: Logger;
  /** Live event fan-out (in-process, or Redis when REDIS_URL is set). */
  events: EventBus;
  /** The process's Prometheus registry (one per process; every role serves it at /metrics). */
  metrics: MetricsRegistry;
  /** The time of leases, retries and schedules (common/clock.ts). */
  clock: Clock;
  /** Each tenant's recent API activity (gateway writes, messaging reads for the support desk). */
  activity?: TenantActivity;
}

export interface SubgraphStartOptions extends Runtime {
  db: Database;
  /** The durable job queue on the process database (started). */
  boss: PgBoss;
  host: string;
  port: number;
}

/** Something started that must be stopped on shutdown, in reverse order of start. */
export interface Stoppable {
  name: string;
  close(): Promise<void>;
}
