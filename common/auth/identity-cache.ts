import type { Identity, Principal } from './principal';
import { signIdentity, verifyIdentity, type AccessTokenVerifier } from './tokens';

/** Lifetime of a cached identity token; it is reused until a minute before it expires. */
const TOKEN_TTL_SECONDS = 300;
const REFRESH_MARGIN_MS = 60_000;
/**
 * How long a verified bearer token is trusted before it is verified again
 * (never past its `exp`): a rotated key or a changed JWKS reaches every token
 * within this time.
 */
const ACCESS_TOKEN_REUSE_MS = 60_000;
/** Bounds the caches; the oldest entry goes first (one per active caller and tenant is plenty). */
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: Promise<T>;
  /** Epoch milliseconds after which the entry is not used. */
  until: number;
}

function remember<T>(cache: Map<string, Entry<T>>, key: string, entry: Entry<T>): void {
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, entry);
  // A failure is not cached: the next call tries again.
  entry.value.catch(() => {
    if (cache.get(key) === entry) cache.delete(key);
  });
}

function identityKey(identity: Identity): string {
  const agent = identity.agent ? JSON.stringify([identity.agent.client, identity.agent.tool, identity.agent.purpose]) : '';
  return `${identity.sub}\u0000${identity.tenantId}\u0000${identity.roles.join(',')}\u0000${identity.patientId ?? ''}\u0000${identity.tenants?.join(',') ?? ''}\u0000${identity.exp ?? ''}\u0000${identity.clientId ?? ''}\u0000${agent}\u0000${identity.subjectAccess ? 'subject-access' : ''}\u0000${identity.scope ?? ''}\u0000${identity.actor ?? ''}`;
}

/**
 * Signs the subgraph identity header once per principal and tenant for the
 * token's lifetime instead of once per request: an HMAC JWT is cheap, but not
 * free at thousands of requests per second.
 */
export class IdentityTokenSigner {
  private readonly cache = new Map<string, Entry<string>>();

  constructor(
    private readonly key: Uint8Array,
    private readonly now: () => number = Date.now,
  ) {}

  sign(identity: Identity): Promise<string> {
    const key = identityKey(identity);
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.value;
    if (hit) this.cache.delete(key);
    const entry = { value: signIdentity(this.key, identity, TOKEN_TTL_SECONDS), until: now + TOKEN_TTL_SECONDS * 1000 - REFRESH_MARGIN_MS };
    remember(this.cache, key, entry);
    return entry.value;
  }
}

/**
 * The subgraph side: a token already verified is not verified again until it
 * expires (the cache is keyed by the exact signed token, so nothing unsigned
 * can hit it).
 */
export class IdentityTokenVerifier {
  private readonly cache = new Map<string, Entry<Identity>>();

  constructor(
    private readonly key: Uint8Array,
    private readonly now: () => number = Date.now,
  ) {}

  verify(token: string): Promise<Identity> {
    const now = this.now();
    const hit = this.cache.get(token);
    if (hit && hit.until > now) return hit.value;
    if (hit) this.cache.delete(token);
    const value = verifyIdentity(this.key, token);
    remember(this.cache, token, { value, until: expiryOf(token) });
    return value;
  }
}

/** The `exp` claim of a JWT in epoch ms (0 when unreadable: such a token is never reused). */
function expiryOf(token: string): number {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp * 1000 : 0;
  } catch {
    return 0;
  }
}

/**
 * The gateway side: a client's bearer token is verified once and then trusted
 * for up to a minute, never past its expiry. Keyed by the exact token, so a
 * token that was not verified never hits; failures are not cached.
 */
export function cachingAccessTokenVerifier(verify: AccessTokenVerifier, now: () => number = Date.now): AccessTokenVerifier {
  const cache = new Map<string, Entry<Principal>>();
  return (token) => {
    const at = now();
    const hit = cache.get(token);
    if (hit && hit.until > at) return hit.value;
    if (hit) cache.delete(token);
    const expiry = expiryOf(token);
    const entry = { value: verify(token), until: expiry > 0 ? Math.min(expiry, at + ACCESS_TOKEN_REUSE_MS) : at + ACCESS_TOKEN_REUSE_MS };
    remember(cache, token, entry);
    return entry.value;
  };
}
