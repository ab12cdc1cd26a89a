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

  it('says why a token is refused: another key (naming the one it verifies with), a claim, a malformed token', async () => {
    const dev = createAccessTokenVerifier(loadConfig({ DATA_DIR: '/srv/caregraph-a' }), secrets);
    const minted = await issueAccessToken(randomBytes(32), { sub: 'x', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 });
    await expect(dev(minted)).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      message: expect.stringMatching(/signature does not match the development secret in \/srv\/caregraph-a\/dev-secrets\.json .*another DATA_DIR/),
    });
    const configured = createAccessTokenVerifier(loadConfig({ AUTH_JWT_SECRET: 's'.repeat(32), AUTH_ISSUER: 'https://idp.example' }), secrets);
    await expect(configured(minted)).rejects.toMatchObject({ message: expect.stringMatching(/does not match AUTH_JWT_SECRET/) });
    const unissued = await issueAccessToken(secret, { sub: 'x', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 });
    await expect(configured(unissued)).rejects.toMatchObject({ message: expect.stringMatching(/its iss claim does not match/) });
    await expect(verify('not.a.jwt')).rejects.toMatchObject({ message: expect.stringMatching(/not a well-formed JWT/) });
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

  it('refuses tokens that live longer than AUTH_MAX_TOKEN_LIFETIME (default 30 days), counted from iat or from now', async () => {
    const now = Math.floor(Date.now() / 1000);
    const mint = (times: { iat?: number; exp: number }) => {
      const jwt = new SignJWT({ tenants: ['demo'], roles: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setExpirationTime(times.exp);
      if (times.iat !== undefined) jwt.setIssuedAt(times.iat);
      return jwt.sign(secret);
    };
    const tooLong = { code: 'UNAUTHENTICATED', message: "Invalid bearer token: the token's lifetime exceeds the maximum of 30d" };
    const day = 86_400;
    await expect(verify(await mint({ iat: now, exp: Math.floor(Date.UTC(33658, 0, 1) / 1000) }))).rejects.toMatchObject(tooLong);
    await expect(verify(await mint({ iat: now, exp: now + 30 * day + 1 }))).rejects.toMatchObject(tooLong);
    await expect(verify(await mint({ exp: now + 31 * day }))).rejects.toMatchObject(tooLong);
    // A later iat does not make a far exp short: what counts is how long the token works from now.
    await expect(verify(await mint({ iat: now + 400 * day, exp: now + 400 * day + 60 }))).rejects.toMatchObject(tooLong);
    // Issued a little earlier, within the bound: fine; an iat in the past counts from iat.
    await expect(verify(await mint({ iat: now - 10, exp: now - 10 + 30 * day }))).resolves.toMatchObject({ sub: 'x' });
    await expect(verify(await mint({ iat: now - 2 * day, exp: now + 29 * day }))).rejects.toMatchObject(tooLong);
    await expect(verify(await mint({ exp: now + 30 * day - 5 }))).resolves.toMatchObject({ sub: 'x' });

    const hourly = createAccessTokenVerifier(loadConfig({ AUTH_MAX_TOKEN_LIFETIME: '1h' }), secrets);
    await expect(hourly(await mint({ iat: now, exp: now + 3601 }))).rejects.toMatchObject({ message: expect.stringMatching(/maximum of 1h$/) });
    await expect(hourly(await mint({ iat: now, exp: now + 3600 }))).resolves.toMatchObject({ sub: 'x' });
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
  const thirtyDays = 2_592_000;
  it.each([
    ['12h', 43_200],
    ['90m', 5_400],
    ['30d', 2_592_000],
    ['720h', 2_592_000],
  ])('%s', (text, seconds) => expect(parseTokenLifetime(text, thirtyDays)).toBe(seconds));

  it('refuses more than the maximum, zero and non-durations with a clear message', () => {
    expect(() => parseTokenLifetime('31d', thirtyDays)).toThrow("'31d' is too long: tokens live at most 30d (AUTH_MAX_TOKEN_LIFETIME)");
    expect(() => parseTokenLifetime('721h', thirtyDays)).toThrow(/at most 30d/);
    expect(() => parseTokenLifetime('13h', 43_200)).toThrow(/at most 12h/);
    expect(() => parseTokenLifetime('0s', thirtyDays)).toThrow(/at least 1 second/);
    expect(() => parseTokenLifetime('forever', thirtyDays)).toThrow(/not a duration/);
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
