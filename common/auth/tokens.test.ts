import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config';
import type { Secrets } from '../secrets';
import { SignJWT } from 'jose';
import { systemClock } from '../clock';
import { createAccessTokenVerifier, issueAccessToken, parseTokenLifetime, signIdentity, verifyIdentity } from './tokens';

const secret = new TextEncoder().encode('s'.repeat(32));
const secrets: Secrets = { jwtSecret: secret, encryptionKey: randomBytes(32), auditKey: randomBytes(32), internalKey: randomBytes(32), source: 'environment' };

describe('access tokens', () => {
  const verify = createAccessTokenVerifier(loadConfig({}), secrets);

  it('accepts a token with the contract claims', async () => {
    const token = await issueAccessToken(secret, { sub: 'nurse-1', tenants: ['demo'], roles: ['nurse'], ttlSeconds: 60 });
    await expect(verify(token)).resolves.toMatchObject({ sub: 'nurse-1', tenants: ['demo'], roles: ['nurse'] });
  });

  it('rejects other keys, unknown roles and patient tokens without patientId', async () => {
    const other = await issueAccessToken(randomBytes(32), { sub: 'x', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 });
    await expect(verify(other)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const badRole = await issueAccessToken(secret, { sub: 'x', tenants: ['demo'], roles: ['root'], ttlSeconds: 60 });
    await expect(verify(badRole)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const patient = await issueAccessToken(secret, { sub: 'x', tenants: ['demo'], roles: ['patient'], ttlSeconds: 60 });
    await expect(verify(patient)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('refuses reserved subjects, wildcard tenants and malformed tenant ids', async () => {
    for (const [sub, tenants] of [
      ['system:sms-provider', ['*']],
      ['system:sms-provider', ['demo']],
      ['SYSTEM:seed', ['demo']],
      ['x', ['*']],
      ['x', ['demo', '*']],
      ['x', ['de mo']],
      ['x', ['demo\u0000']],
      ['x', ['a'.repeat(65)]],
    ] as const) {
      const token = await issueAccessToken(secret, { sub, tenants: [...tenants], roles: ['integration'], ttlSeconds: 60 });
      await expect(verify(token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/reserved|tenant id/) });
    }
    const ok = await issueAccessToken(secret, { sub: 'systems:ok', tenants: ['demo', 'acme.eu_1-x'], roles: ['admin'], ttlSeconds: 60 });
    await expect(verify(ok)).resolves.toMatchObject({ sub: 'systems:ok' });
  });

  it('checks expiry against the clock it is given', async () => {
    let offsetMs = 0;
    const clock = { ...systemClock, now: () => new Date(Date.now() + offsetMs) };
    const onClock = createAccessTokenVerifier(loadConfig({}), secrets, clock);
    const token = await issueAccessToken(secret, { sub: 'x', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 });
    await expect(onClock(token)).resolves.toMatchObject({ sub: 'x' });
    offsetMs = 61_000;
    await expect(onClock(token)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/expired/) });
  });

  it('requires exp', async () => {
    const endless = await new SignJWT({ tenants: ['demo'], roles: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('x').sign(secret);
    await expect(verify(endless)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringMatching(/exp/) });
  });

  it('checks issuer and audience when configured', async () => {
    const strict = createAccessTokenVerifier(loadConfig({ AUTH_ISSUER: 'https://id.example', AUTH_AUDIENCE: 'caregraph' }), secrets);
    const wrong = await issueAccessToken(secret, { sub: 'x', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 });
    await expect(strict(wrong)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const right = await issueAccessToken(
      secret,
      { sub: 'x', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 },
      { AUTH_ISSUER: 'https://id.example', AUTH_AUDIENCE: 'caregraph' },
    );
    await expect(strict(right)).resolves.toMatchObject({ sub: 'x' });
  });
});

describe("parseTokenLifetime (the token command's --ttl)", () => {
  it.each([
    ['12h', 43_200],
    ['90m', 5_400],
    ['30d', 2_592_000],
    ['720h', 2_592_000],
  ])('%s', (text, seconds) => expect(parseTokenLifetime(text)).toBe(seconds));

  it('refuses more than 30 days, zero and non-durations with a clear message', () => {
    expect(() => parseTokenLifetime('31d')).toThrow(/at most 30 days/);
    expect(() => parseTokenLifetime('721h')).toThrow(/at most 30 days/);
    expect(() => parseTokenLifetime('0s')).toThrow(/at least 1 second/);
    expect(() => parseTokenLifetime('forever')).toThrow(/not a duration/);
  });
});

describe('gateway identity header', () => {
  it('round-trips and cannot be forged with an access-token key', async () => {
    const identity = { sub: 'u', tenantId: 'demo', roles: ['clinician' as const] };
    await expect(verifyIdentity(secrets.internalKey, await signIdentity(secrets.internalKey, identity))).resolves.toEqual(identity);
    const forged = await signIdentity(secret, identity);
    await expect(verifyIdentity(secrets.internalKey, forged)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it("carries the token's OAuth client, from which the clinical record tells an AI agent", async () => {
    const identity = { sub: 'u', tenantId: 'demo', roles: ['clinician' as const], clientId: 'claude-desktop' };
    await expect(verifyIdentity(secrets.internalKey, await signIdentity(secrets.internalKey, identity))).resolves.toEqual(identity);
  });
});
