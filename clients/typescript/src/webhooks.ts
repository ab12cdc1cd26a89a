import { createHmac, timingSafeEqual } from 'node:crypto';

/** A CareGraph webhook body (docs/webhooks.md). */
export interface WebhookEvent<T = Record<string, unknown>> {
  id: string;
  type: string;
  timestamp: string;
  data: T;
}

/** Remembers which event ids were handled, for `ttlMs` (a shared store, e.g. Redis, for several receivers). */
export interface DedupStore {
  /** Records `id`; resolves false when it was already recorded and has not expired. */
  remember(id: string, ttlMs: number): boolean | Promise<boolean>;
}

/** The default store: one process's memory, expired ids dropped as it goes. */
export class MemoryDedupStore implements DedupStore {
  private readonly seen = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  remember(id: string, ttlMs: number): boolean {
    const now = this.now();
    // Map keeps insertion order, and each id is inserted with the same TTL: expired ones are at the front.
    for (const [key, expires] of this.seen) {
      if (expires > now) break;
      this.seen.delete(key);
    }
    if (this.seen.has(id)) return false;
    this.seen.set(id, now + ttlMs);
    return true;
  }
}

export type WebhookFailure = 'missing_header' | 'bad_signature' | 'stale_timestamp' | 'bad_body' | 'id_mismatch' | 'duplicate';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }

  /** What to answer the platform: 2xx for a duplicate (it was handled; a retry must stop), 400 otherwise. */
  get status(): number {
    return this.reason === 'duplicate' ? 200 : 400;
  }
}

export interface WebhookVerifierOptions {
  /** The subscription's secret (during a rotation, the old and the new one). */
  secret: string | string[];
  /** How far X-Webhook-Timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Where handled ids are kept (default: in memory); ids are kept for `dedupTtlMs` (default 25 h, past the last retry). */
  store?: DedupStore;
  dedupTtlMs?: number;
  now?: () => number;
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  const value =
    typeof (headers as { get?: unknown }).get === 'function'
      ? (headers as { get(n: string): string | null }).get(name)
      : (headers as Record<string, string | string[] | undefined>)[name.toLowerCase()];
  return (Array.isArray(value) ? value[0] : value) ?? undefined;
}

const HEX_SIGNATURE = /^[0-9a-f]{64}$/;

/** True when `signature` is the lower-case hex HMAC-SHA256 of `body` under `secret`, compared in constant time. */
export function verifySignature(secret: string, body: Uint8Array | string, signature: string): boolean {
  if (!HEX_SIGNATURE.test(signature)) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/**
 * Verifies CareGraph webhook deliveries: the signature over the exact body
 * bytes (constant-time), the attempt's timestamp within the tolerance, the
 * body's event id equal to X-Webhook-Id, and each event handled once
 * (delivery is at least once). Give it the raw body, before any JSON parsing.
 */
export function createWebhookVerifier(options: WebhookVerifierOptions) {
  const secrets = Array.isArray(options.secret) ? options.secret : [options.secret];
  const tolerance = (options.toleranceSeconds ?? 300) * 1000;
  const now = options.now ?? Date.now;
  const store = options.store ?? new MemoryDedupStore(now);
  const ttl = options.dedupTtlMs ?? 25 * 60 * 60 * 1000;
  const fail = (reason: WebhookFailure, message: string) => new WebhookVerificationError(reason, message);

  return async function verify<T = Record<string, unknown>>(headers: Headers, body: Uint8Array | string): Promise<WebhookEvent<T>> {
    const id = header(headers, 'x-webhook-id');
    const timestamp = header(headers, 'x-webhook-timestamp');
    const signature = header(headers, 'x-webhook-signature');
    if (!id || !timestamp || !signature) throw fail('missing_header', 'X-Webhook-Id, X-Webhook-Timestamp and X-Webhook-Signature are required');
    if (!secrets.some((secret) => verifySignature(secret, body, signature))) throw fail('bad_signature', 'The signature does not match the body');
    const seconds = Number(timestamp);
    if (!/^\d+$/.test(timestamp) || Math.abs(now() - seconds * 1000) > tolerance)
      throw fail('stale_timestamp', `X-Webhook-Timestamp ${timestamp} is outside the tolerance`);
    let event: WebhookEvent<T>;
    try {
      event = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    } catch {
      throw fail('bad_body', 'The body is not JSON');
    }
    // The header is not signed; the body's id is, so deduplication keys on an id both agree on.
    if (event?.id !== id) throw fail('id_mismatch', 'X-Webhook-Id differs from the signed event id');
    if (!(await store.remember(id, ttl))) throw fail('duplicate', `Event ${id} was already handled`);
    return event;
  };
}
