import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { projectRoot } from '../paths';
import { openDatabase, type Database } from './database';
import type { TestDatabase } from './test-backends';
import { migrate, MigrationError, migrationsDir, readMigrations } from './migrate';
import { testBackends } from './test-backends';

// The history rows Prisma's schema engine wrote for the first messaging
// migrations (captured from a database it migrated): the checksum is Prisma's,
// computed by Prisma, so a different hash here would refuse such databases.
const PRISMA_WROTE = [
  { migration_name: '20261122044042_init', checksum: 'cf64990aa286b07e87f1bbb75057a0fbf86c12a6341839c61f3097d59fac4a08' },
  { migration_name: '20261122044908_webhooks', checksum: 'ef685a16acad6adc860f1c7daaa88e5df67d3fff7987eb0d37d28e7da15e1c38' },
];

// Prisma's history table, as its engine creates it.
const PRISMA_HISTORY_TABLE = `CREATE TABLE "messaging"."_prisma_migrations" (
    "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
    "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
    "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`;

interface Row {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  logs: string | null;
  applied_steps_count: number;
}

describe.each(testBackends())('migration history on $name', (backend) => {
  let testDb: TestDatabase;
  let db: Database;
  let dir: string;

  beforeAll(async () => {
    testDb = await backend.create();
    db = await openDatabase({ databaseUrl: testDb.databaseUrl, dataDir: 'unused' });
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  beforeEach(async () => {
    await db.exec('DROP SCHEMA IF EXISTS messaging CASCADE');
    // A copy of the messaging migrations this test may extend or edit.
    dir = mkdtempSync(path.join(tmpdir(), 'caregraph-migrations-'));
    cpSync(migrationsDir('messaging'), dir, { recursive: true });
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const history = async () => (await db.query<Row>(`SELECT * FROM messaging._prisma_migrations ORDER BY started_at, migration_name`)).rows;
  const tableExists = async (name: string) =>
    (await db.query(`SELECT 1 FROM information_schema.tables WHERE table_schema = 'messaging' AND table_name = $1`, [name])).rows.length > 0;
  const addMigration = (name: string, sql: string) => {
    mkdirSync(path.join(dir, name), { recursive: true });
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  };

  it('continues a database migrated by Prisma’s engine: its rows are accepted and only the rest is applied', async () => {
    const all = await readMigrations('messaging');
    // What the engine left: the first migrations' SQL applied and its rows.
    await db.exec(`CREATE SCHEMA IF NOT EXISTS messaging; ${PRISMA_HISTORY_TABLE}`);
    for (const row of PRISMA_WROTE) {
      await db.exec(`SET search_path TO messaging; ${all.find((m) => m.name === row.migration_name)!.sql}; RESET search_path`);
      await db.query(
        `INSERT INTO messaging._prisma_migrations (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), now(), 1)`,
        [randomUUID(), row.checksum, row.migration_name],
      );
    }

    const { applied } = await migrate(db, 'messaging');

    expect(applied).toEqual(all.slice(PRISMA_WROTE.length).map((m) => m.name));
    const rows = await history();
    expect(rows.map((r) => r.migration_name).sort()).toEqual(all.map((m) => m.name));
    expect(rows.every((r) => r.finished_at !== null && r.rolled_back_at === null && r.applied_steps_count === 1)).toBe(true);
    // Our rows carry the same checksum Prisma would write.
    for (const m of all) expect(rows.find((r) => r.migration_name === m.name)!.checksum).toBe(m.checksum);
    expect(await migrate(db, 'messaging')).toEqual({ applied: [] });
  });

  it('refuses to start when an applied migration’s file was edited, and changes nothing', async () => {
    await migrate(db, 'messaging', undefined, { dir });
    const before = await history();
    const [first] = await readMigrations('messaging', dir);
    writeFileSync(path.join(dir, first.name, 'migration.sql'), `${first.sql}\nCREATE TABLE messaging."Sneaked" (id int);\n`);
    addMigration('99990101000000_later', 'CREATE TABLE messaging."Later" (id int);');

    const err = await migrate(db, 'messaging', undefined, { dir }).catch((e) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect(err.message).toContain(`migration ${first.name} was applied with checksum ${first.checksum}`);
    expect(err.message).toContain('must not be edited');
    expect(await history()).toEqual(before);
    expect(await tableExists('Later')).toBe(false);
  });

  it('rolls a failing migration back whole, reports it with its line, and applies the fixed file later', async () => {
    await migrate(db, 'messaging', undefined, { dir });
    addMigration('99990101000000_broken', 'CREATE TABLE messaging."Half" (id int);\n\nSELECT "missing" FROM messaging."Half";\n');
    addMigration('99990102000000_after', 'CREATE TABLE messaging."After" (id int);');

    const err = await migrate(db, 'messaging', undefined, { dir }).catch((e) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect(err.message).toBe(
      'messaging: migration 99990101000000_broken failed and was rolled back (nothing of it was applied): column "missing" does not exist (line 3)',
    );
    expect(await tableExists('Half')).toBe(false);
    expect(await tableExists('After')).toBe(false);
    const attempt = (await history()).find((r) => r.migration_name === '99990101000000_broken')!;
    expect(attempt).toMatchObject({ finished_at: null, applied_steps_count: 0, logs: 'column "missing" does not exist (line 3)' });
    expect(attempt.rolled_back_at).not.toBeNull();

    addMigration('99990101000000_broken', 'CREATE TABLE messaging."Half" (id int);\n');
    expect(await migrate(db, 'messaging', undefined, { dir })).toEqual({ applied: ['99990101000000_broken', '99990102000000_after'] });
    expect(await tableExists('Half')).toBe(true);
  });

  it('refuses to start while the history holds a failed migration nobody resolved', async () => {
    await migrate(db, 'messaging', undefined, { dir });
    // What Prisma leaves when a migration fails half-way: a row never finished nor rolled back.
    await db.query(
      `INSERT INTO messaging._prisma_migrations (id, checksum, migration_name, logs, started_at, applied_steps_count) VALUES ($1, 'x', '99990101000000_half', 'Database error: relation exists', now(), 0)`,
      [randomUUID()],
    );
    addMigration('99990102000000_after', 'CREATE TABLE messaging."After" (id int);');

    const err = await migrate(db, 'messaging', undefined, { dir }).catch((e) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect(err.message).toContain('migration 99990101000000_half failed in an earlier run');
    expect(err.message).toContain('Database error: relation exists');
    expect(err.message).toContain(`SET rolled_back_at = now() WHERE migration_name = '99990101000000_half'`);
    expect(await tableExists('After')).toBe(false);

    // Resolved as the message says: the start goes on.
    await db.query(`UPDATE messaging._prisma_migrations SET rolled_back_at = now() WHERE migration_name = '99990101000000_half' AND finished_at IS NULL`);
    expect(await migrate(db, 'messaging', undefined, { dir })).toEqual({ applied: ['99990102000000_after'] });
  });
});

if (process.env.TEST_DATABASE_URL) {
  describe('migrate on postgres, separate processes at once', () => {
    let testDb: TestDatabase;
    afterAll(async () => {
      await testDb?.drop();
    });

    const runMigrateProcess = (databaseUrl: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(projectRoot(), 'test/support/run-ts.js'), path.join(projectRoot(), 'test/support/migrate-child.ts')], {
          env: { ...process.env, DATABASE_URL: databaseUrl, DATABASE_OWNER_URL: '', NODE_OPTIONS: '' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('exit', (code) => resolve({ code, out }));
      });

    it('applies every migration exactly once when two processes race', async () => {
      const { createTestDatabase } = await import('./test-backends');
      testDb = await createTestDatabase();
      const results = await Promise.all([runMigrateProcess(testDb.databaseUrl), runMigrateProcess(testDb.databaseUrl)]);
      for (const r of results) expect(r).toMatchObject({ code: 0 });

      const db = await openDatabase({ databaseUrl: testDb.databaseUrl, dataDir: 'unused' });
      try {
        for (const subgraph of ['messaging', 'ehr'] as const) {
          const names = (await readMigrations(subgraph)).map((m) => m.name);
          // One process applied each migration; the other found it done.
          const applied = results.flatMap((r) => r.out.match(new RegExp(`^${subgraph}: applied \\d+ migration\\(s\\): (.*)$`, 'm'))?.[1].split(', ') ?? []);
          expect(applied.sort()).toEqual(names);
          const rows = (await db.query<{ migration_name: string }>(`SELECT migration_name FROM ${subgraph}._prisma_migrations ORDER BY 1`)).rows;
          expect(rows.map((r) => r.migration_name)).toEqual(names);
        }
      } finally {
        await db.close();
      }
    });
  });
}
