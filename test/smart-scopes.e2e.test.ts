import { validateFhir } from './fhir-support';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { VITALS } from './ehr-fixtures';
import { callTool, connectMcp, refusal, structured } from './mcp.helpers';

/**
 * SMART App Launch 2.0 scopes (the token's `scope` claim) hold a token to them on top of its roles, on every
 * surface that reaches clinical data: the FHIR API, GraphQL, openEHR REST and AQL. `patient/` scopes reach the
 * token's patient only; `user/*.cruds` keeps what the roles grant.
 */
describe(`SMART scopes (${backendName})`, () => {
  let t: TestPlatform;
  let uid: string;

  beforeAll(async () => {
    t = await startTestPlatform();
    const created = await t.request('POST', '/api/ehr/compositions', {
      body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS },
      headers: { 'x-tenant-id': 'demo' },
    });
    expect(created.status).toBe(201);
    uid = created.body.uid;
    // MCP callers are AI agents: they read clinical data with the patient's consent.
    expect((await t.graphql('mutation { grantConsent(patientId: "p-1001", purpose: AI_ASSISTANCE) { granted } }')).body.errors).toBeUndefined();
  });
  afterAll(() => t?.stop());

  const clinician = (scope: string, patientId?: string) => t.token({ roles: ['clinician'], sub: `smart-${scope}`, scope, patientId });
  /** A FHIR refusal: 403 with an OperationOutcome that validates. */
  const refused = (res: { status: number; body: any }) => {
    expect(res.status).toBe(403);
    expect(res.body.resourceType).toBe('OperationOutcome');
    validateFhir(res.body);
  };

  it("[SEC-018] patient/Observation.rs reads and searches that patient's Observations, and nothing else over FHIR", async () => {
    const token = await clinician('launch/patient patient/Observation.rs', 'p-1001');
    const own = await t.request('GET', '/fhir/R4/Observation?patient=Patient/p-1001', { token });
    expect(own.status).toBe(200);
    expect(own.body.total).toBeGreaterThan(0);
    // Another patient is outside the token's reach: as for any record the caller does not reach, nothing is found.
    const other = await t.request('GET', '/fhir/R4/Observation?patient=Patient/p-1002', { token });
    expect(other.status).toBe(200);
    expect(other.body.entry ?? []).toEqual([]);
    refused(await t.request('GET', '/fhir/R4/Patient/p-1001', { token }));
    refused(await t.request('GET', '/fhir/R4/Appointment/appt-1001', { token }));
    refused(await t.request('GET', '/fhir/R4/Observation', { token }));
    const write = own.body.entry[0].resource;
    refused(
      await t.request('PUT', `/fhir/R4/Observation/${write.id}`, {
        token,
        body: write,
        headers: { 'content-type': 'application/fhir+json', 'if-match': `W/"${write.meta.versionId}"` },
      }),
    );
  });

  it('[SEC-018] holds the token to its scopes on GraphQL and openEHR too', async () => {
    const token = await clinician('patient/Observation.rs', 'p-1001');
    // Observations of its patient over GraphQL: yes; the patient's demographics: no.
    const compositions = await t.graphql('{ compositions(filter: { patientId: "p-1001" }) { data { uid } } }', {}, { token });
    expect(compositions.body.errors).toBeUndefined();
    expect(compositions.body.data.compositions.data.map((c: { uid: string }) => c.uid)).toContain(uid);
    // An openEHR EHR is record-level data (demographics): a token scoped to Observations alone does not reach it,
    // one that may also read its patient's Patient resource does.
    expect((await t.request('GET', `/openehr/v1/ehr/ehr-p-1001/composition/${uid}`, { token })).status).toBe(403);
    const withPatient = await clinician('patient/Patient.r patient/Observation.rs', 'p-1001');
    expect((await t.request('GET', `/openehr/v1/ehr/ehr-p-1001/composition/${uid}`, { token: withPatient })).status).toBe(200);
    expect((await t.request('GET', `/openehr/v1/ehr/ehr-p-1002/ehr_status`, { token: withPatient })).status).toBe(404);
    const demographics = await t.graphql('{ patient(id: "p-1001") { id } }', {}, { token });
    expect(demographics.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const aql = await t.request('POST', '/openehr/v1/query/aql', {
      token: withPatient,
      body: { q: "SELECT c/uid/value FROM EHR e[ehr_id/value='ehr-p-1002'] CONTAINS COMPOSITION c" },
    });
    expect(aql.status).toBe(404);
    // The MCP tools call the same policy point: a summary needs demographics, which the scope does not grant.
    const mcp = await connectMcp(t, token);
    try {
      expect(refusal(await callTool(mcp, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment' }))).toContain(
        "the token's scopes do not allow reading Patient",
      );
    } finally {
      await mcp.close();
    }
    const wide = await connectMcp(t, await clinician('user/*.rs'));
    try {
      const summary = await callTool(wide, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment' });
      if (summary.isError) throw new Error(JSON.stringify(summary.content));
      expect(structured(summary)).toBeDefined();
    } finally {
      await wide.close();
    }
    // A write of an Observation is refused: the scope grants reading and searching only.
    const write = await t.request('POST', '/api/ehr/compositions', {
      token,
      body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS },
      headers: { 'x-tenant-id': 'demo' },
    });
    expect(write.status).toBe(403);
  });

  it('[SEC-018] user/*.cruds keeps what the roles grant; a token without a scope claim keeps today’s rules', async () => {
    for (const token of [await clinician('openid fhirUser user/*.cruds'), await t.token({ roles: ['clinician'] })]) {
      expect((await t.request('GET', '/fhir/R4/Patient/p-1002', { token })).status).toBe(200);
      expect((await t.request('GET', '/fhir/R4/Observation?patient=Patient/p-1001', { token })).status).toBe(200);
    }
    // Scopes never add to the roles: a receptionist's user/*.cruds still reads no Observation.
    const receptionist = await t.token({ roles: ['receptionist'], scope: 'user/*.cruds' });
    refused(await t.request('GET', '/fhir/R4/Observation?patient=Patient/p-1001', { token: receptionist }));
  });

  it('[SEC-018] user/Patient.r reads any patient the role reaches, and no clinical data', async () => {
    const token = await clinician('user/Patient.r');
    expect((await t.request('GET', '/fhir/R4/Patient/p-1002', { token })).status).toBe(200);
    refused(await t.request('GET', '/fhir/R4/Observation?patient=Patient/p-1002', { token }));
  });
});
