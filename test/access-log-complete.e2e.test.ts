import { validateFhir } from './fhir-support';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { VITALS } from './ehr-fixtures';
import { callTool, connectMcp, structured } from './mcp.helpers';

/**
 * NEN 7513 (docs/security.md, "Access log"): every clinical read path writes entries that name the actor, the
 * responsible user, the patient, the action, the data category, the time, the purpose of use, the grounds the
 * policy point granted the read on, and the client. Each path is walked once, by a subject of its own, and the
 * patient's log is read back as an admin over REST (and one entry as a FHIR AuditEvent).
 */
describe(`every clinical read path writes a complete access-log entry (${backendName})`, () => {
  let t: TestPlatform;
  let uid: string;
  const tenant = { 'x-tenant-id': 'demo' };
  const AGENT = 'claude-desktop';

  interface Path {
    name: string;
    roles: string[];
    /** The grounds the policy point gives this caller's reads (of one data category). */
    grounds: string | ((category: string) => string);
    purpose: string;
    patientId?: string;
    clientId?: string;
    /** The data category every entry of the path names, where it is one. */
    category?: string;
    read: (token: string) => Promise<unknown>;
  }

  const ok = async (res: Promise<{ status: number; body: any }>) => {
    const answer = await res;
    expect(answer.status).toBeLessThan(300);
    return answer.body;
  };
  const gql = async (token: string, query: string) => {
    const res = await t.graphql(query, {}, { token });
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };

  const staff = { roles: ['clinician'], grounds: 'treatment', purpose: 'TREAT' };
  const PATHS: Path[] = [
    {
      name: 'demographics-rest',
      ...staff,
      category: 'demographics',
      read: (token) => ok(t.request('GET', '/api/ehr/patients/p-1001', { token, headers: tenant })),
    },
    { name: 'patient-list-graphql', ...staff, read: (token) => gql(token, '{ patients(limit: 100) { data { id } } }') },
    {
      name: 'compositions-graphql',
      ...staff,
      read: (token) => gql(token, '{ compositions(filter: { patientId: "p-1001" }) { data { uid } } }'),
    },
    {
      name: 'composition-rest',
      ...staff,
      category: 'observation',
      read: (token) => ok(t.request('GET', `/api/ehr/compositions/${uid}`, { token, headers: tenant })),
    },
    { name: 'patient-compositions-rest', ...staff, read: (token) => ok(t.request('GET', '/api/ehr/patients/p-1001/compositions', { token, headers: tenant })) },
    { name: 'history-graphql', ...staff, read: (token) => gql(token, `{ compositionHistory(id: "${uid}") { version } }`) },
    { name: 'ehr-status-openehr', ...staff, read: (token) => ok(t.request('GET', '/openehr/v1/ehr/ehr-p-1001/ehr_status', { token })) },
    { name: 'ehr-openehr', ...staff, read: (token) => ok(t.request('GET', '/openehr/v1/ehr/ehr-p-1001', { token })) },
    { name: 'composition-openehr', ...staff, read: (token) => ok(t.request('GET', `/openehr/v1/ehr/ehr-p-1001/composition/${uid}`, { token })) },
    {
      name: 'aql',
      ...staff,
      read: (token) =>
        ok(t.request('POST', '/openehr/v1/query/aql', { token, body: { q: "SELECT c FROM EHR e[ehr_id/value='ehr-p-1001'] CONTAINS COMPOSITION c" } })),
    },
    { name: 'fhir-read', ...staff, read: (token) => ok(t.request('GET', '/fhir/R4/Patient/p-1001', { token })) },
    { name: 'fhir-search', ...staff, read: (token) => ok(t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token })) },
    { name: 'fhir-everything', ...staff, read: (token) => ok(t.request('GET', '/fhir/R4/Patient/p-1001/$everything', { token })) },
    { name: 'cda-export', ...staff, read: (token) => ok(t.request('GET', '/api/ehr/patients/p-1001/cda', { token })) },
    {
      name: 'clinical-context',
      ...staff,
      read: (token) => gql(token, '{ clinicalContext(patientId: "p-1001", purpose: TREATMENT, sections: [VITALS]) { vitals { effective } } }'),
    },
    {
      name: 'integration-fhir',
      roles: ['integration'],
      grounds: 'consent:data_sharing',
      purpose: 'TREAT',
      read: (token) => ok(t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token })),
    },
    {
      name: 'patient-own-record',
      roles: ['patient'],
      patientId: 'p-1001',
      grounds: 'own-record',
      purpose: 'PATRQT',
      read: (token) => ok(t.request('GET', `/openehr/v1/ehr/ehr-p-1001/composition/${uid}`, { token })),
    },
    {
      name: 'ai-client-fhir',
      roles: ['clinician'],
      clientId: AGENT,
      grounds: 'consent:ai_assistance',
      purpose: 'TREAT',
      read: (token) => ok(t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token })),
    },
    {
      name: 'mcp-tool',
      roles: ['clinician'],
      clientId: AGENT,
      // The agent reads demographics on its role's grant; clinical data only with the patient's consent.
      grounds: (category) => (category === 'demographics' ? 'treatment' : 'consent:ai_assistance'),
      purpose: 'TREAT',
      read: async (token) => {
        const client = await connectMcp(t, token);
        try {
          return structured(await callTool(client, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment' }));
        } finally {
          await client.close();
        }
      },
    },
  ];

  beforeAll(async () => {
    t = await startTestPlatform();
    const created = await t.request('POST', '/api/ehr/compositions', {
      body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS },
      headers: tenant,
    });
    expect(created.status).toBe(201);
    uid = created.body.uid;
    for (const purpose of ['DATA_SHARING', 'AI_ASSISTANCE'])
      expect((await t.graphql(`mutation { grantConsent(patientId: "p-1001", purpose: ${purpose}) { granted } }`)).body.errors).toBeUndefined();
  });
  afterAll(() => t?.stop());

  const CASES = PATHS.map((path) => [path.name, path] as const);
  it.each(CASES)(
    '[LOG-001, LOG-006] %s writes entries with actor, responsible user, patient, action, data category, time, purpose, grounds and client',
    async (name, path) => {
      const sub = `walker-${name}`;
      const token = await t.token({ tenants: ['demo'], roles: path.roles, sub, patientId: path.patientId, clientId: path.clientId });
      await path.read(token);
      const admin = await t.token({ tenants: ['demo'], roles: ['admin'], sub: 'auditor' });
      const log = await ok(t.request('GET', '/api/ehr/patients/p-1001/access-log?limit=100', { token: admin }));
      const entries = log.data.filter((e: { actor: string }) => e.actor === sub);
      expect(entries.length).toBeGreaterThan(0);
      for (const entry of entries) {
        expect(entry).toMatchObject({
          actor: sub,
          responsibleUser: sub,
          patientId: 'p-1001',
          action: expect.stringMatching(/^(read|list|query)$/),
          dataCategory: path.category ?? expect.any(String),
          at: expect.any(String),
          purpose: path.purpose,
          grounds: typeof path.grounds === 'string' ? path.grounds : path.grounds(entry.dataCategory),
          client: path.clientId ?? null,
        });
      }
      const event = await ok(t.request('GET', `/fhir/R4/AuditEvent/${entries[0].id}`, { token: admin }));
      expect(validateFhir(event)).toBe(1);
      expect(event.agent[0].policy).toEqual([`urn:caregraph:access-grounds:${entries[0].grounds}`]);
      expect(event.entity.at(-1).detail).toEqual([{ type: 'dataCategory', valueString: entries[0].dataCategory }]);
    },
  );
});
