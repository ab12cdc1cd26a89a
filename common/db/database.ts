import { mkdirSync } from 'node:fs';
import path from 'node:path';

import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';

import { acquireDataDirLock } from './data-dir-lock';
import { statsOf, type PoolStats } from './pool-stats';
import { PGliteThread, type PGliteClient } from './pglite-thread';
import { statementTenant } from './tenant-session';
import { assertLeastPrivilege, DEFAULT_RUNTIME_ROLE, ensureRuntimeRole, ident, type SqlRunner } from './roles';

/**
 * One database per process, shared by both subgraphs (each in its own
 * PostgreSQL schema) and by pg-boss: either a real PostgreSQL server (a pg
 * Pool) or an embedded PGlite (file-backed or in memory).
 *
 * Two roles (docs/security.md, Database roles): the service's queries (Prisma
 * adapters, pg-boss, ping) run as the least-privilege runtime role; migrations,
 * provisioning and the raw `query`/`exec` of maintenance and tests run as the
 * owner of the tables.
 */
type DatabaseKind = 'pglite' | 'postgres';

export interface Database {
  kind: DatabaseKind;
  /** Prisma driver adapter factory bound to one subgraph's PostgreSQL schema ('messaging' | 'ehr'), as the runtime role. */
  adapterFactory(schema: string): SqlDriverAdapterFactory;
  /** Run raw SQL with $1.. parameters as the owner (maintenance, tests); the service's own queries never come here. */
  query<T = any>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  /** Run a multi-statement script without parameters, as the owner. */
  exec(sql: string): Promise<void>;
  /** Runs `fn` in one owner session (migrations, provisioning); PGlite: the shared session with its role reset for the duration. */
  withOwner<T>(fn: (owner: SqlRunner) => Promise<T>): Promise<T>;
  /** A query as the runtime role (readiness). */
  ping(): Promise<void>;
  /** PostgreSQL: the connection pools' sizes (metrics); PGlite has one in-process connection and none. */
  poolStats(): PoolStats[];
  close(): Promise<void>;
  /** The least-privilege role the service's queries run under. */
  readonly runtimeRole: string;
  /** PostgreSQL only: the runtime role's connection string (pg-boss opens its own pool on it). */
  readonly connectionString?: string;
  /** PostgreSQL only: the owner's connection string (migrations open their own connections). */
  readonly ownerConnectionString?: string;
  /** PGlite only: the embedded instance on its own thread (single connection, serialised by PGlite's own mutexes). */
  readonly pglite?: PGliteClient;
  /** PGlite only: where its files live ('memory://' when in memory). */
  readonly dataDir?: string;
  /** PGlite only: its files as a tarball, to open a copy with `loadDataDir`. */
  dumpDataDir?(): Promise<Uint8Array>;
}

export interface OpenDatabaseOptions {
  /** unset: file-backed PGlite in `<dataDir>/pglite`; `memory://`: in-memory PGlite; `postgres(ql)://…`: PostgreSQL. */
  databaseUrl?: string;
  /**
   * PostgreSQL: the owner's connection (migrations, grants). Unset: `databaseUrl`
   * is the owner's (development), and the service runs as the role
   * `caregraph_runtime`, created without a password and reached on the same
   * server with `databaseUrl`'s address.
   */
  ownerUrl?: string;
  dataDir: string;
  /** PostgreSQL pool size (default 10). */
  poolSize?: number;
  /** Told when the DATA_DIR lock of a process that died was taken over. */
  onStaleLock?: (message: string) => void;
  /** `memory://` only: start from a copy of another embedded database (`Database.dumpDataDir()`), e.g. one already migrated. */
  loadDataDir?: Uint8Array;
}

