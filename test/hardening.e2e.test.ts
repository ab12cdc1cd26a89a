import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestPlatform, backendName, type TestPlatform } from './harness';

const ORIGIN = 'https://app.example.org';
const CONTRACT_BODY = { error: { code: expect.any(String), message: expect.any(String) } };

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

describe(`API hardening (${backendName})`, () => {
  let t: TestPlatform;
  beforeAll(async () => {
    // Low GraphQL limits: the current schema nests at most 6 levels (the rule itself is unit-tested at the defaults).
    t = await startTestPlatform({ CORS_ORIGINS: `${ORIGIN},http://localhost:5173`, GRAPHQL_MAX_DEPTH: '5', GRAPHQL_MAX_COST: '2000' });
  });
  afterAll(() => t?.stop());

  describe('HTTP', () => {
    it('sends security headers on API, error and health answers', async () => {
      for (const res of [await t.request('GET', '/v1/templates'), await t.request('GET', '/nowhere'), await t.request('GET', '/healthz', { token: null }), await t.graphql('{ __typename }')]) {
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        expect(res.headers.get('referrer-policy')).toBe('no-referrer');
        expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
        expect(res.headers.get('cache-control')).toBe('no-store');
        expect(res.headers.get('strict-transport-security')).toBeNull();
        expect(res.headers.get('x-powered-by')).toBeNull();
      }
    });

    it('refuses bodies over 1 MiB with 413, declared or streamed', async () => {
      const big = JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(1024 * 1024) } });
      for (const path of ['/graphql', '/v1/messages', '/api/ehr/compositions']) {
        const res = await t.request('POST', path, { rawBody: big, headers: { 'content-type': 'application/json' } });
        expect([path, res.status, res.body]).toEqual([path, 413, expect.objectContaining({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } })]);
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

    it('refuses bodies that are not JSON with 415 and accepts empty POSTs', async () => {
      for (const [path, type] of [
        ['/graphql', 'text/plain'],
        ['/v1/messages', 'application/x-www-form-urlencoded'],
        ['/v1/patients/p-1001/preferences', 'multipart/form-data; boundary=x'],
        ['/api/ehr/compositions', 'application/xml'],
      ]) {
        const res = await t.request(path.includes('preferences') ? 'PATCH' : 'POST', path, { rawBody: 'a=1', headers: { 'content-type': type } });
        expect([path, res.status, res.body]).toEqual([path, 415, expect.objectContaining({ error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.any(String) } })]);
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
      expect(JSON.parse(res.body)).toEqual(CONTRACT_BODY);
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
      const strangerPreflight = await t.request('OPTIONS', '/v1/messages', { token: null, headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(strangerPreflight.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  describe('GraphQL', () => {
    it('refuses queries deeper than the limit', async () => {
      const res = await t.graphql('{ appointments { data { patient { messages { data { id } } } } } }');
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ message: expect.stringMatching(/deeper than 5/), extensions: { code: 'VALIDATION_ERROR' } });
      expect((await t.graphql('{ appointments { data { patient { name { family } } } } }')).status).toBe(200);
    });

    it('refuses too many aliases and too costly operations', async () => {
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

    it('refuses batched (array) requests', async () => {
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
      const viaGet = await t.request('GET', `/graphql?extensions=${encodeURIComponent(JSON.stringify(extensions))}`, { headers: { 'apollo-require-preflight': 'true' } });
      expect(viaGet.body).toEqual(register.body);
      const wrongHash = await t.request('POST', '/graphql', { body: { query: '{ __typename }', extensions } });
      expect(wrongHash.status).toBe(400);
    });

    it('allows introspection outside production', async () => {
      const res = await t.graphql('{ __schema { queryType { name } } }');
      expect(res.body.data.__schema.queryType.name).toBe('Query');
    });
  });
});

describe('production settings: TLS 1.3, HSTS, no introspection, request deadline', () => {
  let t: TestPlatform;
  let dir: string;
  let cert: Buffer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'caregraph-tls-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    cert = execFileSync('cat', [join(dir, 'cert.pem')]);
    writeFileSync(join(dir, 'ok'), '');
    t = await startTestPlatform({
      NODE_ENV: 'production',
      AUTH_JWT_SECRET: 'a-production-secret-of-at-least-32-characters',
      ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      TLS_CERT_FILE: join(dir, 'cert.pem'),
      TLS_KEY_FILE: join(dir, 'key.pem'),
      REQUEST_TIMEOUT_MS: '1500',
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

  it('listens with TLS 1.3 only and sends HSTS', async () => {
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

  it('answers a request that does not complete in time with 503 SERVICE_UNAVAILABLE', async () => {
    const token = await t.token();
    // A body that never finishes arriving: the deadline answers, not the parser.
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = https.request(`${t.url}/v1/messages`, {
        ca: cert,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': '100' },
      }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () => resolve({ status: r.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
      });
      req.on('error', reject);
      req.write('{"patientId":');
    });
    expect(res).toEqual({ status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/1500 ms/) } } });
    expect((await tls('/healthz')).status).toBe(200);
  });
});
