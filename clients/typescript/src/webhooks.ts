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
  /** How far the delivery's timestamp may be from now, in seconds (default 300). */
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

/** The Standard Webhooks key of a secret: the base64 decoding of what follows `whsec_`, else its UTF-8 bytes. */
function standardKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * True when one `v1,` entry of a `webhook-signature` header (Standard Webhooks: space-separated) is the base64
 * HMAC-SHA256 of `{id}.{timestamp}.{body}` under `secret`, compared in constant time.
 */
export function verifyStandardSignature(secret: string, id: string, timestamp: string, body: Uint8Array | string, header: string): boolean {
  const expected = createHmac('sha256', standardKey(secret))
    .update(`${id}.${timestamp}.`, 'utf8')
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest();
  return header.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * Verifies CareGraph webhook deliveries: the signature (constant-time), the
 * attempt's timestamp within the tolerance, the body's event id equal to the
 * delivery's id header, and each event handled once (delivery is at least
 * once). With a `webhook-signature` header (Standard Webhooks) that signature
 * is checked, covering id, timestamp and body; without one, X-Webhook-Signature
 * over the body. Give it the raw body, before any JSON parsing.
 */
export function createWebhookVerifier(options: WebhookVerifierOptions) {
  const secrets = Array.isArray(options.secret) ? options.secret : [options.secret];
  const tolerance = (options.toleranceSeconds ?? 300) * 1000;
  const now = options.now ?? Date.now;
  const store = options.store ?? new MemoryDedupStore(now);
  const ttl = options.dedupTtlMs ?? 25 * 60 * 60 * 1000;
  const fail = (reason: WebhookFailure, message: string) => new WebhookVerificationError(reason, message);

  return async function verify<T = Record<string, unknown>>(headers: Headers, body: Uint8Array | string): Promise<WebhookEvent<T>> {
    const standard = header(headers, 'webhook-signature');
    let id: string | undefined;
    let timestamp: string | undefined;
    if (standard !== undefined) {
      id = header(headers, 'webhook-id');
      timestamp = header(headers, 'webhook-timestamp');
      if (!id || !timestamp) throw fail('missing_header', 'webhook-id and webhook-timestamp are required with webhook-signature');
      const [signedId, signedAt] = [id, timestamp];
      if (!secrets.some((secret) => verifyStandardSignature(secret, signedId, signedAt, body, standard)))
        throw fail('bad_signature', 'No webhook-signature entry matches the id, timestamp and body');
    } else {
      id = header(headers, 'x-webhook-id');
      timestamp = header(headers, 'x-webhook-timestamp');
      const signature = header(headers, 'x-webhook-signature');
      if (!id || !timestamp || !signature) throw fail('missing_header', 'X-Webhook-Id, X-Webhook-Timestamp and X-Webhook-Signature are required');
      if (!secrets.some((secret) => verifySignature(secret, body, signature))) throw fail('bad_signature', 'The signature does not match the body');
    }
    const seconds = Number(timestamp);
    if (!/^\d+$/.test(timestamp) || Math.abs(now() - seconds * 1000) > tolerance)
      throw fail('stale_timestamp', `The delivery's timestamp ${timestamp} is outside the tolerance`);
    let event: WebhookEvent<T>;
    try {
      event = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    } catch {
      throw fail('bad_body', 'The body is not JSON');
    }
    // The body's id is signed (so is webhook-id, X-Webhook-Id is not): deduplication keys on an id both agree on.
    if (event?.id !== id) throw fail('id_mismatch', "The delivery's id header differs from the signed event id");
    if (!(await store.remember(id, ttl))) throw fail('duplicate', `Event ${id} was already handled`);
    return event;
  };
}
