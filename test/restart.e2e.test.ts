import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestPlatform } from './harness';

// File-backed PGlite whatever the backend of the run: the embedded pass runs it, the PostgreSQL pass need not again.
const embedded = process.env.TEST_DATABASE_URL ? describe.skip : describe;

embedded('embedded database across restarts', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('[OPS-004] keeps its data in DATA_DIR and seeds only once', async () => {
    const env = { DATABASE_URL: '', DATA_DIR: dataDir };
    const first = await startTestPlatform(env);
    try {
      expect(existsSync(join(dataDir, 'pglite'))).toBe(true);
      // A change made while running: one demo template renamed.
      await first.platform.db!.query(`UPDATE messaging."MessageTemplate" SET name = 'Renamed' WHERE "tenantId" = 'demo' AND id = 'appointment-reminder'`);
    } finally {
      await first.stop();
    }

    const second = await startTestPlatform(env);
    try {
      const templates = await second.request('GET', '/v1/templates');
      expect(templates.status).toBe(200);
      expect(templates.body.data).toHaveLength(1);
      expect(templates.body.data[0].name).toBe('Renamed');
      const patients = await second.platform.db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."Patient"`);
      expect(patients.rows[0].n).toBe(4);
    } finally {
      await second.stop();
    }
  });
});
