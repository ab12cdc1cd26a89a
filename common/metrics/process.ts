import type PgBoss from 'pg-boss';
import type { Database } from '../db/database';
import { statsOf, type PoolStats } from '../db/pool-stats';
import { JOB_QUEUE_SCHEMA } from '../db/roles';
import type { Logger } from '../logger';
import { Gauge, withTimeout, type MetricsRegistry } from './registry';

/** How long a scrape may wait for the job-queue query before those series are left out. */
const QUEUE_QUERY_TIMEOUT_MS = 2_000;

/**
 * Process-wide series read on scrape: the pg connection pools (PostgreSQL)
 * and the depth and age of every pg-boss queue. The queue query runs through
 * pg-boss's own connection, as the least-privilege runtime role, which
 * holds SELECT on the job tables (docs/security.md, Database roles).
 */
export function registerProcessMetrics(registry: MetricsRegistry, db: Database, boss: PgBoss, logger: Logger): void {
  const pools = (): PoolStats[] => {
    const jobQueuePool = (boss.getDb() as { pool?: Parameters<typeof statsOf>[1] }).pool;
    return [...db.poolStats(), ...(jobQueuePool ? [statsOf('jobqueue', jobQueuePool)] : [])];
  };
  const poolGauge = (name: string, help: string, pick: (s: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        this.reset();
        for (const stats of pools()) this.set({ pool: stats.pool }, pick(stats));
      },
    });
  poolGauge('caregraph_db_pool_connections', 'Open connections of a PostgreSQL pool (runtime, owner, jobqueue)', (s) => s.total);
  poolGauge('caregraph_db_pool_idle', 'Idle connections of a PostgreSQL pool', (s) => s.idle);
  poolGauge('caregraph_db_pool_waiting', 'Queries waiting for a connection of a PostgreSQL pool', (s) => s.waiting);

  // Both queue gauges come from one query per scrape.
  let snapshot: { at: number; rows: Promise<QueueRow[]> } | undefined;
  const queues = () => {
    if (!snapshot || Date.now() - snapshot.at > 1_000) {
      const rows = withTimeout(boss.getDb().executeSql(QUEUE_SQL, []), QUEUE_QUERY_TIMEOUT_MS, 'job queue query').then((res) => res.rows as QueueRow[]);
      snapshot = { at: Date.now(), rows };
    }
    return snapshot.rows;
  };
  const queueGauge = (name: string, help: string, pick: (r: QueueRow) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['queue'],
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const row of await queues()) this.set({ queue: row.name }, pick(row));
        } catch (err) {
          logger.warn({ err }, 'job queue metrics unavailable');
        }
      },
    });
  queueGauge('caregraph_job_queue_depth', 'Jobs waiting in a pg-boss queue (created or retry, due or not)', (r) => Number(r.depth));
  queueGauge('caregraph_job_queue_oldest_seconds', 'How long the oldest due job of a queue has waited since it became due (0 when none)', (r) => Number(r.age));
}

interface QueueRow {
  name: string;
  depth: number | string;
  age: number | string;
}

// Queue names are ours (a handful), so they are safe as label values.
const QUEUE_SQL = `
  SELECT q.name,
         count(j.id) AS depth,
         coalesce(extract(epoch FROM now() - min(j.start_after) FILTER (WHERE j.start_after <= now())), 0)::float8 AS age
    FROM ${JOB_QUEUE_SCHEMA}.queue q
    LEFT JOIN ${JOB_QUEUE_SCHEMA}.job j ON j.name = q.name AND j.state < 'active'
   GROUP BY q.name`;
