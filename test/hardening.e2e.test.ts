import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { SignJWT } from 'jose';
import { issueAccessToken } from '../common/auth/tokens';
import { VITALS } from './ehr-fixtures';
import { connectAs, Subscription } from './subscriptions.helpers';
import { startTestPlatform, backendName, type TestPlatform } from './harness';
import { makeCertificate } from '../scripts/support/certificate';

const ORIGIN = 'https://app.example.org';
const ERROR_BODY = { error: { code: expect.any(String), message: expect.any(String) } };

/** Sends raw bytes (what fetch refuses to send) and reads the answer up to the connection's end. */
function rawRequest(url: string, bytes: string | Buffer): Promise<{ status: number; head: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body });
    });
  });
}

/** An HTTP call with headers fetch will not forge (Host). */
function withHost(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      `${url}${path}`,
      { method, headers: { ...headers, ...(data ? { 'content-type': headers['content-type'] ?? 'application/json' } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

describe(`API hardening (${backendName})`, () => {
  let t: TestPlatform;
  beforeAll(async () => {
    // Low GraphQL limits: the current schema nests at most 6 levels (the rule itself is unit-tested at the defaults).
    t = await startTestPlatform({ CORS_ORIGINS: `${ORIGIN},http://localhost:5173`, GRAPHQL_MAX_DEPTH: '5', GRAPHQL_MAX_COST: '2000' });
  });
  afterAll(() => t?.stop());

  describe('HTTP', () => {
    it('sends security headers on API, error and health answers', async () => {
      for (const res of [
        await t.request('GET', '/v1/templates'),
        await t.request('GET', '/nowhere'),
        await t.request('GET', '/healthz', { token: null }),
        await t.graphql('{ __typename }'),
      ]) {
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        expect(res.headers.get('referrer-policy')).toBe('no-referrer');
        expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
        expect(res.headers.get('cache-control')).toBe('no-store');
        expect(res.headers.get('strict-transport-security')).toBeNull();
        expect(res.headers.get('x-powered-by')).toBeNull();
      }
    });

    it('[SEC-011] refuses bodies over 1 MiB with 413, declared or streamed', async () => {
      const big = JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(1024 * 1024) } });
      for (const path of ['/graphql', '/v1/messages', '/api/ehr/compositions']) {
        const res = await t.request('POST', path, { rawBody: big, headers: { 'content-type': 'application/json' } });
        expect([path, res.status, res.body]).toEqual([
          path,
          413,
          expect.objectContaining({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } }),
        ]);
      }
      const token = await t.token();
      const streamed = await rawRequest(
        t.url,
        `POST /graphql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
          `${(1024 * 1024 + 10).toString(16)}\r\n${'{'.padEnd(1024 * 1024 + 10, ' ')}\r\n0\r\n\r\n`,
      );
      expect(streamed.status).toBe(413);
      expect(JSON.parse(streamed.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('[SEC-011] refuses bodies that are not JSON with 415 and accepts empty POSTs', async () => {
      for (const [path, type] of [
        ['/graphql', 'text/plain'],
        ['/v1/messages', 'application/x-www-form-urlencoded'],
        ['/v1/patients/p-1001/preferences', 'multipart/form-data; boundary=x'],
        ['/api/ehr/compositions', 'application/xml'],
      ]) {
        const res = await t.request(path.includes('preferences') ? 'PATCH' : 'POST', path, { rawBody: 'a=1', headers: { 'content-type': type } });
        expect([path, res.status, res.body]).toEqual([
          path,
          415,
          expect.objectContaining({ error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.any(String) } }),
        ]);
      }
      const noType = await t.request('POST', '/v1/messages', { rawBody: '{}' });
      expect(noType.status).toBe(415);
      const latin1 = await t.request('POST', '/v1/messages', { rawBody: '{}', headers: { 'content-type': 'application/json; charset=latin1' } });
      expect(latin1.status).toBe(415);
      // An empty POST needs no content type (it reaches routing: no such route here).
      const empty = await t.request('POST', '/v1/nothing-here', { rawBody: '' });
      expect(empty.status).toBe(404);
    });

    it('answers what the HTTP parser refuses with the contract body', async () => {
      const res = await rawRequest(t.url, 'GET /v1/templates HTTP/1.1\r\nHost: x\r\nX-Bad: a\rb\r\n\r\n');
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual(ERROR_BODY);
      const garbage = await rawRequest(t.url, 'NOT HTTP AT ALL\r\n\r\n');
      expect(garbage.status).toBe(400);
      expect(JSON.parse(garbage.body).error.code).toBe('VALIDATION_ERROR');
    });

    it('allows CORS for configured origins only, exposing the rate-limit headers', async () => {
      const preflight = await t.request('OPTIONS', '/v1/messages', {
        token: null,
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      const actual = await t.request('GET', '/v1/templates', { headers: { origin: ORIGIN } });
      expect(actual.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(actual.headers.get('access-control-expose-headers')).toMatch(/X-RateLimit-Remaining.*Retry-After/);
      expect(actual.headers.get('vary')).toMatch(/Origin/);
      const stranger = await t.request('GET', '/v1/templates', { headers: { origin: 'https://evil.example' } });
      expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
      const strangerPreflight = await t.request('OPTIONS', '/v1/messages', {
        token: null,
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(strangerPreflight.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe('GraphQL', () => {
    it('[SEC-013] refuses queries deeper than the limit', async () => {
      const res = await t.graphql('{ appointments { data { patient { messages { data { id } } } } } }');
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ message: expect.stringMatching(/deeper than 5/), extensions: { code: 'VALIDATION_ERROR' } });
      expect((await t.graphql('{ appointments { data { patient { name { family } } } } }')).status).toBe(200);
    });

    it('[SEC-013] refuses too many aliases and too costly operations', async () => {
      const aliases = `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: templates { data { id } }`).join(' ')} }`;
      const many = await t.graphql(aliases);
      expect(many.status).toBe(400);
      expect(many.body.errors[0].message).toMatch(/31 aliases/);
      const page = 'messages(limit: 100) { data { id patientId templateId channel body status createdAt updatedAt } }';
      expect((await t.graphql(`{ ${page} }`)).status).toBe(200);
      const costly = await t.graphql(`{ a: ${page} b: ${page} c: ${page} }`);
      expect(costly.status).toBe(400);
      expect(costly.body.errors[0]).toMatchObject({ message: expect.stringMatching(/cost \d+ exceeds/), extensions: { code: 'VALIDATION_ERROR' } });
      expect((await t.request('GET', '/v1/messages?limit=100')).status).toBe(200);
    });

    it('[SEC-013] refuses batched (array) requests', async () => {
      const res = await t.request('POST', '/graphql', { body: [{ query: '{ __typename }' }, { query: '{ __typename }' }] });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    });

    it('blocks GET operations that could be cross-site requests, and serves them with a preflight header', async () => {
      const path = `/graphql?query=${encodeURIComponent('{ templates { data { id } } }')}`;
      const blocked = await t.request('GET', path);
      expect(blocked.status).toBe(400);
      expect(blocked.body.errors[0]).toMatchObject({ message: expect.stringMatching(/Cross-Site Request Forgery/), extensions: { code: 'VALIDATION_ERROR' } });
      const allowed = await t.request('GET', path, { headers: { 'apollo-require-preflight': 'true' } });
      expect(allowed.status).toBe(200);
      expect(allowed.body.data.templates.data.length).toBeGreaterThan(0);
    });

    it('serves automatic persisted queries (APQ) through the gateway', async () => {
      const query = '{ templates { data { id name } } }';
      const extensions = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } };
      const unknown = await t.request('POST', '/graphql', { body: { extensions } });
      expect(unknown.body.errors[0].message).toBe('PersistedQueryNotFound');
      const register = await t.request('POST', '/graphql', { body: { query, extensions } });
      expect(register.body.data.templates.data.length).toBeGreaterThan(0);
      const byHash = await t.request('POST', '/graphql', { body: { extensions } });
      expect(byHash.body).toEqual(register.body);
      const viaGet = await t.request('GET', `/graphql?extensions=${encodeURIComponent(JSON.stringify(extensions))}`, {
        headers: { 'apollo-require-preflight': 'true' },
      });
      expect(viaGet.body).toEqual(register.body);
      const wrongHash = await t.request('POST', '/graphql', { body: { query: '{ __typename }', extensions } });
      expect(wrongHash.status).toBe(400);
    });

    it('allows introspection outside production', async () => {
      const res = await t.graphql('{ __schema { queryType { name } } }');
      expect(res.body.data.__schema.queryType.name).toBe('Query');
    });
  });

  describe('client tokens', () => {
    const secret = () => t.platform.runtime.secrets.jwtSecret!;
    const mint = (claims: { sub: string; tenants: string[]; roles?: string[] }) =>
      issueAccessToken(secret(), { roles: ['integration'], ttlSeconds: 600, ...claims });

    it('refuses the SMS provider identity, wildcard and malformed tenants on REST, GraphQL and WebSocket', async () => {
      const forged = [
        await mint({ sub: 'system:sms-provider', tenants: ['*'] }),
        await mint({ sub: 'system:sms-provider', tenants: ['acme'] }),
        await mint({ sub: 'System:seed', tenants: ['demo'], roles: ['admin'] }),
        await mint({ sub: 'someone', tenants: ['*'], roles: ['admin'] }),
        await mint({ sub: 'someone', tenants: ['demo', '*'], roles: ['admin'] }),
        await mint({ sub: 'someone', tenants: ['de mo'], roles: ['admin'] }),
        await mint({ sub: 'someone', tenants: ['../acme'], roles: ['admin'] }),
      ];
      for (const token of forged) {
        const rest = await t.request('POST', '/v1/inbound/sms', { token, body: { From: '+31612345671', Body: 'C', MessageSid: `SM${Date.now()}` } });
        expect([rest.status, rest.body]).toEqual([401, { error: { code: 'UNAUTHENTICATED', message: expect.stringMatching(/reserved|tenant/) } }]);
        const reply = await t.graphql('mutation { receiveSms(from: "+31612345671", body: "C", providerMessageId: "SM-forged") { id } }', undefined, { token });
        expect([reply.status, reply.body.errors?.[0]?.extensions?.code]).toEqual([401, 'UNAUTHENTICATED']);
        const status = await t.graphql('mutation { recordDeliveryStatus(providerMessageId: "SM-forged", status: "delivered") }', undefined, { token });
        expect([status.status, status.body.errors?.[0]?.extensions?.code]).toEqual([401, 'UNAUTHENTICATED']);
        const socket = await connectAs(t, token);
        expect((await socket.closed).code).toBe(4401);
        await socket.dispose();
      }
    });

    it('[SEC-002] refuses tokens without exp with 401 UNAUTHENTICATED', async () => {
      const endless = await new SignJWT({ tenants: ['demo'], roles: ['admin'] })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('no-exp')
        .setIssuedAt()
        .sign(secret());
      const res = await t.request('GET', '/v1/templates', { token: endless });
      expect([res.status, res.body]).toEqual([401, { error: { code: 'UNAUTHENTICATED', message: expect.stringMatching(/exp/) } }]);
      const gql = await t.graphql('{ templates { data { id } } }', undefined, { token: endless });
      expect([gql.status, gql.body.errors[0].extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
      const socket = await connectAs(t, endless);
      expect((await socket.closed).code).toBe(4401);
      await socket.dispose();
    });

    it('refuses tenants outside TENANTS with 403 FORBIDDEN on REST, GraphQL and WebSocket', async () => {
      const ghost = await t.token({ tenants: ['ghost'] });
      const created = await t.graphql('mutation { createPatient(input: { id: "p-ghost", givenNames: ["Eve"], family: "Ghost" }) { id } }', undefined, {
        token: ghost,
      });
      expect([created.status, created.body.errors[0].extensions.code]).toEqual([403, 'FORBIDDEN']);
      const rest = await t.request('GET', '/v1/templates', { token: ghost });
      expect([rest.status, rest.body]).toEqual([403, { error: { code: 'FORBIDDEN', message: expect.stringMatching(/ghost/) } }]);
      const fhir = await t.request('POST', '/fhir/R4/Patient', {
        token: ghost,
        body: { resourceType: 'Patient', name: [{ family: 'Ghost' }] },
        headers: { 'content-type': 'application/fhir+json' },
      });
      expect([fhir.status, fhir.body.resourceType]).toEqual([403, 'OperationOutcome']);
      const both = await t.token({ tenants: ['demo', 'ghost'] });
      const header = await t.request('GET', '/v1/templates', { token: both, headers: { 'x-tenant-id': 'ghost' } });
      expect([header.status, header.body.error.code]).toEqual([403, 'FORBIDDEN']);
      expect((await t.request('GET', '/v1/templates', { token: both, headers: { 'x-tenant-id': 'demo' } })).status).toBe(200);
      const socket = await connectAs(t, ghost);
      expect((await socket.closed).code).toBe(4403);
      await socket.dispose();
    });
  });

  describe('NUL bytes and invalid UTF-8', () => {
    const refusal = { error: expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/NUL|UTF-8|Unicode/) }) };

    it("refuses them in query strings and paths with 400 and the API's error body", async () => {
      for (const path of [
        '/v1/messages?patientId=%00',
        '/v1/messages?patientId=%ff%fe',
        '/v1/messages?patientId=%c0%80',
        '/v1/appointments?from=2026-11-01%00',
        '/api/ehr/audit?entityId=a%00b',
        '/v1/templates/a%00b',
        '/v1/messages%00',
      ]) {
        const res = await t.request('GET', path, { headers: { 'x-tenant-id': 'demo' } });
        expect([path, res.status, res.body]).toEqual([path, 400, expect.objectContaining(refusal)]);
      }
      for (const path of ['/fhir/R4/Patient?name=%00', '/fhir/R4/Patient?name=%e9', '/fhir/R4/Patient/p%00']) {
        const res = await t.request('GET', path);
        expect([path, res.status, res.body.resourceType, res.body.issue[0].details.text]).toEqual([path, 400, 'OperationOutcome', 'VALIDATION_ERROR']);
      }
      for (const path of ['/openehr/v1/ehr?subject_id=%00&subject_namespace=caregraph', '/openehr/v1/ehr/ehr-%ff']) {
        const res = await t.request('GET', path);
        expect([path, res.status, res.body.code]).toEqual([path, 400, 'VALIDATION_ERROR']);
      }
    });

    it('refuses them in JSON and form bodies', async () => {
      const bodies: Array<[string, string, unknown]> = [
        ['POST', '/v1/messages', { patientId: '\u0000', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-12-01', time: '09:30' } }],
        [
          'POST',
          '/v1/messages',
          {
            patientId: 'p-1001',
            templateId: 'appointment-reminder',
            channel: 'sms',
            variables: { date: '2026-12-01', time: '09:30', location: 'room\u00002' },
          },
        ],
        ['PATCH', '/v1/patients/p-1001/preferences', { language: 'n\ud800l' }],
        [
          'POST',
          '/api/ehr/compositions',
          { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: { ...VITALS, recorded_at: '2026-11-22T09:00:00Z\u0000' } },
        ],
        ['POST', '/v1/webhooks', { url: 'https://example.org/\u0000', events: ['message.sent'], secret: 'x'.repeat(16) }],
      ];
      for (const [method, path, body] of bodies) {
        const res = await t.request(method, path, { body, headers: { 'x-tenant-id': 'demo' } });
        expect([path, res.status, res.body]).toEqual([path, 400, expect.objectContaining(refusal)]);
      }
      const invalid = Buffer.concat([
        Buffer.from('{"patientId":"p-'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('","templateId":"appointment-reminder","channel":"sms"}'),
      ]);
      const raw = await t.request('POST', '/v1/messages', { rawBody: invalid, headers: { 'content-type': 'application/json' } });
      expect([raw.status, raw.body]).toEqual([400, expect.objectContaining(refusal)]);
      const fhir = await t.request('POST', '/fhir/R4/Patient', {
        body: { resourceType: 'Patient', name: [{ family: 'Nul\u0000' }] },
        headers: { 'content-type': 'application/fhir+json' },
      });
      expect([fhir.status, fhir.body.resourceType]).toEqual([400, 'OperationOutcome']);
      const form = await t.request('POST', '/fhir/R4/Patient/_search', {
        rawBody: 'name=%00',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect([form.status, form.body.resourceType]).toEqual([400, 'OperationOutcome']);
      const openehr = await t.request('POST', '/openehr/v1/ehr/ehr-p-1001/composition', {
        body: { _type: 'COMPOSITION', archetype_details: { template_id: { value: 'vital_signs.v1' } }, content: { ...VITALS, recorded_at: '\u0000' } },
      });
      expect([openehr.status, openehr.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    });

    it('refuses them in GraphQL inline strings and variables', async () => {
      for (const [query, variables] of [
        ['{ patients(search: "\\u0000") { data { id } } }', undefined],
        ['{ patients(search: "a\\ud800") { data { id } } }', undefined],
        ['query($s: String) { patients(search: $s) { data { id } } }', { s: '\u0000' }],
        ['query($id: ID!) { message(id: $id) { id } }', { id: 'm\u0000' }],
        ['mutation($input: PatientCreateInput!) { createPatient(input: $input) { id } }', { input: { id: 'p-nul', givenNames: ['A\u0000'], family: 'B' } }],
      ] as const) {
        const res = await t.graphql(query, variables);
        expect([query, res.status, res.body.errors?.[0]?.extensions?.code]).toEqual([query, 400, 'VALIDATION_ERROR']);
      }
      const socket = await connectAs(t, await t.token());
      for (const [query, variables] of [
        ['subscription { messageStatusChanged(messageId: "m\\u0000") { id } }', undefined],
        ['subscription($id: ID) { messageStatusChanged(messageId: $id) { id } }', { id: 'm\u0000' }],
      ] as const) {
        const subscription = new Subscription(socket.client, query, variables);
        expect(await subscription.until(() => subscription.error !== undefined)).toBe(true);
        expect([query, (subscription.error as any)[0].extensions.code]).toEqual([query, 'VALIDATION_ERROR']);
      }
      await socket.dispose();
    });
  });

  describe('absolute URLs', () => {
    // No PUBLIC_URL here: links use the gateway's own address, never the Host header.
    const own = () => t.platform.gateway!.url;

    it('[SEC-012] builds FHIR links, fullUrl and Location from the server, not from a forged Host', async () => {
      const token = await t.token({ roles: ['clinician'] });
      const headers = { host: 'evil.example', authorization: `Bearer ${token}` };
      const bundle = await withHost(t.url, 'GET', '/fhir/R4/Patient?_count=1', headers);
      expect(bundle.status).toBe(200);
      expect(JSON.stringify(bundle.body)).not.toContain('evil.example');
      expect(bundle.body.link.find((l: any) => l.relation === 'self').url).toMatch(new RegExp(`^${own()}/fhir/R4/Patient\\?`));
      expect(bundle.body.entry[0].fullUrl).toMatch(new RegExp(`^${own()}/fhir/R4/Patient/`));
      const created = await withHost(
        t.url,
        'POST',
        '/fhir/R4/Patient',
        { ...headers, 'content-type': 'application/fhir+json' },
        {
          resourceType: 'Patient',
          name: [{ family: 'Host', given: ['Eva'] }],
          gender: 'female',
          birthDate: '1990-02-03',
          telecom: [{ system: 'phone', value: '+31611112223' }],
        },
      );
      expect([created.status, created.body]).toEqual([201, expect.objectContaining({ resourceType: 'Patient' })]);
      expect(created.headers.location).toBe(`${own()}/fhir/R4/Patient/${created.body.id}/_history/1`);
      const metadata = await withHost(t.url, 'GET', '/fhir/R4/metadata', headers);
      expect(JSON.stringify(metadata.body)).not.toContain('evil.example');
    });

    it('[SEC-012] builds openEHR and /api/ehr Location headers without the Host header', async () => {
      const token = await t.token({ roles: ['clinician'] });
      const headers = { host: 'evil.example', authorization: `Bearer ${token}`, 'x-tenant-id': 'demo' };
      const openehr = await withHost(t.url, 'POST', '/openehr/v1/ehr/ehr-p-1001/composition', headers, {
        _type: 'COMPOSITION',
        archetype_details: { template_id: { value: 'vital_signs.v1' } },
        content: VITALS,
      });
      expect(openehr.status).toBe(201);
      expect(openehr.headers.location).toMatch(new RegExp(`^${own()}/openehr/v1/ehr/ehr-p-1001/composition/`));
      const ehr = await withHost(t.url, 'POST', '/api/ehr/compositions', headers, { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS });
      expect(ehr.status).toBe(201);
      expect(ehr.headers.location).toMatch(/^\/api\/ehr\/compositions\//);
    });
  });
});

describe('production settings: TLS 1.3, HSTS, no introspection, request deadline, no demo data, trusted proxy', () => {
  let t: TestPlatform;
  let dir: string;
  let cert: Buffer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'caregraph-tls-'));
    cert = Buffer.from(makeCertificate(dir).cert);
    writeFileSync(join(dir, 'ok'), '');
    t = await startTestPlatform({
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: 'a-production-secret-of-at-least-32-characters',
      ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      AUDIT_HMAC_KEY: Buffer.alloc(32, 8).toString('base64'),
      TLS_CERT_FILE: join(dir, 'cert.pem'),
      TLS_KEY_FILE: join(dir, 'key.pem'),
      REQUEST_TIMEOUT_MS: '1500',
      TENANTS: 'demo,acme',
      TRUST_PROXY: 'true',
    });
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const tls = (path: string, options: https.RequestOptions & { body?: string } = {}) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: any }>((resolve, reject) => {
      const req = https.request(`${t.url}${path}`, { ca: cert, ...options }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
      });
      req.on('error', reject);
      req.end(options.body);
    });

  it('[SEC-010] listens with TLS 1.3 only and sends HSTS', async () => {
    expect(t.url).toMatch(/^https:\/\//);
    const health = await tls('/healthz');
    expect(health.status).toBe(200);
    expect(health.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    await expect(tls('/healthz', { maxVersion: 'TLSv1.2' })).rejects.toThrow(/version|alert|handshake/i);
  });

  it('refuses introspection in production', async () => {
    const token = await t.token();
    const res = await tls('/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body)).not.toMatch(/stacktrace/i);
  });

  const gql = async (query: string, token: string) =>
    tls('/graphql', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });

  it('[OPS-004] seeds no demo data into an empty database', async () => {
    const token = await t.token();
    const res = await gql('{ patients { data { id } } templates { data { id } } }', token);
    expect(res.body.data).toEqual({ patients: { data: [] }, templates: { data: [] } });
  });

  it('gives no "Did you mean" suggestions that reveal the schema', async () => {
    const token = await t.token();
    const res = await gql('{ patient(id: "p-1001") { nam { family } } pattients { data { id } } }', token);
    expect(res.status).toBe(400);
    expect(res.body.errors.length).toBe(2);
    expect(res.body.errors.map((e: any) => e.message).join('\n')).not.toMatch(/Did you mean|"name"|"patients"/);
  });

  it('refuses tenants outside TENANTS with 403 FORBIDDEN', async () => {
    const ghost = await t.token({ tenants: ['ghost'] });
    const res = await gql('mutation { createPatient(input: { id: "p-ghost", givenNames: ["Eve"], family: "Ghost" }) { id } }', ghost);
    expect([res.status, res.body.errors[0].extensions.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('takes absolute URLs from X-Forwarded-Host/Proto when TRUST_PROXY is on, never from Host', async () => {
    const token = await t.token();
    const headers = { authorization: `Bearer ${token}` };
    // servername: TLS would otherwise take the name to verify from the Host header.
    const proxied = await tls('/fhir/R4/Patient', {
      servername: 'localhost',
      headers: { ...headers, host: 'evil.example', 'x-forwarded-host': 'caregraph.example.org', 'x-forwarded-proto': 'https' },
    });
    expect(proxied.body.link[0].url).toMatch(/^https:\/\/caregraph\.example\.org\/fhir\/R4\/Patient/);
    const direct = await tls('/fhir/R4/Patient', { servername: 'localhost', headers: { ...headers, host: 'evil.example' } });
    expect(direct.body.link[0].url.startsWith(`${t.platform.gateway!.url}/fhir/R4/Patient`)).toBe(true);
    const bad = await tls('/fhir/R4/Patient', { headers: { ...headers, 'x-forwarded-host': 'evil.example/x?y' } });
    expect(JSON.stringify(bad.body)).not.toContain('evil.example');
  });

  it('answers a request that does not complete in time with 503 SERVICE_UNAVAILABLE', async () => {
    const token = await t.token();
    // A body that never finishes arriving: the deadline answers, not the parser.
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = https.request(
        `${t.url}/v1/messages`,
        {
          ca: cert,
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': '100' },
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
        },
      );
      req.on('error', reject);
      req.write('{"patientId":');
    });
    expect(res).toEqual({ status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/1500 ms/) } } });
    expect((await tls('/healthz')).status).toBe(200);
  });
});
