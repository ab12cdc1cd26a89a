import type { Logger } from '../../../common/logger';
import type { Database } from '../../../common/db/database';

/**
 * Planner statistics for the embedded database. PGlite runs no autovacuum,
 * so without this its tables keep the statistics of when they were created
 * (none): the planner then misjudges the clinical index's size and picks
 * plans that make SQL-answered AQL slower than decrypting (docs/benchmarks.md).
 * This analyzes a table about as PostgreSQL's autovacuum would: when its
 * rows changed by more than 50 plus 10 % since its last ANALYZE (the
 * defaults of autovacuum_analyze_threshold and _scale_factor), checked at
 * start-up (after the clinical index backfill) and every `intervalMs`.
 */
const TABLES = ['Ehr', 'Composition', 'CompositionVersion', 'ClinicalIndexEntry'];
const THRESHOLD = 50;
const SCALE_FACTOR = 0.1;

export class EmbeddedStatistics {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly intervalMs = 60_000,
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.running ??= this.refresh()
        .then(() => undefined)
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'planner statistics not refreshed'))
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * ANALYZE the tables whose row count moved away from the one their last ANALYZE recorded (pg_class.reltuples,
   * -1 before any) by more than the threshold; the tables analyzed. PGlite keeps no per-table change counters
   * (pg_stat_user_tables stays empty), so the rows are counted.
   */
  async refresh(): Promise<string[]> {
    const stale: string[] = [];
    for (const table of TABLES) {
      const { rows } = await this.db.query<{ rows: number; analyzed: number }>(
        `SELECT (SELECT count(*) FROM ehr."${table}")::float8 AS rows,
                (SELECT reltuples FROM pg_class WHERE oid = 'ehr."${table}"'::regclass)::float8 AS analyzed`,
      );
      const { rows: count, analyzed } = rows[0];
      if (analyzed < 0 ? count > 0 : Math.abs(count - analyzed) > THRESHOLD + SCALE_FACTOR * analyzed) stale.push(table);
    }
    if (stale.length === 0) return [];
    const started = Date.now();
    await this.db.query(`ANALYZE ${stale.map((t) => `ehr."${t}"`).join(', ')}`);
    this.logger.info({ tables: stale, ms: Date.now() - started }, 'planner statistics refreshed');
    return stale;
  }
}
