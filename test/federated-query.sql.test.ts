import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { loadConfig } from '../common/config';
import { resolveSecrets } from '../common/secrets';
import { createLogger } from '../common/logger';
import { createEventBus } from '../common/events';
import { createBoss } from '../common/db/boss';
import { openDatabase, type Database } from '../common/db/database';
import { stopTestBoss, type TestDatabase } from '../common/db/test-backends';
import { systemClock } from '../common/clock';
import { issueAccessToken } from '../common/auth/tokens';
import type { Stoppable } from '../common/runtime';
import { startEhrSubgraph } from '../subgraphs/ehr/main';
import { startMessagingSubgraph } from '../subgraphs/messaging/main';
import { GraphQLClinicalRecord, inProcessTransport } from '../subgraphs/messaging/clinical-record/client';
import { tenantClient } from '../common/db/tenant-session';
import { createEhrPrisma } from '../subgraphs/ehr/db/client';
import { startGateway } from '../gateway/server';
import { backendName, seededDatabase } from './harness';
import { createMetricsRegistry } from '../common/metrics/registry';
import { FieldCipher } from '../common/crypto';

/**
 * No N+1 on the federated path: the SQL statements the subgraphs send for
 * "messages with their patients' names and next appointment" must not grow
 * with the number of messages. The database is wrapped so every statement the
 * Prisma clients send is counted.
 */

interface Counter {
  statements: string[];
}

/** Counts queryRaw/executeRaw calls on an adapter and on every transaction it starts. */
function counting<T extends object>(target: T, counter: Counter): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      if (property === 'queryRaw' || property === 'executeRaw') {
        return (query: { sql: string }, ...rest: unknown[]) => {
          counter.statements.push(query.sql);
          return value.call(object, query, ...rest);
        };
      }
      if (property === 'startTransaction') return async (...args: unknown[]) => counting(await value.apply(object, args), counter);
      return value.bind(object);
    },
  });
}

function countingDatabase(db: Database, counter: Counter): Database {
  return {
    ...db,
    adapterFactory: (schema) => {
      const factory = db.adapterFactory(schema);
      return counting<SqlMigrationAwareDriverAdapterFactory>(
        Object.assign(Object.create(factory), {
          connect: async () => counting<SqlDriverAdapter>(await factory.connect(), counter),
        }),
        counter,
      );
    },
    query: (text, values) => db.query(text, values),
    exec: (sql) => db.exec(sql),
    ping: () => db.ping(),
    poolStats: () => db.poolStats(),
    close: () => db.close(),
  };
}

const QUERY = `query($limit: Int) { messages(limit: $limit) { data { id statusHistory { status } patient { id name { given family } nextAppointment { id start } } } } }`;

