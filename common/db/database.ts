import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type {
  ConnectionInfo,
  SqlDriverAdapter,
  SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';

import { PGliteThread, type PGliteClient } from './pglite-thread';

/**
 * One database per process, shared by both subgraphs (each in its own
 * PostgreSQL schema) and by pg-boss: either a real PostgreSQL server (a pg
 * Pool) or an embedded PGlite (file-backed or in memory).
 */
export type DatabaseKind = 'pglite' | 'postgres';

export interface Database {
  kind: DatabaseKind;
  /** Prisma driver adapter factory bound to one subgraph's PostgreSQL schema ('messaging' | 'ehr'). */
  adapterFactory(schema: string): SqlMigrationAwareDriverAdapterFactory;
  /** Run raw SQL with $1.. parameters (used by pg-boss, health checks, tests). */
  query<T = any>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  /** Run a multi-statement script without parameters. */
  exec(sql: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** PostgreSQL only: the connection string (pg-boss and migrations open their own connections). */
  readonly connectionString?: string;
  /** PGlite only: the embedded instance on its own thread (single connection, serialised by PGlite's own mutexes). */
  readonly pglite?: PGliteClient;
  /** PGlite only: where its files live ('memory://' when in memory). */
  readonly dataDir?: string;
}

export interface OpenDatabaseOptions {
  /** unset: file-backed PGlite in `<dataDir>/pglite`; `memory://`: in-memory PGlite; `postgres(ql)://…`: PostgreSQL. */
  databaseUrl?: string;
  dataDir: string;
  /** PostgreSQL pool size (default 10). */
  poolSize?: number;
}

export function isPostgresUrl(url: string | undefined): url is string {
  return !!url && /^postgres(ql)?:\/\//i.test(url);
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  const url = opts.databaseUrl?.trim() || undefined;
  if (url === undefined) {
    const dir = path.resolve(opts.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    return openPGlite(dir);
  }
  if (url.startsWith('memory://')) return openPGlite('memory://');
  if (isPostgresUrl(url)) return openPostgres(url, opts.poolSize ?? 10);
  throw new Error(
    `DATABASE_URL must be unset (embedded PGlite in DATA_DIR), memory:// or a postgres:// URL (got '${redactUrl(url)}')`,
  );
}

/** Hides the password of a connection string for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}

// ---------------------------------------------------------------------------
// PGlite

async function openPGlite(dataDir: string): Promise<Database> {
  const db = await PGliteThread.open(dataDir);
  let closed = false;
  return {
    kind: 'pglite',
    pglite: db,
    dataDir,
    adapterFactory: (schema) => pgliteAdapterFactory(db, schema),
    async query<T>(text: string, values?: unknown[]) {
      const res = await db.query<T>(text, values as any[] | undefined);
      return { rows: res.rows };
    },
    async exec(sql) {
      await db.exec(sql);
    },
    async ping() {
      await db.query('SELECT 1');
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}

/**
 * A driver adapter factory on a PGlite instance. `schema` is what
 * `getConnectionInfo()` reports (the upstream factory takes no options); the
 * schema engine treats it as the default schema (where `_prisma_migrations`
 * lives, and which it leaves unqualified in diffs). Pass undefined for `public`.
 */
export function pgliteAdapterFactory(db: PGliteClient, schema: string | undefined): SqlMigrationAwareDriverAdapterFactory {
  return new PGliteSchemaAdapterFactory(db, schema);
}

/**
 * pglite-prisma-adapter's factory, fixed where it matters to us:
 * - `getConnectionInfo()` reports the given schema;
 * - `executeScript()` awaits the script and reports its errors (upstream fires
 *   `exec` and forgets it, so a failing migration would go unnoticed);
 * - `connectToShadowDb()` closes the throwaway instance on dispose.
 * Transactions need no help: PGlite runs one transaction at a time behind its
 * own mutex, and every other query waits for it.
 */
class PGliteSchemaAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName: string;
  private readonly inner: InstanceType<typeof PrismaPGlite>;

  constructor(
    private readonly db: PGliteClient,
    private readonly schema: string | undefined,
  ) {
    // The upstream adapter is typed for PGlite itself; it calls only query, exec and transaction.
    this.inner = new PrismaPGlite(db as unknown as PGlite);
    this.adapterName = this.inner.adapterName;
  }

  async connect(): Promise<SqlDriverAdapter> {
    return withSchema(await this.inner.connect(), this.db, this.schema, async () => {});
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const shadow = await PGlite.create();
    const adapter = await new PrismaPGlite(shadow).connect();
    return withSchema(adapter, shadow, this.schema, () => shadow.close());
  }
}

function withSchema(
  adapter: SqlDriverAdapter,
  db: Pick<PGliteClient, 'exec'>,
  schema: string | undefined,
  dispose: () => Promise<void>,
): SqlDriverAdapter {
  // Prototype delegation keeps `this` of the upstream methods pointing at an
  // object that has the upstream fields (client, options).
  const wrapped = Object.create(adapter) as SqlDriverAdapter & { onError(e: unknown): never };
  wrapped.getConnectionInfo = (): ConnectionInfo => ({ schemaName: schema, supportsRelationJoins: true });
  wrapped.executeScript = async (script: string) => {
    try {
      await db.exec(script);
    } catch (e) {
      wrapped.onError(e);
    }
  };
  wrapped.dispose = dispose;
  return wrapped;
}

// ---------------------------------------------------------------------------
// PostgreSQL

async function openPostgres(connectionString: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString, max: poolSize, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the next
  // query gets a fresh one.
  pool.on('error', () => {});
  let closed = false;
  return {
    kind: 'postgres',
    connectionString,
    adapterFactory: (schema) => createPgAdapterFactory(pool, schema),
    async query<T>(text: string, values?: unknown[]) {
      const res = await pool.query(text, values as any[] | undefined);
      return { rows: res.rows as T[] };
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

/**
 * PrismaPg on a shared pool, bound to one schema (reported through
 * getConnectionInfo, which is where the schema engine keeps `_prisma_migrations`).
 * `executeScript` sends the script as one simple-protocol query instead of
 * upstream's split on ';' (which breaks on semicolons inside strings and
 * function bodies).
 */
export function createPgAdapterFactory(pool: pg.Pool, schema: string | undefined): SqlMigrationAwareDriverAdapterFactory {
  const inner = new PrismaPg(pool, schema === undefined ? {} : { schema });
  return {
    provider: 'postgres',
    adapterName: inner.adapterName,
    async connect() {
      const adapter = await inner.connect();
      const wrapped = Object.create(adapter) as SqlDriverAdapter & { onError(e: unknown): never };
      wrapped.executeScript = async (script: string) => {
        try {
          await pool.query(script);
        } catch (e) {
          wrapped.onError(e);
        }
      };
      return wrapped;
    },
    connectToShadowDb: () => inner.connectToShadowDb(),
  };
}

// ---------------------------------------------------------------------------
// Tests

export interface TestDatabase {
  databaseUrl: string;
  drop(): Promise<void>;
}

/**
 * A fresh, isolated database for one test file: a uniquely named database on
 * the server of `TEST_DATABASE_URL` (dropped by `drop()`), or `memory://`
 * (an in-memory PGlite) when that variable is unset.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = process.env.TEST_DATABASE_URL?.trim();
  if (!isPostgresUrl(admin)) return { databaseUrl: 'memory://', drop: async () => {} };

  const name = `caregraph_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    databaseUrl: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withClient(admin, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

async function withClient<T>(connectionString: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
