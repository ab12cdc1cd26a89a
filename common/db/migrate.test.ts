import { PrismaClient as EhrClient } from '../../subgraphs/ehr/db/generated/client';
import { PrismaClient as MessagingClient } from '../../subgraphs/messaging/db/generated/client';
import { tenantClient } from './tenant-session';
import { openDatabase, type Database } from './database';
import { migrate, migrateAll, readMigrations } from './migrate';
import { testBackends, type TestDatabase } from './test-backends';

describe.each(testBackends())('migrate on $name', (backend) => {
  let testDb: TestDatabase;
  let db: Database;
  let searchPathBefore: string;

  beforeAll(async () => {
    testDb = await backend.create();
    db = await openDatabase({ databaseUrl: testDb.databaseUrl, dataDir: 'unused' });
    searchPathBefore = (await db.query<{ search_path: string }>('SHOW search_path')).rows[0].search_path;
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  it('applies both subgraphs, each into its own schema with its own history', async () => {
    const logs: string[] = [];
    const messaging = await migrate(db, 'messaging', (m) => logs.push(m));
    const ehr = await migrate(db, 'ehr', (m) => logs.push(m));

    const expected = async (sg: 'messaging' | 'ehr') => (await readMigrations(sg)).map((m) => m.name);
    expect(messaging.applied).toEqual(await expected('messaging'));
    expect(ehr.applied).toEqual(await expected('ehr'));
    expect(messaging.applied.length).toBeGreaterThan(0);

    const tables = await db.query<{ table_schema: string; table_name: string }>(
      `SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_schema IN ('public', 'messaging', 'ehr') ORDER BY 1, 2`,
    );
    const names = tables.rows.map((r) => `${r.table_schema}.${r.table_name}`);
    // Each subgraph's tables and its own migration history in its own schema,
    // nothing in public (other tables may come with later migrations).
    expect(names).toEqual(
      expect.arrayContaining([
        'ehr.Appointment',
        'ehr.Patient',
        'ehr._prisma_migrations',
        'messaging.CommunicationPreference',
        'messaging.Message',
        'messaging.MessageTemplate',
        'messaging._prisma_migrations',
      ]),
    );
    expect(names.filter((n) => n.startsWith('public.'))).toEqual([]);
    const history = async (schema: string) =>
      (
        await db.query<{ migration_name: string }>(`SELECT migration_name FROM "${schema}"."_prisma_migrations" WHERE finished_at IS NOT NULL ORDER BY 1`)
      ).rows.map((r) => r.migration_name);
    expect(await history('messaging')).toEqual(messaging.applied);
    expect(await history('ehr')).toEqual(ehr.applied);
  });

  it('is a no-op the second time, in either order', async () => {
    expect(await migrate(db, 'ehr')).toEqual({ applied: [] });
    expect(await migrate(db, 'messaging')).toEqual({ applied: [] });
    expect(await migrateAll(db)).toEqual({ messaging: [], ehr: [] });
  });

  it('leaves the search_path of a shared PGlite as it was', async () => {
    const { rows } = await db.query<{ search_path: string }>('SHOW search_path');
    expect(rows[0].search_path).toBe(searchPathBefore);
  });

  it('lets each generated Prisma client write and read its own schema', async () => {
    const messagingBase = new MessagingClient({ adapter: db.adapterFactory('messaging') });
    const ehrBase = new EhrClient({ adapter: db.adapterFactory('ehr') });
    // The runtime role sees the rows of the tenant it sets (row-level security).
    const messaging = tenantClient(messagingBase, 't1');
    const ehr = tenantClient(ehrBase, 't1');
    try {
      await ehr.patient.create({
        data: { tenantId: 't1', id: 'p1', ehrId: 'e1', givenNames: ['Ada', 'M'], family: 'Lovelace', birthDate: '1815-12-10' },
      });
      await messaging.messageTemplate.create({
        data: {
          tenantId: 't1',
          id: 'tpl1',
          name: 'Reminder',
          channel: 'sms',
          body: 'Hi {{name}}',
          variables: [{ name: 'name', type: 'string', required: true }],
        },
      });
      const msg = await messaging.message.create({
        data: { tenantId: 't1', patientId: 'p1', templateId: 'tpl1', channel: 'sms', variables: { name: 'Ada' }, body: 'Hi Ada', status: 'queued' },
      });
      expect(msg.id).toMatch(/^[0-9a-f-]{36}$/);

      const patient = await ehr.patient.findUnique({ where: { tenantId_id: { tenantId: 't1', id: 'p1' } } });
      expect(patient).toMatchObject({ givenNames: ['Ada', 'M'], family: 'Lovelace', deletedAt: null });
      const template = await messaging.messageTemplate.findFirst({ where: { tenantId: 't1' } });
      expect(template?.variables).toEqual([{ name: 'name', type: 'string', required: true }]);
      expect(await messaging.message.count({ where: { tenantId: 't1', patientId: 'p1' } })).toBe(1);

      const raw = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."Patient" WHERE "tenantId" = $1`, ['t1']);
      expect(raw.rows[0].n).toBe(1);
    } finally {
      await messagingBase.$disconnect();
      await ehrBase.$disconnect();
    }
  });
});

if (process.env.TEST_DATABASE_URL) {
  describe('migrate on postgres, several processes at once', () => {
    let testDb: TestDatabase;
    afterAll(async () => {
      await testDb?.drop();
    });

    it('serialises concurrent migrations from separate connections (advisory lock)', async () => {
      const { createTestDatabase } = await import('./test-backends');
      testDb = await createTestDatabase();
      const dbs = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl: testDb.databaseUrl, dataDir: 'unused' })));
      try {
        const results = await Promise.all(dbs.map((d) => migrateAll(d)));
        const messagingApplied = results.flatMap((r) => r.messaging);
        const ehrApplied = results.flatMap((r) => r.ehr);
        // Every migration applied exactly once over all "processes".
        expect(messagingApplied.sort()).toEqual((await readMigrations('messaging')).map((m) => m.name));
        expect(ehrApplied.sort()).toEqual((await readMigrations('ehr')).map((m) => m.name));
      } finally {
        await Promise.all(dbs.map((d) => d.close()));
      }
    });
  });
}
