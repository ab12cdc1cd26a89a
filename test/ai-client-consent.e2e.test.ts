import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { VITALS } from './ehr-fixtures';

const AI_CLIENT = 'claude-desktop';
const CONTEXT = 'query { clinicalContext(patientId: "p-1001", purpose: TREATMENT, sections: [VITALS]) { vitals { effective } } }';

/**
 * Whether a caller is an AI agent follows from the caller (its token's OAuth client), not from the door it
 * came through: an AI client that skips /mcp and calls GraphQL, FHIR, openEHR or /api/ehr directly is held
 * to the patient's AI_ASSISTANCE consent there too.
 */
describe(`AI clients need the patient's AI_ASSISTANCE consent on every surface (${backendName})`, () => {
  let t: TestPlatform;
  let compositionUid: string;
  let agent: string;
  let webApp: string;

  // Every clinical read surface, answering the status only (the bodies are the surfaces' own tests').
  const reads = async (token: string) => {
    const tenant = { 'x-tenant-id': 'demo' };
    const aql = { q: "SELECT c/uid/value FROM EHR e[ehr_id/value='ehr-p-1001'] CONTAINS COMPOSITION c" };
    const context = await t.graphql(CONTEXT, undefined, { token });
    return [
      context.body.errors ? context.body.errors[0].extensions.code : 'ok',
      (await t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token })).status,
      (await t.request('GET', `/openehr/v1/ehr/ehr-p-1001/composition/${compositionUid}`, { token })).status,
      (await t.request('POST', '/openehr/v1/query/aql', { token, body: aql })).status,
      (await t.request('GET', `/api/ehr/compositions/${compositionUid}`, { token, headers: tenant })).status,
      (await t.request('GET', '/api/ehr/patients/p-1001/compositions', { token, headers: tenant })).status,
    ];
  };

  beforeAll(async () => {
    t = await startTestPlatform();
    const created = await t.request('POST', '/api/ehr/compositions', {
      body: { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS },
      headers: { 'x-tenant-id': 'demo' },
    });
    expect(created.status).toBe(201);
    compositionUid = created.body.uid;
    agent = await t.token({ roles: ['clinician'], sub: 'dr-ai', clientId: AI_CLIENT });
    webApp = await t.token({ roles: ['clinician'], sub: 'dr-web' });
  });
  afterAll(() => t?.stop());

  it('[SEC-015] refuses an AI client without the consent, as /mcp does, and lets it read once the patient consents', async () => {
    expect(await reads(agent)).toEqual(['FORBIDDEN', 403, 403, 403, 403, 403]);
    const refused = await t.request('GET', '/fhir/R4/Observation?patient=p-1001', { token: agent });
    expect(JSON.stringify(refused.body)).toMatch(/AI_ASSISTANCE consent/);

    const granted = await t.graphql('mutation { grantConsent(patientId: "p-1001", purpose: AI_ASSISTANCE) { granted } }');
    expect(granted.body.errors).toBeUndefined();
    try {
      expect(await reads(agent)).toEqual(['ok', 200, 200, 200, 200, 200]);
    } finally {
      await t.graphql('mutation { revokeConsent(patientId: "p-1001", purpose: AI_ASSISTANCE) { granted } }');
    }
  });

  it("keeps today's rules for a token that names no client", async () => {
    expect(await reads(webApp)).toEqual(['ok', 200, 200, 200, 200, 200]);
  });

  it('[LOG-002] records the AI client in the access log of a read outside /mcp', async () => {
    await t.graphql('mutation { grantConsent(patientId: "p-1001", purpose: AI_ASSISTANCE) { granted } }');
    try {
      expect((await t.request('GET', `/api/ehr/compositions/${compositionUid}`, { token: agent, headers: { 'x-tenant-id': 'demo' } })).status).toBe(200);
    } finally {
      await t.graphql('mutation { revokeConsent(patientId: "p-1001", purpose: AI_ASSISTANCE) { granted } }');
    }
    const log = await t.graphql('query { accessLog(patientId: "p-1001", limit: 100) { data { actor client } } }');
    expect(log.body.errors).toBeUndefined();
    expect(log.body.data.accessLog.data).toContainEqual({ actor: 'dr-ai', client: AI_CLIENT });
  });
});
