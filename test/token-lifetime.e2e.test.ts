import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { connectAs } from './subscriptions.helpers';
import { startTestPlatform, backendName, type TestPlatform } from './harness';

/**
 * A bearer token is refused when it was made to live longer than
 * AUTH_MAX_TOKEN_LIFETIME (default 30 days), on every surface: REST, GraphQL
 * over HTTP and WebSocket, MCP. A far `exp` is otherwise a key that never
 * expires in practice.
 */
const DAY = 86_400;
const YEAR_33658 = Math.floor(Date.UTC(33658, 0, 1) / 1000);

describe(`token lifetime bound (${backendName})`, () => {
  let t: TestPlatform;
  const now = () => Math.floor(Date.now() / 1000);
  const mint = (times: { iat?: number; exp: number }) => {
    const jwt = new SignJWT({ tenants: ['demo'], roles: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('long-lived').setExpirationTime(times.exp);
    if (times.iat !== undefined) jwt.setIssuedAt(times.iat);
    return jwt.sign(t.platform.runtime.secrets.jwtSecret!);
  };
  const refusal = { error: { code: 'UNAUTHENTICATED', message: expect.stringMatching(/lifetime exceeds the maximum of 30d/) } };

  beforeAll(async () => {
    t = await startTestPlatform();
  });
  afterAll(() => t?.stop());

  it('[SEC-002] refuses a token with exp in the year 33658 on REST, GraphQL, WebSocket and MCP with 401 UNAUTHENTICATED', async () => {
    const token = await mint({ iat: now(), exp: YEAR_33658 });
    const rest = await t.request('GET', '/v1/templates', { token });
    expect([rest.status, rest.body]).toEqual([401, refusal]);
    const ehr = await t.request('GET', '/openehr/v1/definition/template/adl1.4', { token });
    expect([ehr.status, ehr.body.error]).toEqual([401, refusal.error]);
    const gql = await t.graphql('{ templates { data { id } } }', undefined, { token });
    expect([gql.status, gql.body.errors[0].extensions.code, gql.body.errors[0].message]).toEqual([401, 'UNAUTHENTICATED', refusal.error.message]);
    const socket = await connectAs(t, token);
    expect(await socket.closed).toEqual({ code: 4401, reason: expect.stringMatching(/lifetime exceeds the maximum/) });
    await socket.dispose();
    const mcp = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(mcp.status).toBe(401);
    expect(JSON.stringify(await mcp.json())).toMatch(/lifetime exceeds the maximum of 30d/);
  });

  it('counts from now when iat is missing or later than now, so neither stretches the bound', async () => {
    for (const times of [{ exp: now() + 31 * DAY }, { iat: YEAR_33658 - 3600, exp: YEAR_33658 }]) {
      const res = await t.request('GET', '/v1/templates', { token: await mint(times) });
      expect([res.status, res.body]).toEqual([401, refusal]);
    }
  });

  it('accepts a token of exactly the maximum, and one without iat within it', async () => {
    const issued = now();
    for (const times of [{ iat: issued, exp: issued + 30 * DAY }, { exp: issued + 29 * DAY }]) {
      expect((await t.request('GET', '/v1/templates', { token: await mint(times) })).status).toBe(200);
    }
  });

  it('makes the token command refuse a --ttl over AUTH_MAX_TOKEN_LIFETIME with a clear message', () => {
    const run = (ttl: string) =>
      spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'bin', 'token.js'), '--tenant', 'demo', '--role', 'admin', '--ttl', ttl], {
        env: { PATH: process.env.PATH, AUTH_JWT_SECRET: 'k'.repeat(32), AUTH_MAX_TOKEN_LIFETIME: '7d' },
        encoding: 'utf8',
      });
    const tooLong = run('8d');
    expect(tooLong.status).toBe(2);
    expect(tooLong.stderr).toMatch(/--ttl: '8d' is too long: tokens live at most 7d \(AUTH_MAX_TOKEN_LIFETIME\)/);
    const within = run('7d');
    expect([within.status, within.stderr]).toEqual([0, '']);
    expect(within.stdout.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});
