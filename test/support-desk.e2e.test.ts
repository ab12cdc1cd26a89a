import { connectAs, Subscription, untilLive } from './subscriptions.helpers';
import { backendName, startTestPlatform, type TestPlatform } from './harness';
import { waitFor } from './webhook-receiver';
import { callTool, connectMcp, refusal, structured } from './mcp.helpers';

const HEALTH = `query($id: ID!) {
  organization(id: $id) {
    id name status
    settings { supportEmail rateLimits { category limit } }
    rateLimits { category limit overridden }
    health {
      since
      webhooks { id url status disabledAt disabledReason failureStreak lastFailureAt lastFailureError lastAttemptAt lastAttemptStatusCode lastAttemptSucceeded }
      openAlerts { id type webhookId message createdAt }
      messages { total byStatus { key count } failureReasons { key count } }
    }
  }
}`;

/** What a support answer must never contain: patient ids, names, phone numbers, message bodies. */
const CLINICAL = /p-100\d|de Vries|\+31|Reminder: your appointment|blood_pressure|ehr-p-/;
/** The same without ids: a refusal may name the id that was asked for. */
const CLINICAL_CONTENT = /de Vries|\+31|Reminder: your appointment|blood_pressure|birthDate|"gender"/;
/** Every clinical MCP tool, with arguments a clinician agent is answered for (p-1001 gives AI_ASSISTANCE consent below). */
const CLINICAL_TOOLS: [string, Record<string, unknown>][] = [
  ['find_patients', { query: 'p-1001', purpose: 'operations' }],
  ...['patient_summary', 'observations', 'documents', 'appointments', 'message_history'].map((tool): [string, Record<string, unknown>] => [
    tool,
    { patientId: 'p-1001', purpose: 'treatment' },
  ]),
];