export function isPostgresUrl(url: string | undefined): url is string {
  return !!url && /^postgres(ql)?:\/\//i.test(url);
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  const url = opts.databaseUrl?.trim() || undefined;
  if (url === undefined) {
    const dir = path.resolve(opts.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    // Before PGlite touches the folder: a second process on it would corrupt it (see data-dir-lock.ts).
    const lock = acquireDataDirLock(path.resolve(opts.dataDir, 'pglite.lock'));
    if (lock.takenOver) opts.onStaleLock?.(`took over the lock ${lock.path} left by ${lock.takenOver}, which is no longer running`);
    try {
      return await openPGlite(dir, () => lock.release());
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  if (url.startsWith('memory://')) return openPGlite('memory://', undefined, opts.loadDataDir);
  if (isPostgresUrl(url)) {
    const ownerUrl = opts.ownerUrl?.trim() || undefined;
    if (ownerUrl !== undefined && !isPostgresUrl(ownerUrl)) throw new Error(`DATABASE_OWNER_URL must be a postgres:// URL (got '${redactUrl(ownerUrl)}')`);
    return openPostgres(url, ownerUrl, opts.poolSize ?? 10);
  }
  throw new Error(`DATABASE_URL must be unset (embedded PGlite in DATA_DIR), memory:// or a postgres:// URL (got '${redactUrl(url)}')`);
}

/** Hides the password of a connection string for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}

// ---------------------------------------------------------------------------
// PGlite

/**
 * PGlite has one session, whose login is the superuser `postgres`. The
 * runtime role is a NOLOGIN role the session switches to with SET ROLE, so
 * every query of the service runs with its privileges and under row-level
 * security; owner work resets the role for its duration. This confines
 * mistakes and injected SQL that does not know to undo it, not an attacker
 * who can run `RESET ROLE` in the same session (docs/security.md).
 */
async function openPGlite(dataDir: string, afterClose?: () => void, loadDataDir?: Uint8Array): Promise<Database> {
  const db = await PGliteThread.open(dataDir, loadDataDir);
  const role = DEFAULT_RUNTIME_ROLE;
  const asRuntime = `SET ROLE ${ident(role)}`;
  try {
    await ensureRuntimeRole(db, role, false);
    await db.exec(asRuntime);
  } catch (err) {
    await db.close();
    throw err;
  }
  let ownerQueue: Promise<unknown> = Promise.resolve();
  const withOwner = <T>(fn: (owner: SqlRunner) => Promise<T>): Promise<T> => {
    const run = async () => {
      await db.exec('RESET ROLE');
      try {
        return await fn({ query: async (text, values) => ({ rows: (await db.query(text, values)).rows }) });
      } finally {
        await db.exec(asRuntime);
      }
    };
    const next = ownerQueue.then(run, run);
    ownerQueue = next.catch(() => {});
    return next;
  };
  let closed = false;
  return {
    kind: 'pglite',
    pglite: db,
    dataDir,
    runtimeRole: role,
    // The upstream factory as is: every model names its schema (@@schema), so the
    // connection's default schema does not matter to queries. It calls only
    // query, exec and transaction, which the thread provides.
    adapterFactory: () => new PrismaPGlite(db as unknown as PGlite),
    poolStats: () => [],
    async query<T>(text: string, values?: unknown[]) {
      // SET LOCAL ROLE ends with the transaction, which holds PGlite's mutex: no other query runs as the owner meanwhile.
      return db.transaction(async (tx) => {
        await tx.query('SET LOCAL ROLE NONE');
        return { rows: (await tx.query<T>(text, values)).rows };
      });
    },
    async exec(sql) {
      await withOwner(async () => {
        await db.exec(sql);
      });
    },
    withOwner,
    async ping() {
      await db.query('SELECT 1');
    },
    dumpDataDir: () => db.dumpDataDir(),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.close();
      } finally {
        afterClose?.();
      }
    },
  };
}

// ---------------------------------------------------------------------------
// PostgreSQL

/** `url` with another user and no password (the development runtime role, trust authentication). */
function withUser(url: string, user: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = '';
  return u.toString();
}

async function openPostgres(url: string, ownerUrl: string | undefined, poolSize: number): Promise<Database> {
  const ownerConnectionString = ownerUrl ?? url;
  let connectionString = url;
  if (ownerUrl === undefined) {
    try {
      await withClient(ownerConnectionString, (c) => ensureRuntimeRole(c as unknown as SqlRunner, DEFAULT_RUNTIME_ROLE, true));
    } catch (err) {
      throw new Error(
        `cannot create the runtime role '${DEFAULT_RUNTIME_ROLE}' as the role of DATABASE_URL (${redactUrl(url)}): ${err instanceof Error ? err.message : String(err)}. ` +
          'Without DATABASE_OWNER_URL, DATABASE_URL must be the owner (a role that may create roles); otherwise set DATABASE_URL to the runtime role and DATABASE_OWNER_URL to the owner (docs/security.md, Database roles)',
        { cause: err },
      );
    }
    connectionString = withUser(url, DEFAULT_RUNTIME_ROLE);
  }
  const pool = new TenantBindingPool({ connectionString, max: poolSize, idleTimeoutMillis: 30_000, Client: BoundedConnectClient });
  // An idle client losing its connection must not crash the process; the next
  // query gets a fresh one.
  pool.on('error', () => {});
  let runtimeRole: string;
  try {
    await assertLeastPrivilege(pool);
    runtimeRole = (await pool.query('SELECT current_user AS me')).rows[0].me;
  } catch (err) {
    await pool.end().catch(() => {});
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      ownerUrl === undefined
        ? `cannot run as the runtime role '${DEFAULT_RUNTIME_ROLE}' on ${redactUrl(connectionString)}: ${reason}. ` +
            'Without DATABASE_OWNER_URL the service creates that role without a password, which only a server trusting local logins accepts; ' +
            'otherwise set DATABASE_URL to the runtime role and DATABASE_OWNER_URL to the owner (docs/security.md, Database roles)'
        : `cannot run as the runtime role of DATABASE_URL (${redactUrl(connectionString)}): ${reason}`,
      { cause: err },
    );
  }
  // The owner's pool: maintenance queries and tests only.
  const owner = new pg.Pool({ connectionString: ownerConnectionString, max: 2, idleTimeoutMillis: 10_000, Client: BoundedConnectClient });
  owner.on('error', () => {});
  let closed = false;
  return {
    kind: 'postgres',
    connectionString,
    ownerConnectionString,
    runtimeRole,
    adapterFactory: (schema) => new PrismaPg(pool, { schema }),
    poolStats: () => [statsOf('runtime', pool), statsOf('owner', owner)],
    async query<T>(text: string, values?: unknown[]) {
      const res = await owner.query(text, values as any[] | undefined);
      return { rows: res.rows as T[] };
    },
    async exec(sql) {
      await owner.query(sql);
    },
    withOwner: (fn) => withClient(ownerConnectionString, (c) => fn(c as unknown as SqlRunner)),
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([pool.end(), owner.end()]);
    },
  };
}

