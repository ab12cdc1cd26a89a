import { createRemoteJWKSet, jwtVerify, SignJWT, errors as joseErrors, JWTPayload } from 'jose';
import { z } from 'zod';
import { AppError } from '../errors';
import { formatLifetime, parseLifetime, type Config } from '../config';
import { resolve } from 'node:path';
import { devSecretsPath, type Secrets } from '../secrets';
import { systemClock, type Clock } from '../clock';
import { isReservedSubject, ROLES, TENANT_ID, type Identity, type Principal } from './principal';

const claimsSchema = z.object({
  sub: z.string().min(1),
  tenants: z.array(z.string().min(1)).max(100),
  roles: z.array(z.enum(ROLES)).min(1),
  patientId: z.string().min(1).optional(),
  client_id: z.string().min(1).max(200).optional(),
  azp: z.string().min(1).max(200).optional(),
  scope: z.string().max(4000).optional(),
  /** RFC 8693: the party acting for `sub` (an agent or integration acting for the person the token is about). */
  act: z.object({ sub: z.string().min(1).max(200) }).optional(),
  exp: z.number().optional(),
  iat: z.number().optional(),
});

/** How far ahead of this server's clock an issuer's may run without its tokens' lifetimes counting from now. */
const CLOCK_SKEW_SECONDS = 60;

/**
 * What a client token may not claim: checked here, at the one place every surface (REST, GraphQL, WebSocket,
 * MCP) verifies tokens. The lifetime counts from `iat`, but never from later than now: a missing or future
 * `iat` must not stretch how long the token works.
 */
function claimProblem(claims: z.infer<typeof claimsSchema>, now: number, maxLifetime: number): string | undefined {
  if (claims.exp === undefined) return 'the exp claim is required (tokens must expire)';
  const start = claims.iat === undefined ? now : Math.min(claims.iat, now + CLOCK_SKEW_SECONDS);
  if (claims.exp - start > maxLifetime) return `the token's lifetime exceeds the maximum of ${formatLifetime(maxLifetime)}`;
  if (isReservedSubject(claims.sub) || (claims.act && isReservedSubject(claims.act.sub))) return `subjects starting with 'system:' are reserved`;
  const bad = claims.tenants.find((tenant) => !TENANT_ID.test(tenant));
  if (bad !== undefined) return `${JSON.stringify(bad).slice(0, 70)} is not a valid tenant id`;
  if (claims.roles.includes('patient') && !claims.patientId) return 'the patient role needs a patientId claim';
  return undefined;
}

export type AccessTokenVerifier = (token: string) => Promise<Principal>;

/** The key tokens are verified with, in words an operator acts on (the token command names it too). */
export function tokenKeyOrigin(config: Pick<Config, 'AUTH_JWKS_URL' | 'AUTH_JWT_SECRET' | 'DATA_DIR'>): string {
  if (config.AUTH_JWKS_URL) return 'the keys at AUTH_JWKS_URL';
  if (config.AUTH_JWT_SECRET) return 'AUTH_JWT_SECRET';
  return `the development secret in ${resolve(devSecretsPath(config.DATA_DIR))}`;
}

/** Why jose refused a token: a caller (or the developer who minted it) can tell a wrong key from a wrong claim. */
function verificationFailure(err: unknown, config: Config): string {
  if (err instanceof joseErrors.JWTExpired) return 'the token has expired';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed || err instanceof joseErrors.JWKSNoMatchingKey)
    return `its signature does not match ${tokenKeyOrigin(config)} (a token minted with another secret, such as npm run token with another DATA_DIR, is refused)`;
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `its ${err.claim} claim does not match this server's (${err.reason})`;
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'it is signed with an algorithm this server does not accept';
  if (err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid) return 'it is not a well-formed JWT';
  return 'the token could not be verified';
}

