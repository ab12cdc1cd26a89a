import PgBoss from 'pg-boss';

import type { Database } from './database';
import { MIGRATION_LOCK_KEY } from './migrate';
import { applyRuntimePrivileges, ident, isCatalogRace, JOB_QUEUE_SCHEMA, type SqlRunner } from './roles';

export interface CreateBossOptions {
  /** PostgreSQL schema of pg-boss's tables (default 'pgboss'). */
  schema?: string;
  /** Extra pg-boss constructor options (intervals, retention, …). */
  boss?: Omit<PgBoss.ConstructorOptions, 'db' | 'connectionString' | 'schema'>;
  /** PostgreSQL only: size of pg-boss's own pool (default 4). */
  poolSize?: number;
}

/**
 * A pg-boss 10 instance on the process database, not started (the caller
 * starts and stops it). PostgreSQL: pg-boss's own pool on the same connection
 * string. PGlite: pg-boss's `db.executeSql` on the shared instance, where
 * statements without parameters (pg-boss's multi-statement scripts:
 * installation, maintenance, `BEGIN; …; COMMIT`) go through `exec` and the
 * others through `query`; PGlite's own mutex keeps them apart from Prisma's
 * transactions.
 */
export async function createBoss(db: Database, opts: CreateBossOptions = {}): Promise<PgBoss> {
  const schema = opts.schema ?? 'pgboss';
  await installJobQueue(db, schema);
  // The runtime role may not create or migrate the schema: the owner did above.
  const runtimeOptions = { ...opts.boss, schema, migrate: false };
  if (db.kind === 'postgres') {
    if (!db.connectionString) throw new Error('PostgreSQL database without its connection string');
    return new PgBoss({
      ...runtimeOptions,
      connectionString: db.connectionString,
      max: opts.poolSize ?? 4,
      application_name: 'caregraph-pgboss',
    });
  }
  const pglite = db.pglite;
  if (!pglite) throw new Error('PGlite database without its instance');
  return new PgBoss({ ...runtimeOptions, db: { executeSql: pgliteExecuteSql(pglite) as PgBoss.Db['executeSql'] } });
}

function pgliteExecuteSql(pglite: NonNullable<Database['pglite']>) {
  return async (text: string, values?: any[]): Promise<{ rows: any[] }> => {
    if (values && values.length > 0) {
      const res = await pglite.query(text, values);
      return { rows: res.rows };
    }
    const results = await pglite.exec(text);
    // The rows of the last statement that returns any columns.
    for (let i = results.length - 1; i >= 0; i--) {
      if (results[i].fields.length > 0) return { rows: results[i].rows };
    }
    return { rows: [] };
  };
}

/**
 * Installs or migrates pg-boss's schema as the owner (a pg-boss started only
 * for that, without maintenance or scheduling), makes `create_queue` a
 * SECURITY DEFINER function (a queue is a partition of the owner's job table,
 * which the runtime role may not alter) and grants the runtime role the rows.
 */
async function installJobQueue(db: Database, schema: string): Promise<void> {
  await db.withOwner(async (owner: SqlRunner) => {
    // Several processes starting at once: one after the other (grants race otherwise).
    if (db.kind === 'postgres') await owner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await install(owner);
    } finally {
      if (db.kind === 'postgres') await owner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    }
  });

  async function install(owner: SqlRunner): Promise<void> {
    const installer =
      db.kind === 'postgres'
        ? new PgBoss({ connectionString: db.ownerConnectionString!, schema, max: 1, supervise: false, schedule: false })
        : new PgBoss({ db: { executeSql: pgliteExecuteSql(db.pglite!) as PgBoss.Db['executeSql'] }, schema, supervise: false, schedule: false });
    installer.on('error', () => {});
    await installer.start();
    await installer.stop({ graceful: false, wait: true });
    const s = ident(schema);
    await owner.query(`ALTER FUNCTION ${s}.create_queue(text, json) SECURITY DEFINER SET search_path = pg_catalog, ${s}`);
    await applyRuntimePrivileges(owner, db.runtimeRole, [JOB_QUEUE_SCHEMA]);
  }
}

/**
 * Creates a queue if it is missing and applies its policy (idempotent); every process calls it for
 * the queues it sends to or works. A new queue is a partition of pg-boss's job table with a foreign
 * key to its queue table: processes starting together and adding queues at once can deadlock there,
 * or meet another process's grant script (see isCatalogRace), and the loser is simply tried again.
 */
export function ensureQueue(boss: PgBoss, policy: PgBoss.Queue): Promise<void> {
  // The parts of one process (subgraph, workers) ask for the same queues: each policy is applied once per boss.
  let applied = queuesApplied.get(boss);
  if (!applied) queuesApplied.set(boss, (applied = new Map()));
  const key = JSON.stringify(policy);
  const known = applied.get(key);
  if (known) return known;
  const running = createOrUpdateQueue(boss, policy);
  applied.set(key, running);
  running.catch(() => applied.delete(key));
  return running;
}

const queuesApplied = new WeakMap<PgBoss, Map<string, Promise<void>>>();

async function createOrUpdateQueue(boss: PgBoss, policy: PgBoss.Queue): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await boss.createQueue(policy.name, policy);
      await boss.updateQueue(policy.name, policy);
      return;
    } catch (err) {
      // Exponential backoff with full jitter, capped at 1 s: eight short linear retries were not always
      // enough for three processes adding queues while a fourth ran the grant script in a loop.
      if (attempt >= 16 || !isCatalogRace(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(1_000, 50 * 2 ** attempt)));
    }
  }
}

/** A pg-boss worker that can be stopped: `close` stops fetching, then waits for the jobs in hand. */
export interface QueueWorker {
  id: string;
  close(): Promise<void>;
}

/**
 * `boss.work` whose `close` waits for the handlers already running. pg-boss's own `offWork` only
 * stops fetching, and its `stop` gives up on jobs after its timeout: a handler still running then
 * met a closed database during shutdown. Waiting here lets every job in hand finish or fail first.
 */
export async function workQueue<T extends object>(
  boss: PgBoss,
  queue: string,
  options: PgBoss.WorkOptions,
  handler: (jobs: PgBoss.Job<T>[]) => Promise<void>,
): Promise<QueueWorker> {
  const inFlight = new Set<Promise<void>>();
  const id = await boss.work<T>(queue, options, (jobs) => {
    const running = handler(jobs);
    inFlight.add(running);
    return running.finally(() => inFlight.delete(running));
  });
  return {
    id,
    async close() {
      await boss.offWork({ id });
      await Promise.allSettled([...inFlight]);
    },
  };
}
