import { randomBytes } from 'node:crypto';
import { IdentityTokenSigner, IdentityTokenVerifier } from './identity-cache';
import { signIdentity, verifyIdentity } from './tokens';
import type { Identity } from './principal';

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
