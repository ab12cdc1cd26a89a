import { testBackends } from '../common/db/test-backends';
import { parseSettings } from '../subgraphs/messaging/organizations/settings';
import { databaseBefore } from './support/migrations-before';

/** The migration that moves per-tenant reminder and retention rows into the organisations' settings, run on a database holding such rows. */
describe.each(testBackends())('tenant settings migration on $name', (backend) => {
  // Every messaging migration older than the move.
  const before = databaseBefore(backend, 'messaging', '_tenant_settings_and_sealed_exports');

  it("moves each tenant's rows into its settings, logs each move, and drops the old tables", async () => {
    const db = before.db();
    await db.exec(`
      INSERT INTO messaging."Organization" (id, name, settings, "updatedAt") VALUES
        ('a', 'A', '{"rateLimits":{"EHR":5}}', now()), ('b', 'B', '{}', now()), ('c', 'C', '{}', now());
      INSERT INTO messaging."ReminderSetting" ("tenantId", "leadMinutes", "updatedAt") VALUES ('a', 90, now());
      INSERT INTO messaging."RetentionSetting" ("tenantId", category, days, "updatedAt", "updatedBy") VALUES
        ('a', 'messages', 30, now(), 'admin-a'), ('b', 'messages', 40, now(), 'admin-b'), ('b', 'webhook_deliveries', 7, now(), 'admin-b');`);

    // The move first, then any later migration.
    expect((await before.migrateRest()).applied[0]).toBe(before.target);
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
