import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../common/config';
import { resolveSecrets } from '../common/secrets';
import { createLogger } from '../common/logger';
import { createEventBus } from '../common/events';
import { createBoss } from '../common/db/boss';
import { openDatabase } from '../common/db/database';
import { stopTestBoss, type TestDatabase } from '../common/db/test-backends';
import { systemClock } from '../common/clock';
import type { Stoppable } from '../common/runtime';
import { AppError } from '../common/errors';
import { startEhrSubgraph } from '../subgraphs/ehr/main';
import { GraphQLClinicalRecord, httpTransport, inProcessTransport, type ClinicalRecord } from '../subgraphs/messaging/clinical-record/client';
import { backendName, seededDatabase } from './harness';
import { createMetricsRegistry } from '../common/metrics/registry';

/**
 * Messaging's boundary to the clinical record answers alike on both
 * transports: in process (all-in-one) and over HTTP (scale-out), the same
 * data, the same absent records and the same error codes, since both run the
 * same operations as the same identity under the clinical record's policy.
 */
describe(`ClinicalRecord transports (${backendName})`, () => {
  const started: Stoppable[] = [];
  let database: TestDatabase;
  let dataDir: string;
  let inProcess: ClinicalRecord;
  let overHttp: ClinicalRecord;

  beforeAll(async () => {
    // The run's migrated and seeded database: this file is about the clinical record's client, not a first start.
    const seeded = await seededDatabase();
    database = seeded;
    dataDir = mkdtempSync(join(tmpdir(), 'caregraph-clinical-'));
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, DATABASE_URL: database.databaseUrl, HOST: '127.0.0.1', ...seeded.secrets });
    const secrets = resolveSecrets(config);
    const logger = createLogger('silent');
    const events = await createEventBus(config, secrets, logger);
    started.push({ name: 'events', close: () => events.close() });
    const db = await openDatabase({ databaseUrl: database.databaseUrl, dataDir, loadDataDir: seeded.loadDataDir });
    started.push({ name: 'db', close: () => db.close() });
    const boss = await createBoss(db);
    await boss.start();
    started.push({ name: 'boss', close: () => stopTestBoss(boss) });
    const ehr = await startEhrSubgraph({
      config,
      secrets,
      logger,
      events,
      metrics: createMetricsRegistry(),
      clock: systemClock,
      db,
      boss,
      host: '127.0.0.1',
      port: 0,
    });
    started.push({ name: 'ehr', close: () => ehr.close() });
    inProcess = new GraphQLClinicalRecord(inProcessTransport(ehr));
    overHttp = new GraphQLClinicalRecord(httpTransport(ehr.url, secrets.internalKey));
  });

  afterAll(async () => {
    for (const part of started.reverse()) await part.close().catch(() => {});
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const both = async <T>(call: (clinical: ClinicalRecord) => Promise<T>): Promise<[T, T]> => [await call(inProcess), await call(overHttp)];
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => 'no error',
      (err: unknown) => (err instanceof AppError ? `${err.code}: ${err.message}` : String(err)),
    );

  it('reads the same patients (contact, messaging consent), leaving out absent ones and other tenants', async () => {
    const [local, remote] = await both((c) => c.patients('demo', ['p-1001', 'p-1002', 'p-1003', 'nobody']));
    expect([...local.keys()].sort()).toEqual(['p-1001', 'p-1002', 'p-1003']);
    expect(local.get('p-1001')).toMatchObject({ contact: { phone: '+31612345671', email: 'anna.devries@example.org' } });
    expect(local).toEqual(remote);
    const [otherTenant, otherTenantHttp] = await both((c) => c.patients('acme', ['p-1001']));
    expect(otherTenant.size).toBe(0);
    expect(otherTenantHttp.size).toBe(0);
  });

  it('reads the same appointment, and null for an absent one', async () => {
    const [local, remote] = await both((c) => c.appointment('demo', 'appt-1001'));
    expect(local).toMatchObject({ id: 'appt-1001', patientId: 'p-1001', location: 'Clinic Amstel, room 2' });
    expect(local).toEqual(remote);
    expect(await both((c) => c.appointment('demo', 'appt-none'))).toEqual([null, null]);
  });

  it("passes the clinical record's own error codes through alike", async () => {
    const local = await failure(inProcess.updateAppointmentStatus('demo', 'appt-none', 'confirmed', 'key-1'));
    const remote = await failure(overHttp.updateAppointmentStatus('demo', 'appt-none', 'confirmed', 'key-2'));
    expect(local).toMatch(/^NOT_FOUND: /);
    expect(remote).toBe(local);
  });
});
