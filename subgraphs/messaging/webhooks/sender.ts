import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { blockedReason, guardedLookup, hostOf } from './ssrf';
import { SpanStatusCode } from '@opentelemetry/api';
import { inSpan, SpanKind, traceCarrier } from '../../../common/telemetry/tracing';

/** docs/api.md §6: lower-case hex HMAC-SHA256 of the exact body bytes, keyed with the secret's UTF-8 bytes. */
export function signPayload(secret: string, body: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

export const WHSEC_PREFIX = 'whsec_';

/** The Standard Webhooks HMAC key of a secret: the base64 decoding of what follows `whsec_`, else the secret's UTF-8 bytes. */
export function signingKey(secret: string): Buffer {
  return secret.startsWith(WHSEC_PREFIX) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * The `webhook-signature` header (Standard Webhooks 1.0): one `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`
 * per secret, space-separated, in the order given (the current secret first, then one still in its overlap).
 */
export function standardSignature(secrets: readonly string[], id: string, timestamp: number, body: Buffer | string): string {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return secrets
    .map((secret) => {
      const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.`, 'utf8').update(bytes).digest('base64');
      return `v1,${mac}`;
    })
    .join(' ');
}

export interface OutgoingWebhook {
  url: string;
  /** The secrets in force, the current one first: it alone keys `X-Webhook-Signature`; each keys one `webhook-signature` entry. */
  secrets: readonly string[];
  eventId: string;
  eventType: string;
  /** The body exactly as stored: these bytes are signed and sent. */
  payload: string;
}

export interface AttemptOutcome {
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseSnippet: string | null;
  /** Retry-After of a 429/503 answer, in ms from now. */
  retryAfterMs: number | null;
  /** The X-Webhook-Signature header sent; null when no request was made (URL refused). */
  signature: string | null;
}

export interface SenderOptions {
  timeoutMs: number;
  allowInsecure: boolean;
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  extraCa?: string;
}

const SNIPPET_BYTES = 1024;
const USER_AGENT = 'CareGraph-Webhooks/1.0';

/** Retry-After as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  if (e?.code === 'EWEBHOOKTARGET') return `target refused: ${e.message}`;
  const code = e?.code ?? e?.cause?.code;
  const message = e?.message ?? String(err);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/**
 * Makes single delivery attempts: POST with the contract's headers, no
 * redirects followed, everything (connect, TLS, answer) bounded by the
 * timeout. Connections go through one Agent whose lookup is the SSRF guard.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: SenderOptions) {
    this.agent = new Agent({
      connect: {
        lookup: guardedLookup({ allowInsecure: options.allowInsecure }),
        timeout: options.timeoutMs,
        // One TLS context for every connection: given `ca` instead, each new connection parsed the 144 root
        // certificates again (about 25 ms of CPU, measured).
        ...(options.extraCa ? { secureContext: createSecureContext({ ca: [...rootCertificates, options.extraCa] }) } : {}),
      } as Agent.Options['connect'],
      keepAliveTimeout: 10_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /** One attempt in a CLIENT span; its W3C trace context goes out as the `traceparent` header (docs/webhooks.md). */
  send(hook: OutgoingWebhook, now = new Date()): Promise<AttemptOutcome> {
    return inSpan('webhook send', { kind: SpanKind.CLIENT, attributes: { 'caregraph.webhook.event_type': hook.eventType } }, async (span) => {
      const outcome = await this.attempt(hook, now);
      if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
      if (!outcome.success) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? 'failed' });
      return outcome;
    });
  }

  private async attempt(hook: OutgoingWebhook, now: Date): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let signature: string | null = null;
    const failed = (error: string, statusCode: number | null = null, snippet: string | null = null, retryAfterMs: number | null = null): AttemptOutcome => ({
      success: false,
      statusCode,
      durationMs: elapsed(),
      error,
      responseSnippet: snippet,
      retryAfterMs,
      signature,
    });

    let url: URL;
    try {
      url = new URL(hook.url);
    } catch {
      return failed('the subscription URL is not a valid URL');
    }
    if (url.protocol !== 'https:' && !(this.options.allowInsecure && url.protocol === 'http:')) {
      return failed(`target refused: ${url.protocol}// is not allowed (https only)`);
    }
    // IP literals never reach the lookup, so they are checked here.
    const host = hostOf(url);
    if (!this.options.allowInsecure && isIP(host)) {
      const reason = blockedReason(host);
      if (reason) return failed(`target refused: ${host} is a ${reason} address`);
    }

    const body = Buffer.from(hook.payload, 'utf8');
    // One timestamp, sent in both headers and signed in `webhook-signature`: each attempt, retries included, signs afresh.
    const timestamp = Math.floor(now.getTime() / 1000);
    signature = signPayload(hook.secrets[0], body);
    try {
      const response = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.options.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-webhook-id': hook.eventId,
          'x-webhook-event': hook.eventType,
          'x-webhook-timestamp': String(timestamp),
          'x-webhook-signature': signature,
          'webhook-id': hook.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': standardSignature(hook.secrets, hook.eventId, timestamp, body),
          ...traceCarrier(),
        },
        body,
      });
      const snippet = await readSnippet(response.body);
      const status = response.statusCode;
      if (status >= 200 && status < 300) {
        return { success: true, statusCode: status, durationMs: elapsed(), error: null, responseSnippet: snippet, retryAfterMs: null, signature };
      }
      if (status >= 300 && status < 400) {
        const location = response.headers.location;
        return failed(`redirect (${status}${location ? ` to ${String(location)}` : ''}) not followed`, status, snippet);
      }
      const retryAfter = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined;
      return failed(`HTTP ${status}`, status, snippet, retryAfter ?? null);
    } catch (err) {
      return failed(describeError(err, this.options.timeoutMs));
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** The first bytes of an answer for the delivery log; the rest is dropped (and the connection with it when large). */
async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= SNIPPET_BYTES) {
      body.destroy();
      break;
    }
  }
  if (size === 0) return null;
  return Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8');
}
