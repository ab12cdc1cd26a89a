import { createRemoteJWKSet, jwtVerify, SignJWT, errors as joseErrors, JWTPayload } from 'jose';
import { z } from 'zod';
import { AppError } from '../errors';
import type { Config } from '../config';
import type { Secrets } from '../secrets';
import { ROLES, type Identity, type Principal } from './principal';

const claimsSchema = z.object({
  sub: z.string().min(1),
  tenants: z.array(z.string().min(1)).max(100),
  roles: z.array(z.enum(ROLES)).min(1),
  patientId: z.string().min(1).optional(),
  exp: z.number().optional(),
});

export type AccessTokenVerifier = (token: string) => Promise<Principal>;

/** Verifies bearer tokens: HS256 with the configured (or dev) secret, or RS/ES keys from a JWKS URL. */
export function createAccessTokenVerifier(config: Config, secrets: Secrets): AccessTokenVerifier {
  const options = { issuer: config.AUTH_ISSUER, audience: config.AUTH_AUDIENCE };
  const jwks = config.AUTH_JWKS_URL ? createRemoteJWKSet(new URL(config.AUTH_JWKS_URL)) : undefined;
  return async (token) => {
    let payload: JWTPayload;
    try {
      payload = jwks
        ? (await jwtVerify(token, jwks, options)).payload
        : (await jwtVerify(token, secrets.jwtSecret!, { ...options, algorithms: ['HS256'] })).payload;
    } catch (err) {
      const reason = err instanceof joseErrors.JWTExpired ? 'the token has expired' : 'the token could not be verified';
      throw new AppError('UNAUTHENTICATED', `Invalid bearer token: ${reason}`);
    }
    const claims = claimsSchema.safeParse(payload);
    if (!claims.success) {
      throw new AppError('UNAUTHENTICATED', 'Invalid bearer token: claims sub, tenants and roles are required');
    }
    if (claims.data.roles.includes('patient') && !claims.data.patientId) {
      throw new AppError('UNAUTHENTICATED', 'Invalid bearer token: the patient role needs a patientId claim');
    }
    return claims.data;
  };
}

export interface TokenRequest {
  sub: string;
  tenants: string[];
  roles: string[];
  patientId?: string;
  ttlSeconds: number;
}

/** Issues an HS256 access token (the dev `npm run token` command and the tests). */
export async function issueAccessToken(secret: Uint8Array, request: TokenRequest, config?: Pick<Config, 'AUTH_ISSUER' | 'AUTH_AUDIENCE'>): Promise<string> {
  const jwt = new SignJWT({ tenants: request.tenants, roles: request.roles, ...(request.patientId ? { patientId: request.patientId } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(request.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + request.ttlSeconds);
  if (config?.AUTH_ISSUER) jwt.setIssuer(config.AUTH_ISSUER);
  if (config?.AUTH_AUDIENCE) jwt.setAudience(config.AUTH_AUDIENCE);
  return jwt.sign(secret);
}

/**
 * The gateway tells subgraphs who is calling with a short-lived token signed by
 * a key only CareGraph processes hold, so a client that reaches a subgraph
 * directly cannot claim another identity or tenant.
 */
export const IDENTITY_HEADER = 'x-caregraph-identity';
const INTERNAL_AUDIENCE = 'caregraph-subgraph';

const identitySchema = z.object({
  sub: z.string(),
  tenantId: z.string(),
  roles: z.array(z.enum(ROLES)),
  patientId: z.string().optional(),
});

export async function signIdentity(key: Uint8Array, identity: Identity, ttlSeconds = 300): Promise<string> {
  return new SignJWT({ tenantId: identity.tenantId, roles: identity.roles, ...(identity.patientId ? { patientId: identity.patientId } : {}) })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(identity.sub)
    .setAudience(INTERNAL_AUDIENCE)
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(key);
}

export async function verifyIdentity(key: Uint8Array, token: string): Promise<Identity> {
  try {
    const { payload } = await jwtVerify(token, key, { audience: INTERNAL_AUDIENCE, algorithms: ['HS256'] });
    return identitySchema.parse(payload);
  } catch {
    throw new AppError('UNAUTHENTICATED', 'Missing or invalid caller identity');
  }
}
