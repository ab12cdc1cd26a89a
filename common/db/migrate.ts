import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import pg from 'pg';

import { projectRoot } from '../paths';
import type { Database } from './database';
import { applyRuntimePrivileges, ident, type SqlRunner } from './roles';

/**
 * Applies the committed migrations `prisma/<subgraph>/migrations/<name>/migration.sql`
 * in name order, as the owner of the tables, and records them in
 * `<subgraph>._prisma_migrations` exactly as `prisma migrate deploy` does (same
 * table, checksum = SHA-256 of the file), so databases migrated by Prisma's
 * engine and by this code are interchangeable and `prisma migrate status`
 * reads them.
 *
 * - Under a session advisory lock, so processes starting at once migrate one
 *   after the other (on PGlite, one session, the lock is trivially granted).
 * - Each migration and its history row commit together in one transaction; a
 *   failing one is rolled back, recorded as rolled back with its error in
 *   `logs`, and stops the start with a MigrationError.
 * - Refuses to start when an applied migration's file changed (checksum) or
 *   when the history holds a failed migration that nobody resolved.
 * - Then grants the runtime role its privileges and row-level security on
 *   every table of the subgraph's schema (common/db/roles.ts), so a new
 *   migration's tables are covered.
 */

export type Subgraph = 'messaging' | 'ehr';
export const SUBGRAPHS: readonly Subgraph[] = ['messaging', 'ehr'];

/** Advisory lock key shared by every CareGraph process (migrations, job-queue installation). */
export const MIGRATION_LOCK_KEY = 7_356_114_201;

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export const migrationsDir = (subgraph: Subgraph) => path.join(projectRoot(), 'prisma', subgraph, 'migrations');

const checksum = (sql: string) => createHash('sha256').update(sql).digest('hex');

/** The committed migrations of one subgraph, oldest first. */
export async function readMigrations(subgraph: Subgraph, dir = migrationsDir(subgraph)): Promise<Migration[]> {
  const names = existsSync(dir) ? (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name) : [];
  const out: Migration[] = [];
  for (const name of names.sort()) {
    const file = path.join(dir, name, 'migration.sql');
    if (!existsSync(file)) continue;
    const sql = await readFile(file, 'utf8');
    out.push({ name, sql, checksum: checksum(sql) });
  }
  return out;
}

/** One owner session, as PostgreSQL and PGlite provide it. */
interface Session extends SqlRunner {
  /** Runs `fn` in a transaction; `exec` takes a multi-statement script. */
  transaction<T>(fn: (tx: SqlRunner & { exec(sql: string): Promise<unknown> }) => Promise<T>): Promise<T>;
}

export interface MigrateOptions {
  /** Where the migration folders are (default prisma/<subgraph>/migrations). */
  dir?: string;
}

/**
 * The migrations each open database has had applied by this process, by subgraph: the all-in-one process starts
 * several parts that each need a subgraph's tables (its subgraph server, the workers), and each asks. Checking the
 * history and re-applying the runtime role's privileges again changes nothing and cost about half a second of
 * every embedded start-up (the repeated runs took about 0.5 s of database time; measured). A failed run is forgotten,
 * so the next part tries again.
 */
const migratedBy = new WeakMap<Database, Map<Subgraph, Promise<{ applied: string[] }>>>();

/** `migrate` at most once per open database and subgraph in this process (what a part calls when it starts); a later call answers none applied. */
export function ensureMigrated(db: Database, subgraph: Subgraph, log?: (msg: string) => void): Promise<{ applied: string[] }> {
  let done = migratedBy.get(db);
  if (!done) migratedBy.set(db, (done = new Map()));
  const known = done.get(subgraph);
  if (known) return known.then(() => ({ applied: [] }));
  const running = migrate(db, subgraph, log);
  done.set(subgraph, running);
  running.catch(() => done.delete(subgraph));
  return running;
}

export async function migrate(
  db: Database,
  subgraph: Subgraph,
  log: (msg: string) => void = () => {},
  opts: MigrateOptions = {},
): Promise<{ applied: string[] }> {
  if (!SUBGRAPHS.includes(subgraph)) throw new Error(`unknown subgraph '${subgraph}'`);
  const dir = opts.dir ?? migrationsDir(subgraph);
  const migrations = await readMigrations(subgraph, dir);
  if (migrations.length === 0) {
    throw new MigrationError(`no migrations in ${dir}: create the first one with \`npm run db:diff -- ${subgraph} init\``);
  }
  return withSession(db, async (session) => {
    const waited = Date.now();
    await session.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    if (Date.now() - waited > 1000) log(`${subgraph}: waited ${Date.now() - waited} ms for the migration lock`);
    try {
      const applied = await applyPending(session, subgraph, dir, migrations, log);
      await applyRuntimePrivileges(session, db.runtimeRole, [subgraph]);
      return { applied };
    } finally {
      await session.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    }
  });
}

/** Migrates both subgraphs (messaging first, then ehr). */
export async function migrateAll(db: Database, log?: (msg: string) => void): Promise<Record<Subgraph, string[]>> {
  const messaging = await migrate(db, 'messaging', log);
  const ehr = await migrate(db, 'ehr', log);
  return { messaging: messaging.applied, ehr: ehr.applied };
}

