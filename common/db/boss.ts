import PgBoss from 'pg-boss';

import type { Database } from './database';

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
  if (db.kind === 'postgres') {
    if (!db.connectionString) throw new Error('PostgreSQL database without its connection string');
    return new PgBoss({
      ...opts.boss,
      connectionString: db.connectionString,
      schema,
      max: opts.poolSize ?? 4,
      application_name: 'caregraph-pgboss',
    });
  }
  const pglite = db.pglite;
  if (!pglite) throw new Error('PGlite database without its instance');
  const executeSql = async (text: string, values?: any[]): Promise<{ rows: any[] }> => {
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
  return new PgBoss({ ...opts.boss, db: { executeSql: executeSql as PgBoss.Db['executeSql'] }, schema });
}
