import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config';
import type { Secrets } from '../secrets';
import { createAccessTokenVerifier, issueAccessToken, signIdentity, verifyIdentity } from './tokens';

const secret = new TextEncoder().encode('s'.repeat(32));
const secrets: Secrets = { jwtSecret: secret, encryptionKey: randomBytes(32), internalKey: randomBytes(32), source: 'environment' };

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

  it('checks issuer and audience when configured', async () => {
    const strict = createAccessTokenVerifier(loadConfig({ AUTH_ISSUER: 'https://id.example', AUTH_AUDIENCE: 'caregraph' }), secrets);
    const wrong = await issueAccessToken(secret, { sub: 'x', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 });
    await expect(strict(wrong)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const right = await issueAccessToken(secret, { sub: 'x', tenants: ['demo'], roles: ['admin'], ttlSeconds: 60 }, { AUTH_ISSUER: 'https://id.example', AUTH_AUDIENCE: 'caregraph' });
    await expect(strict(right)).resolves.toMatchObject({ sub: 'x' });
  });
});

describe('gateway identity header', () => {
  it('round-trips and cannot be forged with an access-token key', async () => {
    const identity = { sub: 'u', tenantId: 'demo', roles: ['clinician' as const] };
    await expect(verifyIdentity(secrets.internalKey, await signIdentity(secrets.internalKey, identity))).resolves.toEqual(identity);
    const forged = await signIdentity(secret, identity);
    await expect(verifyIdentity(secrets.internalKey, forged)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
