import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../common/db/test-backends';
import { issueAccessToken } from '../common/auth/tokens';
import { startPlatform, type Platform } from '../bin/platform';
import { scaleOutEnv } from './harness';

const scaleOut = process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL ? describe : describe.skip;

scaleOut('scale-out roles (PostgreSQL + Redis)', () => {
  let database: TestDatabase;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-scale-'));
  const started: Platform[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const platform of started.reverse()) await platform.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves one federated query from three separate roles', async () => {
    const env = scaleOutEnv(dataDir, database.databaseUrl);
    // Two instances of each subgraph role start at once against one database: migrations and seed must serialise.
    const subgraphs = await Promise.all([startPlatform('ehr', env), startPlatform('messaging', env), startPlatform('ehr', env)]);
    started.push(...subgraphs);
    const gateway = await startPlatform('gateway', {
      ...env,
      EHR_URL: subgraphs[0].subgraphUrls.ehr,
      MESSAGING_URL: subgraphs[1].subgraphUrls.messaging,
    });
    started.push(gateway);

    const token = await issueAccessToken(gateway.runtime.secrets.jwtSecret!, { sub: 't', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 });
    const response = await fetch(`${gateway.gateway!.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ patient(id: "p-1001") { id name { family } preferences { channels { sms } } } }' }),
    });
    const body = (await response.json()) as any;
    expect(body).toEqual({ data: { patient: { id: 'p-1001', name: { family: 'de Vries' }, preferences: { channels: { sms: true } } } } });
    const seeded = await subgraphs[0].db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM ehr."Patient"`);
    expect(seeded.rows[0].n).toBe(4);
  });
});

describe('scale-out roles without shared services', () => {
  it('refuse to start without PostgreSQL and Redis', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-refuse-'));
    try {
      await expect(startPlatform('messaging', { DATA_DIR: dataDir, LOG_LEVEL: 'silent' })).rejects.toThrow(/DATABASE_URL=postgres/);
      await expect(startPlatform('gateway', { DATA_DIR: dataDir, LOG_LEVEL: 'silent' })).rejects.toThrow(/REDIS_URL=redis/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
