import { createTestDatabase, type TestDatabase } from './database';

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
  const backends: Backend[] = [
    { name: 'pglite', create: async () => ({ databaseUrl: 'memory://', drop: async () => {} }) },
  ];
  if (process.env.TEST_DATABASE_URL) backends.push({ name: 'postgres', create: () => createTestDatabase() });
  return backends;
}