/** Verifies bearer tokens: HS256 with the configured (or dev) secret, or RS/ES keys from a JWKS URL; `exp` and `nbf` against `clock`. */
export function createAccessTokenVerifier(config: Config, secrets: Secrets, clock: Clock = systemClock): AccessTokenVerifier {
  const jwks = config.AUTH_JWKS_URL ? createRemoteJWKSet(new URL(config.AUTH_JWKS_URL)) : undefined;
  return async (token) => {
    const options = { issuer: config.AUTH_ISSUER, audience: config.AUTH_AUDIENCE, currentDate: clock.now() };
    let payload: JWTPayload;
    try {
      payload = jwks
        ? (await jwtVerify(token, jwks, options)).payload
        : (await jwtVerify(token, secrets.jwtSecret!, { ...options, algorithms: ['HS256'] })).payload;
    } catch (err) {
      throw new AppError('UNAUTHENTICATED', `Invalid bearer token: ${verificationFailure(err, config)}`);
    }
    const claims = claimsSchema.safeParse(payload);
    if (!claims.success) {
      throw new AppError('UNAUTHENTICATED', 'Invalid bearer token: claims sub, tenants and roles are required');
    }
    const problem = claimProblem(claims.data, Math.floor(clock.now().getTime() / 1000), config.AUTH_MAX_TOKEN_LIFETIME);
    if (problem) throw new AppError('UNAUTHENTICATED', `Invalid bearer token: ${problem}`);
    const { client_id, azp, iat: _iat, act, ...rest } = claims.data;
    const clientId = client_id ?? azp;
    return { ...rest, ...(clientId ? { clientId } : {}), ...(act ? { actor: act.sub } : {}) };
  };
}

/** The token command's `--ttl` (`90m`, `12h`, `7d`) in seconds: at least 1 second, at most the verifiers' maximum. */
export function parseTokenLifetime(text: string, maxSeconds: number): number {
  const seconds = parseLifetime(text);
  if (seconds < 1) throw new Error('a token must live at least 1 second');
  if (seconds > maxSeconds)
    throw new Error(`'${text}' is too long: tokens live at most ${formatLifetime(maxSeconds)} (AUTH_MAX_TOKEN_LIFETIME); mint a new one when it expires`);
  return seconds;
}

export interface TokenRequest {
  sub: string;
  tenants: string[];
  roles: string[];
  patientId?: string;
  /** The OAuth client the token is issued to (`client_id` claim). */
  clientId?: string;
  /** SMART scopes, space-separated (`scope` claim). */
  scope?: string;
  /** Who acts for `sub` (RFC 8693 `act` claim). */
  actor?: string;
  ttlSeconds: number;
}

/** Issues an HS256 access token (the dev `npm run token` command and the tests). */
export async function issueAccessToken(
  secret: Uint8Array,
  request: TokenRequest,
  config?: Pick<Config, 'AUTH_ISSUER' | 'AUTH_AUDIENCE'>,
  clock: Clock = systemClock,
): Promise<string> {
  const now = Math.floor(clock.now().getTime() / 1000);
  const jwt = new SignJWT({
    tenants: request.tenants,
    roles: request.roles,
    ...(request.patientId ? { patientId: request.patientId } : {}),
    ...(request.clientId ? { client_id: request.clientId } : {}),
    ...(request.scope !== undefined ? { scope: request.scope } : {}),
    ...(request.actor !== undefined ? { act: { sub: request.actor } } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(request.sub)
    .setIssuedAt(now)
    .setExpirationTime(now + request.ttlSeconds);
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
  tenants: z.array(z.string()).optional(),
  tokenExp: z.number().optional(),
  clientId: z.string().optional(),
  agent: z.object({ client: z.string(), tool: z.string().optional(), purpose: z.string().optional() }).strict().optional(),
  subjectAccess: z.literal(true).optional(),
  scope: z.string().optional(),
  actor: z.string().optional(),
});

export async function signIdentity(key: Uint8Array, identity: Identity, ttlSeconds = 300): Promise<string> {
  return new SignJWT({
    tenantId: identity.tenantId,
    roles: identity.roles,
    ...(identity.patientId ? { patientId: identity.patientId } : {}),
    ...(identity.tenants ? { tenants: identity.tenants } : {}),
    // The client token's own expiry (the identity token's `exp` is its own, shorter one).
    ...(identity.exp !== undefined ? { tokenExp: identity.exp } : {}),
    ...(identity.clientId !== undefined ? { clientId: identity.clientId } : {}),
    ...(identity.agent ? { agent: identity.agent } : {}),
    ...(identity.subjectAccess ? { subjectAccess: true } : {}),
    ...(identity.scope !== undefined ? { scope: identity.scope } : {}),
    ...(identity.actor !== undefined ? { actor: identity.actor } : {}),
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(identity.sub)
    .setAudience(INTERNAL_AUDIENCE)
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(key);
}

export async function verifyIdentity(key: Uint8Array, token: string): Promise<Identity> {
  try {
    const { payload } = await jwtVerify(token, key, { audience: INTERNAL_AUDIENCE, algorithms: ['HS256'] });
    const { tokenExp, ...identity } = identitySchema.parse(payload);
    return { ...identity, ...(tokenExp !== undefined ? { exp: tokenExp } : {}) };
  } catch {
    throw new AppError('UNAUTHENTICATED', 'Missing or invalid caller identity');
  }
}
