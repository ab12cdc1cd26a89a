import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../common/db/database';
import { migrate, migrationsDir } from '../common/db/migrate';
import { testBackends, type TestDatabase } from '../common/db/test-backends';
import { parseSettings } from '../subgraphs/messaging/organizations/settings';

const MIGRATIONS = migrationsDir('messaging');
const MOVE = readdirSync(MIGRATIONS).find((name) => name.endsWith('_tenant_settings_and_sealed_exports'))!;

/** The migration that moves per-tenant reminder and retention rows into the organisations' settings, run on a database holding such rows. */
describe.each(testBackends())('tenant settings migration on $name', (backend) => {
  let testDb: TestDatabase;
  let db: Database;
  const before = mkdtempSync(join(tmpdir(), 'caregraph-migrations-'));

  beforeAll(async () => {
    testDb = await backend.create();
    db = await openDatabase({ databaseUrl: testDb.databaseUrl, dataDir: 'unused' });
    // Every messaging migration older than the move.
    for (const name of readdirSync(MIGRATIONS))
      if (name < MOVE || name === 'migration_lock.toml') cpSync(join(MIGRATIONS, name), join(before, name), { recursive: true });
  });
  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
    rmSync(before, { recursive: true, force: true });
  });

  it("moves each tenant's rows into its settings, logs each move, and drops the old tables", async () => {
    await migrate(db, 'messaging', () => {}, { dir: before });
    await db.exec(`
      INSERT INTO messaging."Organization" (id, name, settings, "updatedAt") VALUES
        ('a', 'A', '{"rateLimits":{"EHR":5}}', now()), ('b', 'B', '{}', now()), ('c', 'C', '{}', now());
      INSERT INTO messaging."ReminderSetting" ("tenantId", "leadMinutes", "updatedAt") VALUES ('a', 90, now());
      INSERT INTO messaging."RetentionSetting" ("tenantId", category, days, "updatedAt", "updatedBy") VALUES
        ('a', 'messages', 30, now(), 'admin-a'), ('b', 'messages', 40, now(), 'admin-b'), ('b', 'webhook_deliveries', 7, now(), 'admin-b');`);

    // The move first, then any later migration.
    expect((await migrate(db, 'messaging')).applied[0]).toBe(MOVE);
    const { rows } = await db.query<{ id: string; settings: unknown }>(`SELECT id, settings FROM messaging."Organization" ORDER BY id`);
    expect(rows.map((row) => ({ id: row.id, settings: parseSettings(row.settings) }))).toEqual([
      { id: 'a', settings: { rateLimits: { EHR: 5 }, reminderLeadMinutes: 90, retention: { messages: 30 } } },
      { id: 'b', settings: { rateLimits: {}, retention: { messages: 40, webhook_deliveries: 7 } } },
      { id: 'c', settings: { rateLimits: {}, retention: {} } },
    ]);
    const log = await db.query(`SELECT "organizationId", actor, action, before, after FROM messaging."OrganizationChange" ORDER BY "organizationId"`);
    expect(log.rows).toEqual([
      {
        organizationId: 'a',
        actor: 'system:migration',
        action: 'update',
        before: { settings: { rateLimits: { EHR: 5 } } },
        after: { settings: { rateLimits: { EHR: 5 }, reminderLeadMinutes: 90, retention: { messages: 30 } } },
      },
      {
        organizationId: 'b',
        actor: 'system:migration',
        action: 'update',
        before: { settings: {} },
        after: { settings: { retention: { messages: 40, webhook_deliveries: 7 } } },
      },
    ]);
    const left = await db.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'messaging' AND table_name IN ('ReminderSetting', 'RetentionSetting')`,
    );
    expect(left.rows).toEqual([]);
  });
});
