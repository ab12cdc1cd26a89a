import type { Logger } from '../../../common/logger';
import type { Database } from '../../../common/db/database';

/**
 * Planner statistics for the embedded database. PGlite runs no autovacuum,
 * so without this its tables keep the statistics of when they were created
 * (none): the planner then misjudges the clinical index's size and picks
 * plans that make SQL-answered AQL slower than decrypting (docs/benchmarks.md).
 * This analyzes a table as PostgreSQL's autovacuum would: when the rows
 * changed since its last ANALYZE exceed 50 plus 10 % of its rows (the
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

  /** ANALYZE the tables whose changes since their last ANALYZE pass the threshold; the tables analyzed. */
  async refresh(): Promise<string[]> {
    const { rows } = await this.db.query<{ table: string }>(
      `SELECT relname AS "table" FROM pg_stat_user_tables
       WHERE schemaname = 'ehr' AND relname = ANY($1::text[])
         AND (n_mod_since_analyze > $2::int + $3::float8 * n_live_tup OR (last_analyze IS NULL AND last_autoanalyze IS NULL AND n_live_tup > 0))`,
      [TABLES, THRESHOLD, SCALE_FACTOR],
    );
    if (rows.length === 0) return [];
    const started = Date.now();
    await this.db.query(`ANALYZE ${rows.map((r) => `ehr."${r.table}"`).join(', ')}`);
    this.logger.info({ tables: rows.map((r) => r.table), ms: Date.now() - started }, 'planner statistics refreshed');
    return rows.map((r) => r.table);
  }
}