// Prisma's own definition of the history table (PostgreSQL flavour).
const historyTableSql = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface HistoryRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  started_at: Date;
  logs: string | null;
}

async function applyPending(session: Session, subgraph: Subgraph, dir: string, migrations: Migration[], log: (msg: string) => void): Promise<string[]> {
  const schema = ident(subgraph);
  const table = `${schema}."_prisma_migrations"`;
  await session.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await session.query(historyTableSql(table));
  const history = (
    await session.query<HistoryRow>(
      `SELECT migration_name, checksum, finished_at, started_at, logs FROM ${table} WHERE rolled_back_at IS NULL ORDER BY started_at`,
    )
  ).rows;
  const failed = history.find((r) => r.finished_at === null);
  if (failed) {
    throw new MigrationError(
      `${subgraph}: migration ${failed.migration_name} failed in an earlier run (started ${new Date(failed.started_at).toISOString()}${failed.logs ? `: ${failed.logs}` : ''}). ` +
        `Repair the database by hand, then mark the attempt rolled back (what \`prisma migrate resolve --rolled-back\` does): ` +
        `UPDATE ${table} SET rolled_back_at = now() WHERE migration_name = '${failed.migration_name}' AND finished_at IS NULL`,
    );
  }
  const applied = new Map(history.map((r) => [r.migration_name, r.checksum]));
  for (const m of migrations) {
    const recorded = applied.get(m.name);
    if (recorded !== undefined && recorded !== m.checksum) {
      throw new MigrationError(
        `${subgraph}: migration ${m.name} was applied with checksum ${recorded}, but ${path.relative(process.cwd(), path.join(dir, m.name, 'migration.sql'))} now has ${m.checksum}. ` +
          'A committed migration must not be edited: restore the file and put the change in a new migration (npm run db:diff)',
      );
    }
  }
  const unknown = [...applied.keys()].filter((name) => !migrations.some((m) => m.name === name));
  if (unknown.length) log(`${subgraph}: the database has migrations this version does not know (${unknown.join(', ')}); a newer version migrated it`);

  const done: string[] = [];
  const started = Date.now();
  for (const m of migrations.filter((m) => !applied.has(m.name))) {
    try {
      await session.transaction(async (tx) => {
        // What the migration sees as unqualified names: its subgraph's schema only, as under Prisma's engine.
        await tx.query(`SELECT set_config('search_path', $1, true)`, [schema]);
        await tx.exec(m.sql);
        await tx.query(
          `INSERT INTO ${table} (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
          [randomUUID(), m.checksum, m.name],
        );
      });
    } catch (err) {
      const reason = describe(err, m.sql);
      await session
        .query(`INSERT INTO ${table} (id, checksum, migration_name, logs, rolled_back_at, applied_steps_count) VALUES ($1, $2, $3, $4, now(), 0)`, [
          randomUUID(),
          m.checksum,
          m.name,
          reason,
        ])
        .catch(() => {});
      throw new MigrationError(`${subgraph}: migration ${m.name} failed and was rolled back (nothing of it was applied): ${reason}`, { cause: err });
    }
    done.push(m.name);
  }
  log(done.length ? `${subgraph}: applied ${done.join(', ')} (${Date.now() - started} ms)` : `${subgraph}: up to date (${migrations.length} migrations)`);
  return done;
}

/** The database's error with its line in the migration file. */
function describe(err: unknown, sql: string): string {
  const e = err as { message?: string; position?: string | number; detail?: string; hint?: string };
  const position = Number(e?.position);
  const line = position > 0 ? ` (line ${sql.slice(0, position - 1).split('\n').length})` : '';
  return [`${e?.message ?? String(err)}${line}`, e?.detail, e?.hint].filter(Boolean).join('; ');
}

async function withSession<T>(db: Database, fn: (session: Session) => Promise<T>): Promise<T> {
  if (db.kind === 'pglite') {
    const pglite = db.pglite;
    if (!pglite) throw new Error('PGlite database without its instance');
    // The shared session with its role reset to the owner (withOwner serialises owner work in the process).
    return db.withOwner((owner) =>
      fn({
        query: (text, values) => owner.query(text, values),
        transaction: (body) => pglite.transaction((tx) => body({ query: async (text, values) => tx.query(text, values), exec: (sql) => tx.exec(sql) })),
      }),
    );
  }
  const connectionString = db.ownerConnectionString;
  if (!connectionString) throw new Error('PostgreSQL database without the owner connection string');
  const client = new pg.Client({ connectionString, application_name: 'caregraph-migrate' });
  client.on('error', () => {});
  await client.connect();
  const query = async <R>(text: string, values?: unknown[]) => ({ rows: (await client.query(text, values)).rows as R[] });
  try {
    return await fn({
      query,
      async transaction(body) {
        await client.query('BEGIN');
        try {
          const result = await body({ query, exec: (sql) => client.query(sql) });
          await client.query('COMMIT');
          return result;
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw err;
        }
      },
    });
  } finally {
    await client.end().catch(() => {});
  }
}