const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A server that does not answer (down host, dropped packets) fails a connection
 * attempt after 5 s, so calls answer 503 instead of waiting for the request
 * deadline. The bound is on the client's connection attempt, not on the pool:
 * the pool's `connectionTimeoutMillis` would also bound the wait for a free
 * connection, and a busy pool is load, not an outage.
 */
class BoundedConnectClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super({ ...(typeof config === 'string' ? { connectionString: config } : config), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    // A lost connection is an 'error' event on the client, which the pool hears only while the client is
    // idle: on a checked-out client it was an uncaught exception. The statements in flight are failed by pg
    // itself, and the pool drops the client when it is released (no longer queryable).
    this.on('error', () => {});
  }
}

/**
 * The runtime role's pool. A statement sent outside a transaction while a
 * tenant is bound (statementTenant, tenant-session.ts) runs on one connection
 * as BEGIN with set_config (one round trip), the statement, COMMIT: the
 * transaction Prisma would otherwise open, with one round trip less.
 */
class TenantBindingPool extends pg.Pool {
  override query(...args: unknown[]): any {
    const tenant = statementTenant.getStore();
    // pg's callback form is not used with a tenant (Prisma's adapter awaits promises).
    if (tenant === undefined || typeof args[args.length - 1] === 'function') return (super.query as (...a: unknown[]) => unknown)(...args);
    return this.queryAsTenant(tenant, args);
  }

  private async queryAsTenant(tenant: string, args: unknown[]): Promise<unknown> {
    const client = await this.connect();
    let broken: Error | undefined;
    try {
      await client.query(`BEGIN; SELECT set_config('app.tenant_id', ${client.escapeLiteral(tenant)}, true)`);
      const result = await (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // A connection that cannot even roll back is not given back to the pool.
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      client.release(broken);
    }
  }
}

export async function withClient<T>(connectionString: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  // A lost connection fails the statement in flight; unheard, its 'error' event would end the process.
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
