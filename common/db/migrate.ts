import pg from 'pg';

import { createPgAdapterFactory, pgliteAdapterFactory, type Database } from './database';
import { NO_FILTER, readMigrations, withSchemaEngine, type Subgraph } from './schema-engine';

export type { Subgraph } from './schema-engine';

/**
 * Applies the committed migrations of `prisma/<subgraph>/migrations/` with
 * Prisma's WebAssembly schema engine (what `prisma migrate deploy` does, without
 * the native engine).
 *
 * Both subgraphs share one database, each in its own PostgreSQL schema, and
 * each keeps its own history: the engine keeps `_prisma_migrations` in the
 * schema its connection reports (getConnectionInfo().schemaName) and creates it
 * unqualified, so the connection used here reports the subgraph's schema AND has
 * that schema first on its search_path. The histories are then
 * `messaging._prisma_migrations` and `ehr._prisma_migrations`.
 *
 * Idempotent (already applied migrations are skipped). On PostgreSQL the work
 * runs under a session advisory lock, so several processes starting at once
 * migrate one after the other; within one process calls are serialised.
 */
export async function migrate(
  db: Database,
  subgraph: Subgraph,
  log: (msg: string) => void = () => {},
): Promise<{ applied: string[] }> {
  if (subgraph !== 'messaging' && subgraph !== 'ehr') throw new Error(`unknown subgraph '${subgraph}'`);
  return serialise(db, () => (db.kind === 'postgres' ? migratePostgres(db, subgraph, log) : migratePGlite(db, subgraph, log)));
}

/** Advisory lock key shared by every CareGraph process (any constant bigint). */
export const MIGRATION_LOCK_KEY = 7_356_114_201;

const queues = new WeakMap<Database, Promise<unknown>>();

function serialise<T>(db: Database, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(db) ?? Promise.resolve();
  const next = previous.then(fn, fn);
  queues.set(
    db,
    next.catch(() => {}),
  );
  return next;
}

async function apply(
  subgraph: Subgraph,
  factory: Parameters<typeof withSchemaEngine>[1],
  log: (msg: string) => void,
): Promise<{ applied: string[] }> {
  const migrationsList = await readMigrations(subgraph);
  if (migrationsList.migrationDirectories.length === 0) {
    throw new Error(
      `no migrations in ${migrationsList.baseDir}: create the first one with \`npm run db:diff -- ${subgraph} init\``,
    );
  }
  const started = Date.now();
  const out = await withSchemaEngine(subgraph, factory, (engine) =>
    engine.applyMigrations({ migrationsList, filters: NO_FILTER }),
  );
  const applied = out.appliedMigrationNames;
  log(
    applied.length
      ? `${subgraph}: applied ${applied.join(', ')} (${Date.now() - started} ms)`
      : `${subgraph}: up to date (${migrationsList.migrationDirectories.length} migrations)`,
  );
  return { applied };
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function migratePGlite(db: Database, subgraph: Subgraph, log: (msg: string) => void) {
  const pglite = db.pglite;
  if (!pglite) throw new Error('PGlite database without its instance');
  // PGlite is one session shared by everything in the process: switch its
  // search_path for the duration of the migration and put it back afterwards.
  const saved = (await pglite.query<{ search_path: string }>('SHOW search_path')).rows[0]?.search_path ?? 'public';
  await pglite.exec(`CREATE SCHEMA IF NOT EXISTS ${ident(subgraph)}; SET search_path TO ${ident(subgraph)}`);
  try {
    return await apply(subgraph, pgliteAdapterFactory(pglite, subgraph), log);
  } finally {
    await pglite.query(`SELECT set_config('search_path', $1, false)`, [saved]);
  }
}

async function migratePostgres(db: Database, subgraph: Subgraph, log: (msg: string) => void) {
  const connectionString = db.connectionString;
  if (!connectionString) throw new Error('PostgreSQL database without its connection string');
  const lock = new pg.Client({ connectionString });
  await lock.connect();
  let pool: pg.Pool | undefined;
  try {
    const waited = Date.now();
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    if (Date.now() - waited > 1000) log(`${subgraph}: waited ${Date.now() - waited} ms for the migration lock`);
    await lock.query(`CREATE SCHEMA IF NOT EXISTS ${ident(subgraph)}`);
    // The engine's own connection: one session whose search_path starts with
    // the subgraph's schema (see above).
    pool = new pg.Pool({ connectionString, max: 1, options: `-c search_path=${subgraph}` });
    pool.on('error', () => {});
    return await apply(subgraph, createPgAdapterFactory(pool, subgraph), log);
  } finally {
    await pool?.end().catch(() => {});
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    await lock.end().catch(() => {});
  }
}

/** Migrates both subgraphs (messaging first, then ehr). */
export async function migrateAll(db: Database, log?: (msg: string) => void): Promise<Record<Subgraph, string[]>> {
  const messaging = await migrate(db, 'messaging', log);
  const ehr = await migrate(db, 'ehr', log);
  return { messaging: messaging.applied, ehr: ehr.applied };
}
