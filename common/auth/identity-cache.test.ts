import { randomBytes } from 'node:crypto';
import { cachingAccessTokenVerifier, IdentityTokenSigner, IdentityTokenVerifier } from './identity-cache';
import { createAccessTokenVerifier, issueAccessToken, signIdentity, verifyIdentity } from './tokens';
import type { Identity } from './principal';
import { loadConfig } from '../config';
import { resolveSecrets } from '../secrets';

const key = new Uint8Array(randomBytes(32));
const alice: Identity = { sub: 'alice', tenantId: 'demo', roles: ['clinician'] };

describe('IdentityTokenSigner', () => {
  it('reuses one token per caller and tenant until shortly before it expires', async () => {
    let now = Date.now();
    const signer = new IdentityTokenSigner(key, () => now);
    const pending = signer.sign(alice);
    const first = await pending;
    await expect(verifyIdentity(key, first)).resolves.toEqual(alice);
    expect(signer.sign({ ...alice })).toBe(pending);
    expect(await signer.sign({ ...alice, tenantId: 'acme' })).not.toBe(first);
    expect(await signer.sign({ ...alice, roles: ['admin'] })).not.toBe(first);
    expect(await signer.sign({ ...alice, clientId: 'claude-desktop' })).not.toBe(first);
    expect(await signer.sign({ ...alice, sub: 'patient', roles: ['patient'], patientId: 'p-1' })).not.toBe(first);
    now += 241_000; // past the refresh point (5 min lifetime, renewed a minute early)
    const renewed = signer.sign(alice);
    expect(renewed).not.toBe(pending);
    expect(signer.sign(alice)).toBe(renewed);
    await expect(verifyIdentity(key, await renewed)).resolves.toEqual(alice);
  });
});

describe('IdentityTokenVerifier', () => {
  it('verifies a token once and refuses forged ones every time', async () => {
    const verifier = new IdentityTokenVerifier(key);
    const token = await signIdentity(key, alice);
    await expect(verifier.verify(token)).resolves.toEqual(alice);
    await expect(verifier.verify(token)).resolves.toEqual(alice);
    const forged = await signIdentity(new Uint8Array(randomBytes(32)), alice);
    await expect(verifier.verify(forged)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(verifier.verify(forged)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('refuses an expired token', async () => {
    const verifier = new IdentityTokenVerifier(key);
    const expired = await signIdentity(key, alice, -10);
    await expect(verifier.verify(expired)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});

describe('cachingAccessTokenVerifier', () => {
  const secrets = resolveSecrets(loadConfig({}));
  const real = createAccessTokenVerifier(loadConfig({}), secrets);

  function counting() {
    const calls: string[] = [];
    return { calls, verify: (token: string) => (calls.push(token), real(token)) };
  }

  it('verifies a token once, then trusts it for a minute at most', async () => {
    let now = Date.now();
    const { calls, verify } = counting();
    const cached = cachingAccessTokenVerifier(verify, () => now);
    const token = await issueAccessToken(secrets.jwtSecret!, { sub: 'alice', tenants: ['demo'], roles: ['clinician'], ttlSeconds: 3600 });
    await expect(cached(token)).resolves.toMatchObject({ sub: 'alice' });
    await expect(cached(token)).resolves.toMatchObject({ sub: 'alice' });
    expect(calls).toHaveLength(1);
    now += 61_000;
    await cached(token);
    expect(calls).toHaveLength(2);
  });

  it('never serves a token past its expiry, and does not cache failures', async () => {
    let now = Date.now();
    const { calls, verify } = counting();
    const cached = cachingAccessTokenVerifier(verify, () => now);
    const token = await issueAccessToken(secrets.jwtSecret!, { sub: 'alice', tenants: ['demo'], roles: ['clinician'], ttlSeconds: 30 });
    await cached(token);
    now += 31_000;
    // The verifier itself reads the real clock, so this call reaches it: the cache gave nothing past `exp`.
    await cached(token).catch(() => {});
    expect(calls).toHaveLength(2);
    await expect(cached('not.a.token')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(cached('not.a.token')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(calls.filter((t) => t === 'not.a.token')).toHaveLength(2);
  });
});
