import { randomUUID } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from './harness';
import { scrape } from './support/metrics';

/**
 * Identical reads in flight share one execution in the clinical record
 * (common/graphql/shared-reads.ts), and every request still gets its own
 * access log entries, under its own request id and actor.
 */
const PATIENTS = 'query Patients { patients(limit: 5) { data { id name { family } nextAppointment { id } } } }';

let t: TestPlatform;

beforeAll(async () => {
  t = await startTestPlatform();
});

afterAll(async () => {
  await t?.stop();
});

const shared = async () => (await scrape(`${t.url}/metrics`)).total('caregraph_subgraph_shared_reads_total', { subgraph: 'ehr' });

/** The access log rows of each request id, as sorted `actor action entityType entityId` lines. */
async function accessLines(requestIds: string[]): Promise<Map<string, string[]>> {
  const { rows } = await t.platform.db!.query<{ requestId: string; line: string }>(
    `SELECT "requestId", actor || ' ' || action || ' ' || "entityType" || ' ' || "entityId" AS line FROM ehr."AccessLog" WHERE "requestId" = ANY($1::text[])`,
    [requestIds],
  );
  const lines = new Map(requestIds.map((id) => [id, [] as string[]]));
  for (const row of rows) lines.get(row.requestId)!.push(row.line);
  for (const list of lines.values()) list.sort();
  return lines;
}

/** Sends `count` copies of the patients query at once, each under its own request id, with the given tokens in turn. */
async function burst(count: number, tokens: string[]) {
  const requestIds = Array.from({ length: count }, () => `shared-${randomUUID()}`);
  const responses = await Promise.all(
    requestIds.map((id, i) => t.graphql(PATIENTS, undefined, { token: tokens[i % tokens.length], headers: { 'x-request-id': id } })),
  );
  return { requestIds, responses };
}

test('[LOG-001] concurrent identical queries share executions, and each request is logged as having read what it got', async () => {
  const token = await t.token({ sub: 'dr-shared', roles: ['admin'] });
  const before = await shared();
  // Sharing needs the fetches to overlap in time; a few bursts make that certain on any machine.
  let round: Awaited<ReturnType<typeof burst>> | undefined;
  for (let i = 0; i < 20 && (await shared()) === before; i++) round = await burst(12, [token]);
  expect(await shared()).toBeGreaterThan(before);

  const { requestIds, responses } = round!;
  for (const response of responses) {
    expect(response.status).toBe(200);
    expect(response.body).toEqual(responses[0].body);
  }
  const patients = new Set<string>(responses[0].body.data.patients.data.map((p: { id: string }) => p.id));
  expect(patients.size).toBeGreaterThan(0);
  const lines = await accessLines(requestIds);
  for (const id of requestIds) {
    // The same reads for every request of the burst, whether it ran the execution or shared it.
    expect(lines.get(id)).toEqual(lines.get(requestIds[0]));
    expect(
      new Set(
        lines
          .get(id)!
          .filter((l) => l.includes(' Patient '))
          .map((l) => l.split(' ')[3]),
      ),
    ).toEqual(patients);
    expect(lines.get(id)!.every((l) => l.startsWith('dr-shared '))).toBe(true);
  }
});

test('[LOG-001] callers with different identities never share: each request is logged under its own actor', async () => {
  const tokens = [await t.token({ sub: 'dr-a', roles: ['admin'] }), await t.token({ sub: 'dr-b', roles: ['admin'] })];
  const { requestIds, responses } = await burst(10, tokens);
  const lines = await accessLines(requestIds);
  requestIds.forEach((id, i) => {
    expect(responses[i].status).toBe(200);
    expect(lines.get(id)!.length).toBeGreaterThan(0);
    expect(lines.get(id)!.every((l) => l.startsWith(`${i % 2 === 0 ? 'dr-a' : 'dr-b'} `))).toBe(true);
  });
});

test('identical mutations in flight each run: one creates the patient, the others are refused', async () => {
  const token = await t.token({ sub: 'dr-shared', roles: ['admin'] });
  const create = 'mutation { createPatient(input: { id: "p-3901", givenNames: ["Sam"], family: "Shared" }) { id } }';
  const responses = await Promise.all(Array.from({ length: 6 }, () => t.graphql(create, undefined, { token })));
  const created = responses.filter((r) => r.body.data?.createPatient?.id === 'p-3901');
  expect(created).toHaveLength(1);
  for (const refused of responses.filter((r) => !r.body.data?.createPatient)) expect(refused.body.errors[0].extensions.code).toBe('CONFLICT');
});
