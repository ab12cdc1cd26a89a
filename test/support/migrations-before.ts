import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../common/db/database';
import { migrate, migrationsDir } from '../../common/db/migrate';
import type { Backend, TestDatabase } from '../../common/db/test-backends';

/**
 * A fresh database of `backend` migrated up to, not including, the migration whose name ends in `suffix`, for a
 * test that fills it with rows of before that migration and then runs the rest (`migrateRest`). Registers its own
 * beforeAll/afterAll; `db()` is the database once beforeAll ran.
 */
export function databaseBefore(backend: Backend, subgraph: 'messaging' | 'ehr', suffix: string) {
  const all = migrationsDir(subgraph);
  const target = readdirSync(all).find((name) => name.endsWith(suffix));
  if (!target) throw new Error(`no ${subgraph} migration ends in ${suffix}`);
  const before = mkdtempSync(join(tmpdir(), 'caregraph-migrations-'));
  let testDb: TestDatabase | undefined;
  let db: Database | undefined;

  beforeAll(async () => {
    testDb = await backend.create();
    db = await openDatabase({ databaseUrl: testDb.databaseUrl, dataDir: 'unused' });
    for (const name of readdirSync(all)) if (name < target || name === 'migration_lock.toml') cpSync(join(all, name), join(before, name), { recursive: true });
    await migrate(db, subgraph, () => {}, { dir: before });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
    rmSync(before, { recursive: true, force: true });
  });

  return {
    /** The migration the database stops before. */
    target,
    db: () => db!,
    /** Every migration from the target on, as a start applies them. */
    migrateRest: () => migrate(db!, subgraph),
  };
}
