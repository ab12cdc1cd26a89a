import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { ENCOUNTER, LAB, NOTE, ORDER, VITALS } from './ehr-fixtures';
import { callTool, connectMcp, refusal, structured } from './mcp.helpers';

const ISSUER = 'https://login.caregraph.test';
const AGENT = 'claude-desktop';
const TOOLS = ['find_patients', 'patient_summary', 'observations', 'documents', 'appointments', 'message_history'];

describe(`MCP server /mcp (${backendName})`, () => {
  let t: TestPlatform;
  let clinician: Client;
  const open: Client[] = [];

  async function connect(token: string, headers: Record<string, string> = {}): Promise<Client> {
    const client = await connectMcp(t, token, headers);
    open.push(client);
    return client;
  }
  const agentToken = (roles: string[], options: { tenants?: string[]; sub?: string } = {}) =>
    t.token({ roles, clientId: AGENT, sub: options.sub ?? `${roles[0]}-agent-user`, tenants: options.tenants });
  const gql = async (query: string, variables?: Record<string, unknown>) => {
    const res = await t.graphql(query, variables);
    expect(res.body.errors).toBeUndefined();
    return res.body.data;
  };

  beforeAll(async () => {
    t = await startTestPlatform({ AUTH_ISSUER: ISSUER });
    await gql('mutation { grantConsent(patientId: "p-1001", purpose: AI_ASSISTANCE) { granted } }');
    for (const [templateId, content] of [
      ['vital_signs.v1', VITALS],
      [
        'vital_signs.v1',
        { ...VITALS, blood_pressure: { ...VITALS.blood_pressure, systolic: { magnitude: 135, unit: 'mm[Hg]' } }, recorded_at: '2026-11-20T09:00:00Z' },
      ],
      ['lab_result.v1', LAB],
      ['medication_order.v1', ORDER],
      ['encounter.v1', { encounter: { ...ENCOUNTER.encounter, reason: 'Follow-up of raised blood pressure' } }],
      ['clinical_note.v1', NOTE('Patient feels well; blood pressure improving.')],
    ] as const) {
      await gql('mutation($t: String!, $c: JSONObject!) { createComposition(input: {templateId: $t, ehrId: "ehr-p-1001", content: $c}) { uid } }', {
        t: templateId,
        c: content,
      });
    }
    clinician = await connect(await agentToken(['clinician']));
  });

  afterAll(async () => {
    await Promise.all(open.map((client) => client.close()));
    await t?.stop();
  });

  it('[XCH-013] lists its tools with input and output schemas, its resources and prompts', async () => {
    const { tools } = await clinician.listTools();
    // Every caller sees every tool (the support desk's too); the policy points refuse what a role may not read.
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS, 'organization_health', 'whoami'].sort());
    for (const tool of tools.filter((listed) => TOOLS.includes(listed.name))) {
      expect(tool.description).toBeTruthy();
      expect(tool.inputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['purpose']) });
      expect(tool.outputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['budget']) });
    }
    const { resourceTemplates } = await clinician.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(['caregraph://patients/{patientId}/summary']);
    const { resources } = await clinician.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['caregraph://templates']);
    const { prompts } = await clinician.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['explain_lab_trend', 'prepare_visit_summary']);
  });

  it('[XCH-013] answers every tool for a clinician agent with the patient’s AI_ASSISTANCE consent, FHIR-coded with units and dates', async () => {
    const found = structured(await callTool(clinician, 'find_patients', { query: 'p-1001', purpose: 'treatment' }));
    expect(found.patients).toEqual([expect.objectContaining({ id: 'p-1001', initials: expect.stringMatching(/^([A-Z]\.)+$/) })]);
    expect(JSON.stringify(found)).not.toMatch(/@|\+31/);

    const summary = structured(await callTool(clinician, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment' }));
    expect(summary.purposeCode).toBe('TREAT');
    expect(summary.demographics).toMatchObject({ patientId: 'p-1001', contact: expect.any(Object) });
    expect(summary.demographics).not.toHaveProperty('name');
    // Two vital-signs compositions, each a blood pressure and a heart rate.
    expect(summary.vitals).toHaveLength(4);
    const pressures = summary.vitals.filter((o: any) => o.code.code === '85354-9');
    // Newest clinical date first: the 22nd's 120 before the 20th's 135.
    expect(pressures[0]).toMatchObject({
      category: 'vital-signs',
      code: { system: 'http://loinc.org', code: '85354-9' },
      effective: '2026-11-22T09:00:00Z',
      components: expect.arrayContaining([
        expect.objectContaining({
          code: expect.objectContaining({ code: '8480-6' }),
          value: { value: 120, unit: 'mm[Hg]', system: 'http://unitsofmeasure.org', code: 'mm[Hg]' },
        }),
      ]),
    });
    expect(pressures[1].components[0].value.value).toBe(135);
    expect(summary.labs[0]).toMatchObject({ code: { code: '2345-7' }, value: { value: 5.4, unit: 'mmol/L' }, effective: '2026-11-22T08:00:00Z' });
    expect(summary.medications[0]).toMatchObject({ medication: 'Metformin 500 mg tablet', dose: { value: 500, unit: 'mg' }, dosesPerDay: 2, status: 'active' });
    expect(summary.encounters[0]).toMatchObject({ class: { code: 'AMB' }, reason: 'Follow-up of raised blood pressure' });
    expect(summary.notes[0]).toMatchObject({ type: { code: '11506-3' }, text: 'Patient feels well; blood pressure improving.' });
    expect(summary.appointments).toEqual([expect.objectContaining({ id: 'appt-1001' })]);
    expect(summary.communication.preferences.channels).toEqual({ sms: true, email: expect.any(Boolean) });
    expect(Array.isArray(summary.communication.recentMessages)).toBe(true);
    expect(summary.disclosure).toEqual({ contactDetails: true, freeText: true });

    const glucose = structured(await callTool(clinician, 'observations', { patientId: 'p-1001', purpose: 'treatment', codes: ['2345-7'] }));
    expect(glucose.labs.map((o: any) => o.code.code)).toEqual(['2345-7']);
    expect(glucose.vitals).toEqual([]);
    const ranged = structured(
      await callTool(clinician, 'observations', { patientId: 'p-1001', purpose: 'treatment', since: '2026-11-21', until: '2026-11-30' }),
    );
    expect(new Set(ranged.vitals.map((o: any) => o.effective))).toEqual(new Set(['2026-11-22T09:00:00Z']));

    const documents = structured(await callTool(clinician, 'documents', { patientId: 'p-1001', purpose: 'treatment' }));
    expect(documents.notes).toHaveLength(1);
    const appointments = structured(await callTool(clinician, 'appointments', { patientId: 'p-1001', purpose: 'care_management' }));
    expect(appointments.appointments[0]).toMatchObject({ id: 'appt-1001', status: 'booked' });
    const messages = structured(await callTool(clinician, 'message_history', { patientId: 'p-1001', purpose: 'patient_requested' }));
    expect(messages.communication.preferences).toMatchObject({ channels: { sms: true } });
    expect(messages.communication.recentMessages.every((m: any) => !('body' in m))).toBe(true);
  });

  it('[LOG-002] writes every call to the access log with the agent’s subject and client, the tool and the purpose', async () => {
    const agent = await connect(await agentToken(['nurse'], { sub: 'nurse-audited' }));
    for (const [tool, purpose] of [
      ['patient_summary', 'treatment'],
      ['observations', 'treatment'],
      ['documents', 'care_management'],
      ['appointments', 'care_management'],
      ['message_history', 'patient_requested'],
      ['find_patients', 'operations'],
    ]) {
      const args = tool === 'find_patients' ? { query: 'p-1001', purpose } : { patientId: 'p-1001', purpose };
      expect((await callTool(agent, tool, args)).isError).toBeFalsy();
    }
    const log = await gql('{ accessLog(patientId: "p-1001", limit: 100) { data { actor tool client purpose entityType } } }');
    const mine = log.accessLog.data.filter((e: any) => e.actor === 'nurse-audited');
    const byTool = (tool: string) => mine.filter((e: any) => e.tool === tool);
    for (const tool of TOOLS) {
      expect(byTool(tool).length).toBeGreaterThan(0);
      expect(byTool(tool).every((e: any) => e.client === AGENT)).toBe(true);
    }
    expect(new Set(byTool('patient_summary').map((e: any) => e.purpose))).toEqual(new Set(['TREAT']));
    expect(byTool('documents').map((e: any) => e.purpose)).toContain('CAREMGT');
    expect(byTool('message_history').find((e: any) => e.entityType === 'ClinicalContext')).toMatchObject({ purpose: 'PATRQT' });
    expect(byTool('find_patients')[0]).toMatchObject({ purpose: 'HOPERAT', entityType: 'Patient' });
    expect(mine.every((e: any) => e.tool && e.purpose)).toBe(true);
  });

  it('refuses a request without a token with 401 pointing at the protected-resource metadata, which names the issuer', async () => {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).toBe(`${t.platform.gateway!.url}/.well-known/oauth-protected-resource/mcp`);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    const metadata = await (await fetch(metadataUrl!.replace('localhost', '127.0.0.1'))).json();
    expect(metadata).toMatchObject({ resource: `${t.platform.gateway!.url}/mcp`, authorization_servers: [ISSUER], bearer_methods_supported: ['header'] });

    const client = new Client({ name: 'no-token', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)))).rejects.toThrow();
    await expect(connect('not.a.token')).rejects.toThrow();
  });

  it('refuses a token of an unknown or a suspended tenant on every /mcp method, with the answer of the other surfaces', async () => {
    const platformAdmin = await t.token({ tenants: [], roles: ['platform_admin'], sub: 'ops-mcp' });
    for (const mutation of [
      'mutation { createOrganization(id: "mcp-paused", name: "Paused Clinics", reason: "test") { id } }',
      'mutation { suspendOrganization(id: "mcp-paused", reason: "test") { status } }',
    ]) {
      expect((await t.graphql(mutation, undefined, { token: platformAdmin })).body.errors).toBeUndefined();
    }
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'caregraph://templates' } },
    ];
    for (const [tenant, message] of [
      ['ghost', "Tenant 'ghost' is not served here"],
      ['mcp-paused', "Tenant 'mcp-paused' is suspended"],
    ]) {
      const token = await agentToken(['clinician'], { tenants: [tenant] });
      const refused = { error: { code: 'FORBIDDEN', message } };
      // The answer every other surface gives the same token.
      expect(await t.request('GET', '/v1/templates', { token })).toMatchObject({ status: 403, body: refused });
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      for (const body of messages) {
        const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
        expect([body.method, res.status, await res.json()]).toEqual([body.method, 403, refused]);
      }
      // The methods that open no session must not tell such a token more than the others do.
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${t.url}/mcp`, { method, headers });
        expect([method, res.status, await res.json()]).toEqual([method, 403, refused]);
      }
      await expect(connect(token)).rejects.toThrow(message);
    }
  });

  it('[SEC-015] refuses clinical data without the patient’s AI_ASSISTANCE consent, naming the consent', async () => {
    for (const tool of ['patient_summary', 'observations', 'documents', 'appointments', 'message_history']) {
      const text = refusal(await callTool(clinician, tool, { patientId: 'p-1003', purpose: 'treatment' }));
      expect(text).toMatch(/^FORBIDDEN: .*AI_ASSISTANCE consent/);
    }
    // A web app (no agent) reads the same context without it: the consent is for AI agents.
    const web = await gql('{ clinicalContext(patientId: "p-1003", purpose: TREATMENT, sections: [DEMOGRAPHICS]) { demographics { patientId } } }');
    expect(web.clinicalContext.demographics.patientId).toBe('p-1003');
  });

  it('keeps tenants apart: another tenant’s header is refused, another tenant’s patient is not found', async () => {
    await expect(connect(await agentToken(['clinician']), { 'x-tenant-id': 'acme' })).rejects.toThrow(/403|not grant/);
    const acme = await connect(await agentToken(['clinician'], { tenants: ['acme'] }));
    expect(refusal(await callTool(acme, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment' }))).toMatch(/^NOT_FOUND/);
    expect(structured(await callTool(acme, 'find_patients', { query: 'p-1001', purpose: 'treatment' })).patients).toEqual([]);
  });

  it('refuses a receptionist agent clinical data by the policy point, while appointments stay readable', async () => {
    const receptionist = await connect(await agentToken(['receptionist']));
    for (const tool of ['patient_summary', 'observations', 'documents']) {
      expect(refusal(await callTool(receptionist, tool, { patientId: 'p-1001', purpose: 'care_management' }))).toMatch(
        /^FORBIDDEN: .*receptionist may not read/,
      );
    }
    const appointments = structured(await callTool(receptionist, 'appointments', { patientId: 'p-1001', purpose: 'care_management' }));
    expect(appointments.appointments[0].id).toBe('appt-1001');
  });

  it('redacts contact details and free text for a role the disclosure rules do not allow them', async () => {
    await gql('mutation { grantConsent(patientId: "p-1001", purpose: DATA_SHARING) { granted } }');
    const integration = await connect(await agentToken(['integration']));
    const documents = structured(await callTool(integration, 'documents', { patientId: 'p-1001', purpose: 'operations' }));
    expect(documents.disclosure).toEqual({ contactDetails: false, freeText: false });
    expect(documents.notes[0]).toMatchObject({ type: { code: '11506-3' }, text: null, title: null });
    const observations = structured(await callTool(integration, 'observations', { patientId: 'p-1001', purpose: 'operations' }));
    expect(observations.vitals.find((o: any) => o.code.code === '85354-9').components[0].value.value).toBe(120);
  });

  it('[XCH-013] bounds every answer by its size budget, newest entries kept', async () => {
    const full = structured(await callTool(clinician, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment', maxBytes: 200_000 }));
    expect(full.budget.truncated).toBe(false);
    const small = await callTool(clinician, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment', maxBytes: 2_500 });
    const bounded = structured(small);
    expect(Buffer.byteLength(JSON.stringify(bounded))).toBeLessThanOrEqual(2_500);
    expect(Buffer.byteLength((small.content[0] as { text: string }).text)).toBeLessThanOrEqual(2_500);
    expect(bounded.budget).toMatchObject({ maxBytes: 2_500, truncated: true });
    expect(bounded.budget.omittedItems).toBeGreaterThan(0);
    const limited = structured(await callTool(clinician, 'observations', { patientId: 'p-1001', purpose: 'treatment', maxItems: 1 }));
    expect(limited.vitals.map((o: any) => o.effective)).toEqual(['2026-11-22T09:00:00Z']);
    expect(limited.coverage).toContainEqual({ section: 'VITALS', total: 4, returned: 1, truncated: true });
    expect(refusal(await callTool(clinician, 'patient_summary', { patientId: 'p-1001', purpose: 'treatment', maxBytes: 10 }))).toMatch(/maxBytes/);
  });

  it('serves the resources and prompts', async () => {
    const summary = await clinician.readResource({ uri: 'caregraph://patients/p-1001/summary' });
    expect(JSON.parse((summary.contents[0] as { text: string }).text)).toMatchObject({ patientId: 'p-1001', purposeCode: 'TREAT' });
    const templates = await clinician.readResource({ uri: 'caregraph://templates' });
    const parsed = JSON.parse((templates.contents[0] as { text: string }).text);
    expect(parsed.clinical.map((c: any) => c.id)).toContain('lab_result.v1');
    expect(parsed.messages.map((m: any) => m.id)).toContain('appointment-reminder');
    const prompt = await clinician.getPrompt({ name: 'explain_lab_trend', arguments: { patientId: 'p-1001', code: '2345-7' } });
    expect((prompt.messages[0].content as { text: string }).text).toMatch(/observations.*2345-7/);
  });
});
