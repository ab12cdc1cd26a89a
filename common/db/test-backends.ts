import { randomBytes } from 'node:crypto';
import type PgBoss from 'pg-boss';
import { isPostgresUrl, withClient } from './database';

export interface TestDatabase {
  databaseUrl: string;
  drop(): Promise<void>;
}

/**
 * A fresh, isolated database for one test file: a uniquely named database on
 * the server of `TEST_DATABASE_URL` (dropped by `drop()`), or `memory://`
 * (an in-memory PGlite) when that variable is unset. With `template`, the new
 * database is a copy of that one (CREATE DATABASE … TEMPLATE) instead of empty.
 */
export async function createTestDatabase(options: { template?: string } = {}): Promise<TestDatabase> {
  const admin = process.env.TEST_DATABASE_URL?.trim();
  if (!isPostgresUrl(admin)) return { databaseUrl: 'memory://', drop: async () => {} };

  const name = `caregraph_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE "${name}"${options.template ? ` TEMPLATE "${options.template}"` : ''}`));
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

/**
 * The database backends a db test runs against: always an in-memory PGlite,
 * plus a fresh database on the PostgreSQL server of TEST_DATABASE_URL when set.
 */
export interface Backend {
  name: 'pglite' | 'postgres';
  /** Creates the isolated database (call in beforeAll) and returns its URL. */
  create(): Promise<TestDatabase>;
}

export function testBackends(): Backend[] {
  const backends: Backend[] = [{ name: 'pglite', create: async () => ({ databaseUrl: 'memory://', drop: async () => {} }) }];
  if (process.env.TEST_DATABASE_URL) backends.push({ name: 'postgres', create: () => createTestDatabase() });
  return backends;
}

/**
 * Stops a test's job queue for good. Its pool's idle connections may still end
 * afterwards, when the test drops its database WITH (FORCE) (57P01): pg-boss
 * re-emits that as an 'error' event, which without a listener would fail the
 * test file as an unhandled error.
 */
export async function stopTestBoss(boss: PgBoss): Promise<void> {
  boss.on('error', () => {});
  await boss.stop({ graceful: false, wait: true });
}