describe(`support desk (${backendName})`, () => {
  let t: TestPlatform;
  let support: string;
  let admin: string;

  beforeAll(async () => {
    // A fast retry schedule so a failing subscription is disabled (and alerted) within the test.
    t = await startTestPlatform({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_RETRY_SCHEDULE: '10ms,10ms,10ms,10ms,10ms', WEBHOOK_TIMEOUT_MS: '1000' });
    support = await t.token({ roles: ['support'], sub: 'desk-1' });
    admin = await t.token({ sub: 'admin-1' });
    // A subscription whose endpoint refuses connections, and a message that fails (p-1002's number ends in 0000).
    const hook = await t.request('POST', '/v1/webhooks', {
      token: admin,
      body: { url: 'http://127.0.0.1:9/hook', events: ['message.failed'], secret: 'a-secret-of-16-chars' },
    });
    expect(hook.status).toBe(201);
    const sent = await t.request('POST', '/v1/messages', {
      token: admin,
      body: { patientId: 'p-1002', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } },
    });
    expect(sent.status).toBe(201);
    await waitFor('the subscription to be disabled', async () => {
      const list = await t.request('GET', '/v1/webhooks', { token: admin });
      return list.body.data[0]?.status === 'disabled';
    });
  });
  afterAll(() => t?.stop());

  it('tells support who they are (viewer)', async () => {
    const res = await t.graphql('{ viewer { subject roles tenants tenantId tokenExpiresAt } }', undefined, { token: support });
    expect(res.body.data.viewer).toEqual({ subject: 'desk-1', roles: ['support'], tenants: ['demo'], tenantId: 'demo', tokenExpiresAt: expect.any(String) });
    const expiresIn = new Date(res.body.data.viewer.tokenExpiresAt).getTime() - Date.now();
    expect(expiresIn).toBeGreaterThan(500_000);
    expect(expiresIn).toBeLessThanOrEqual(600_000);
  });

  it("shows support their organisation's health: limits, failing and disabled webhooks, open alerts, message failures", async () => {
    const res = await t.graphql(HEALTH, { id: 'demo' }, { token: support });
    expect(res.body.errors).toBeUndefined();
    const org = res.body.data.organization;
    expect(org).toMatchObject({ id: 'demo', status: 'active' });
    expect(org.rateLimits).toContainEqual({ category: 'MESSAGES_SEND', limit: 100, overridden: false });
    const [webhook] = org.health.webhooks;
    expect(webhook).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      status: 'disabled',
      disabledReason: expect.any(String),
      failureStreak: 6,
      lastFailureError: expect.any(String),
      lastAttemptSucceeded: false,
    });
    expect(org.health.openAlerts).toEqual([expect.objectContaining({ type: 'webhook.disabled', webhookId: webhook.id })]);
    expect(org.health.messages.byStatus).toContainEqual({ key: 'failed', count: 1 });
    expect(org.health.messages.failureReasons).toEqual([{ key: expect.any(String), count: 1 }]);
    expect(JSON.stringify(res.body)).not.toMatch(CLINICAL);
    // Another tenant's organisation looks absent.
    expect((await t.graphql(HEALTH, { id: 'acme' }, { token: support })).body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('[SEC-008] never gives support a clinical field on GraphQL, REST, FHIR or openEHR', async () => {
    for (const query of [
      '{ patient(id: "p-1001") { id name { family } } }',
      '{ patients { data { id } } }',
      '{ messages { data { id body } } }',
      '{ appointments { data { id } } }',
      '{ compositions { data { uid } } }',
      '{ patient(id: "p-1001") { observations { data { uid } } } }',
    ]) {
      const res = await t.graphql(query, undefined, { token: support });
      // Refused, or the record looks absent (null): never a value.
      const outcome = res.body.errors?.[0]?.extensions?.code ?? (Object.values(res.body.data ?? {}).every((v) => v === null) ? 'ABSENT' : 'ANSWERED');
      expect([query, outcome]).toEqual([query, expect.stringMatching(/^(FORBIDDEN|NOT_FOUND|ABSENT)$/)]);
      expect(JSON.stringify(res.body)).not.toMatch(CLINICAL_CONTENT);
    }
    for (const path of ['/v1/messages', '/v1/patients/p-1001', '/v1/appointments', '/api/ehr/patients/p-1001', '/openehr/v1/ehr/ehr-p-1001']) {
      const res = await t.request('GET', path, { token: support, headers: { 'x-tenant-id': 'demo' } });
      expect([path, [403, 404].includes(res.status)]).toEqual([path, true]);
      expect(JSON.stringify(res.body)).not.toMatch(CLINICAL_CONTENT);
    }
    // FHIR is patient data throughout: every interaction refuses support (not an empty search), as an OperationOutcome.
    for (const [method, path, body] of [
      ['GET', '/fhir/R4/Patient/p-1001'],
      ['GET', '/fhir/R4/Patient'],
      ['GET', '/fhir/R4/Observation?patient=p-1001'],
      ['GET', '/fhir/R4/Observation?patient=p-9999'],
      ['GET', '/fhir/R4/Appointment?patient=p-1001'],
      ['GET', '/fhir/R4/Patient/p-1001/$everything'],
      ['GET', '/fhir/R4/Patient/p-1001/_history'],
      ['POST', '/fhir/R4/Patient', { resourceType: 'Patient', name: [{ family: 'Desk' }] }],
    ] as const) {
      const res = await t.request(method, path, {
        token: support,
        headers: { 'x-tenant-id': 'demo', 'content-type': 'application/fhir+json' },
        ...(body ? { body } : {}),
      });
      expect([method, path, res.status, res.body.resourceType, res.body.issue?.[0]?.code]).toEqual([method, path, 403, 'OperationOutcome', 'forbidden']);
      expect(JSON.stringify(res.body)).not.toMatch(CLINICAL_CONTENT);
    }
    // The capability statement is no patient data.
    expect((await t.request('GET', '/fhir/R4/metadata', { token: support })).status).toBe(200);
  });

  it('answers every field of organization(id) that support may select, without an error', async () => {
    // Every field of the Organization type as the gateway publishes it, nested objects included.
    const types = new Map<string, any>(
      (
        await t.graphql(
          '{ __schema { types { name kind fields { name args { name type { kind } } type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }',
        )
      ).body.data.__schema.types.map((type: any) => [type.name, type]),
    );
    const named = (type: any): any => (type.ofType ? named(type.ofType) : type);
    const selection = (typeName: string): string =>
      types
        .get(typeName)
        .fields.filter((field: any) => field.args.every((arg: any) => arg.type.kind !== 'NON_NULL'))
        .map((field: any) => {
          const type = named(field.type);
          return type.kind === 'OBJECT' ? `${field.name} { ${selection(type.name)} }` : field.name;
        })
        .join(' ');
    const query = `{ organization(id: "demo") { ${selection('Organization')} } }`;
    expect(query).toContain('health {');
    const res = await t.graphql(query, undefined, { token: support });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.organization).toMatchObject({ id: 'demo', status: 'active' });
    expect(JSON.stringify(res.body)).not.toMatch(CLINICAL);
  });

  it('gives support no events on subscriptions', async () => {
    const socket = await connectAs(t, support);
    const events = new Subscription(socket.client, 'subscription { events { id type data } }');
    const status = new Subscription(socket.client, 'subscription { messageStatusChanged { id status patientId } }');
    // A delivered message to p-1001 raises message.sent/delivered: an admin on the same stream would see them.
    const watcher = await connectAs(t, admin);
    const seen = new Subscription(watcher.client, 'subscription { events(types: [MESSAGE_DELIVERED]) { id } }');
    await untilLive(t.platform.runtime.events, watcher, 'demo');
    const sent = await t.request('POST', '/v1/messages', {
      token: admin,
      body: { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } },
    });
    expect(sent.status).toBe(201);
    expect(await seen.until(() => seen.results.length > 0)).toBe(true);
    const refusedOrEmpty = (s: Subscription) => s.results.every((r) => r.errors && !r.data) && JSON.stringify(s.results).match(CLINICAL) === null;
    expect(refusedOrEmpty(events)).toBe(true);
    expect(refusedOrEmpty(status)).toBe(true);
    for (const s of [events, status, seen]) s.stop();
    await Promise.all([socket.dispose(), watcher.dispose()]);
  });

  it("shows support the tenant's recent API errors, callers, and this minute's calls per category", async () => {
    const refused = await t.graphql('query SupportPeek { messages { data { id } } }', undefined, { token: support });
    expect(refused.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const res = await t.graphql(
      '{ organization(id: "demo") { activity { usage { category count } recentErrors { code operation subject requestId } recentCallers { subject roles } } } }',
      undefined,
      { token: support },
    );
    expect(res.body.errors).toBeUndefined();
    const { usage, recentErrors, recentCallers } = res.body.data.organization.activity;
    expect(recentErrors[0]).toEqual({ code: 'FORBIDDEN', operation: 'SupportPeek', subject: 'desk-1', requestId: expect.any(String) });
    expect(recentCallers).toEqual(
      expect.arrayContaining([
        { subject: 'desk-1', roles: ['support'] },
        { subject: 'admin-1', roles: ['admin'] },
      ]),
    );
    // This very query is counted (WEBHOOKS) in the current minute before it runs.
    expect(usage.find((u: { category: string }) => u.category === 'WEBHOOKS').count).toBeGreaterThanOrEqual(1);
    expect(usage.map((u: { category: string }) => u.category).sort()).toEqual(['EHR', 'MESSAGES_READ', 'MESSAGES_SEND', 'PATIENTS', 'TEMPLATES', 'WEBHOOKS']);
    expect(JSON.stringify(res.body)).not.toMatch(CLINICAL);
  });

  describe('as MCP tools', () => {
    const open: Awaited<ReturnType<typeof connectMcp>>[] = [];
    const mcp = async (token: string) => {
      const client = await connectMcp(t, token);
      open.push(client);
      return client;
    };
    afterAll(() => Promise.all(open.map((client) => client.close())));

    it('answers whoami and organization_health for a support agent, with the same health as GraphQL', async () => {
      const agent = await mcp(await t.token({ roles: ['support'], sub: 'desk-2', clientId: 'support-desk-agent' }));
      const { tools } = await agent.listTools();
      for (const name of ['whoami', 'organization_health']) {
        const tool = tools.find((listed) => listed.name === name)!;
        expect([name, tool.outputSchema?.type, tool.annotations?.readOnlyHint]).toEqual([name, 'object', true]);
      }
      expect(tools.find((listed) => listed.name === 'organization_health')!.inputSchema).toMatchObject({ required: ['organizationId'] });

      expect(structured(await callTool(agent, 'whoami'))).toEqual({
        subject: 'desk-2',
        roles: ['support'],
        tenants: ['demo'],
        tenantId: 'demo',
        tokenExpiresAt: expect.any(String),
      });

      const result = await callTool(agent, 'organization_health', { organizationId: 'demo' });
      const health = structured(result);
      expect(health.organization).toMatchObject({ id: 'demo', status: 'active' });
      expect(health.limits).toContainEqual({ category: 'MESSAGES_SEND', limit: 100, overridden: false, usedThisMinute: expect.any(Number) });
      // This call itself is counted before it runs.
      expect(health.limits.find((l: { category: string }) => l.category === 'WEBHOOKS').usedThisMinute).toBeGreaterThanOrEqual(1);
      expect(health.webhooks).toEqual([
        expect.objectContaining({ url: 'http://127.0.0.1:9/hook', status: 'disabled', disabledReason: expect.any(String), failureStreak: 6 }),
      ]);
      expect(health.openAlerts).toEqual([expect.objectContaining({ type: 'webhook.disabled', webhookId: health.webhooks[0].id })]);
      expect(health.messages.byStatus).toContainEqual({ key: 'failed', count: 1 });
      expect(health.messages.failureReasons).toEqual([{ key: expect.any(String), count: 1 }]);
      expect(health.recentErrors[0]).toMatchObject({ code: 'FORBIDDEN', subject: 'desk-1' });
      expect(health.recentCallers.map((c: { subject: string }) => c.subject)).toEqual(expect.arrayContaining(['desk-1', 'desk-2', 'admin-1']));
      expect(health.budget).toMatchObject({ truncated: false, omittedItems: 0 });
      // Recent errors repeat the ids support asked for above ("Patient 'p-1001' was not found"), never content.
      expect(JSON.stringify(result)).not.toMatch(CLINICAL_CONTENT);

      // A small budget trims the lists from the end and says so.
      const small = await callTool(agent, 'organization_health', { organizationId: 'demo', maxBytes: 1_000 });
      expect(structured(small).budget).toMatchObject({ maxBytes: 1_000, truncated: true });
      expect(Buffer.byteLength((small.content[0] as { text: string }).text)).toBeLessThanOrEqual(1_000);
    });

    it('[SEC-008] refuses a support agent every clinical tool and the patient resource, with no clinical field', async () => {
      await t.graphql('mutation { grantConsent(patientId: "p-1001", purpose: AI_ASSISTANCE) { granted } }', undefined, { token: admin });
      // The same calls answer a clinician agent: the data and the consent are there, the role is what refuses support.
      const clinician = await mcp(await t.token({ roles: ['clinician'], clientId: 'support-desk-agent' }));
      for (const [tool, args] of CLINICAL_TOOLS) expect([tool, (await callTool(clinician, tool, args)).isError ?? false]).toEqual([tool, false]);

      const agent = await mcp(await t.token({ roles: ['support'], sub: 'desk-2', clientId: 'support-desk-agent' }));
      for (const [tool, args] of CLINICAL_TOOLS) {
        const result = await callTool(agent, tool, args);
        expect([tool, refusal(result)]).toEqual([tool, expect.stringMatching(/^(FORBIDDEN|NOT_FOUND): /)]);
        expect(result.structuredContent).toBeUndefined();
        expect(JSON.stringify(result)).not.toMatch(CLINICAL_CONTENT);
      }
      await expect(agent.readResource({ uri: 'caregraph://patients/p-1001/summary' })).rejects.toThrow(/not allowed|not found/i);
    });

    it("answers another tenant's organisation as not found", async () => {
      const agent = await mcp(await t.token({ roles: ['support'], sub: 'desk-2' }));
      expect(refusal(await callTool(agent, 'organization_health', { organizationId: 'acme' }))).toMatch(/^NOT_FOUND: /);
      const acme = await mcp(await t.token({ roles: ['support'], sub: 'acme-desk', tenants: ['acme'] }));
      expect(structured(await callTool(acme, 'whoami')).tenantId).toBe('acme');
      const refused = await callTool(acme, 'organization_health', { organizationId: 'demo' });
      expect(refusal(refused)).toMatch(/^NOT_FOUND: /);
      expect(JSON.stringify(refused)).not.toMatch(/127\.0\.0\.1:9|webhook\.disabled/);
    });
  });
});