describe(`federated query SQL (${backendName})`, () => {
  const counter: Counter = { statements: [] };
  const started: Stoppable[] = [];
  let database: TestDatabase;
  let dataDir: string;
  let gatewayUrl: string;
  let token: string;

  beforeAll(async () => {
    // The run's migrated and seeded database: what is counted is the queries of one request, not a first start.
    const seeded = await seededDatabase();
    database = seeded;
    dataDir = mkdtempSync(join(tmpdir(), 'caregraph-sql-'));
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, DATABASE_URL: database.databaseUrl, HOST: '127.0.0.1', ...seeded.secrets });
    const secrets = resolveSecrets(config);
    const logger = createLogger('silent');
    const events = await createEventBus(config, secrets, logger);
    started.push({ name: 'events', close: () => events.close() });
    const raw = await openDatabase({ databaseUrl: database.databaseUrl, dataDir, loadDataDir: seeded.loadDataDir });
    started.push({ name: 'db', close: () => raw.close() });
    const db = countingDatabase(raw, counter);
    const boss = await createBoss(db);
    await boss.start();
    started.push({ name: 'boss', close: () => stopTestBoss(boss) });
    const runtime = { config, secrets, logger, events, metrics: createMetricsRegistry(), clock: systemClock };
    const ehr = await startEhrSubgraph({ ...runtime, db, boss, host: '127.0.0.1', port: 0 });
    started.push(ehr as Stoppable & typeof ehr);
    const messaging = await startMessagingSubgraph({
      ...runtime,
      db,
      boss,
      host: '127.0.0.1',
      port: 0,
      clinical: new GraphQLClinicalRecord(inProcessTransport(ehr)),
    });
    started.push(messaging as Stoppable & typeof messaging);
    const gateway = await startGateway({
      ...runtime,
      host: '127.0.0.1',
      port: 0,
      subgraphUrls: { ehr: ehr.url, messaging: messaging.url },
      localSubgraphs: { ehr, messaging },
    });
    started.push(gateway as Stoppable & typeof gateway);
    gatewayUrl = gateway.url;
    token = await issueAccessToken(secrets.jwtSecret!, { sub: 'sql-test', tenants: ['demo'], roles: ['admin'], ttlSeconds: 600 });

    // 20 patients, each with an upcoming appointment and one message.
    const ids = Array.from({ length: 20 }, (_, i) => `sql-p-${i}`);
    for (const id of ids) {
      const created = await graphql(
        `
          mutation ($input: PatientCreateInput!) {
            createPatient(input: $input) {
              id
            }
          }
        `,
        {
          input: { id, givenNames: ['Sql'], family: `Patient ${id}`, phone: `+3161234${String(5000 + Number(id.slice(6)))}` },
        },
      );
      expect(created.errors).toBeUndefined();
    }
    const ehrBase = createEhrPrisma(raw);
    const ehrPrisma = tenantClient(ehrBase, 'demo');
    const start = Date.now() + 86_400_000;
    await ehrPrisma.appointment.createMany({
      data: ids.flatMap((patientId, i) =>
        [0, 1].map((k) => ({
          tenantId: 'demo',
          id: `sql-a-${i}-${k}`,
          patientId,
          start: new Date(start + (i + k) * 3_600_000),
          end: new Date(start + (i + k + 1) * 3_600_000),
          status: 'booked',
        })),
      ),
    });
    await ehrBase.$disconnect();
    const sent = await graphql(
      `
        mutation ($messages: [SendMessageInput!]!) {
          sendMessages(messages: $messages) {
            accepted
          }
        }
      `,
      {
        messages: ids.map((patientId) => ({ patientId, templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2027-01-15', time: '09:30' } })),
      },
    );
    expect(sent.data.sendMessages.accepted).toBe(20);
  });

  afterAll(async () => {
    for (const part of started.reverse()) await part.close().catch(() => {});
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function graphql(query: string, variables: Record<string, unknown>): Promise<any> {
    const response = await fetch(`${gatewayUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return response.json();
  }

  async function statementsFor(limit: number): Promise<{ count: number; body: any }> {
    counter.statements.length = 0;
    const body = await graphql(QUERY, { limit });
    return { count: counter.statements.length, body };
  }

  it('answers 20 messages with patient names and next appointments', async () => {
    const { body } = await statementsFor(20);
    expect(body.errors).toBeUndefined();
    const data = body.data.messages.data;
    expect(data).toHaveLength(20);
    expect(new Set(data.map((m: any) => m.patient.id)).size).toBe(20);
    for (const message of data) {
      expect(message.patient.name.given).toEqual(['Sql']);
      expect(message.patient.nextAppointment.id).toBe(`sql-a-${message.patient.id.slice(6)}-0`);
      expect(message.statusHistory.map((s: any) => s.status)).toEqual(['queued']);
    }
  });

  it('sends as many SQL statements for 20 messages as for 2', async () => {
    const two = await statementsFor(2);
    const twenty = await statementsFor(20);
    expect(twenty.body.data.messages.data).toHaveLength(20);
    expect(two.body.data.messages.data).toHaveLength(2);
    expect(two.count).toBeGreaterThan(0);
    expect(twenty.count).toBe(two.count);
  });

  it('counts the messages only when the query asks for pagination', async () => {
    const counts = () => counter.statements.filter((sql) => /COUNT\(/i.test(sql)).length;
    await statementsFor(20);
    expect(counts()).toBe(0);
    counter.statements.length = 0;
    const body = await graphql(
      `
        query {
          messages(limit: 5) {
            data {
              id
            }
            pagination {
              total
            }
          }
        }
      `,
      {},
    );
    expect(body.data.messages.pagination.total).toBe(20);
    expect(counts()).toBe(1);
  });

  it('decrypts nothing the query does not ask for (message content, contact details)', async () => {
    const decrypt = jest.spyOn(FieldCipher.prototype, 'decrypt');
    try {
      const { body } = await statementsFor(20);
      expect(body.data.messages.data).toHaveLength(20);
      expect(decrypt).not.toHaveBeenCalled();
      const withBody = await graphql('query { messages(limit: 20) { data { body patient { contact { phone } } } } }', {});
      expect(withBody.errors).toBeUndefined();
      // Asked for, they are decrypted: at least each message's body and each patient's phone.
      expect(decrypt.mock.calls.length).toBeGreaterThanOrEqual(20 + 20);
    } finally {
      decrypt.mockRestore();
    }
  });
});
