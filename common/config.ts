import { accessSync, constants } from 'node:fs';
import { z } from 'zod';
import { TENANT_ID } from './auth/principal';
import { parseRedisUrl } from './redis';

/**
 * Process configuration, read once from the environment (docs/api.md §2) and
 * validated up front so a typo fails the start with a readable message
 * instead of surfacing later as a strange runtime error.
 */

export const RATE_LIMIT_CATEGORIES = {
  MESSAGES_SEND: 100,
  MESSAGES_READ: 1000,
  PATIENTS: 500,
  TEMPLATES: 200,
  WEBHOOKS: 50,
  EHR: 1000,
} as const;
export type RateLimitCategory = keyof typeof RATE_LIMIT_CATEGORIES;

const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Parses `500ms`, `30s`, `5m`, `2h` into milliseconds. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new Error(`'${text}' is not a duration (use a whole number with ms, s, m or h, e.g. 5m)`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

const LIFETIME = /^(\d+)(s|m|h|d)$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** Parses token lifetimes, `90m`, `12h`, `30d`, into seconds. */
export function parseLifetime(text: string): number {
  const match = LIFETIME.exec(text.trim());
  if (!match) throw new Error(`'${text}' is not a duration (use a whole number with s, m, h or d, e.g. 12h)`);
  return Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
}

/** Seconds as the largest unit that divides them (`2592000` → `30d`), for messages. */
export function formatLifetime(seconds: number): string {
  const [unit, size] = Object.entries(UNIT_SECONDS)
    .reverse()
    .find(([, size]) => seconds % size === 0)!;
  return `${seconds / size}${unit}`;
}

const bool = (name: string) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return false;
      if (/^(true|1|yes)$/i.test(value)) return true;
      if (/^(false|0|no)$/i.test(value)) return false;
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false` });
      return z.NEVER;
    });

const int = (min: number, max: number, fallback: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max} (got '${value}')` });
        return z.NEVER;
      }
      return Number(value);
    });

const optionalPort = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined || value === '') return undefined;
    if (!/^\d+$/.test(value) || Number(value) > 65535) {
      ctx.addIssue({ code: 'custom', message: `must be a port number 0..65535 (got '${value}')` });
      return z.NEVER;
    }
    return Number(value);
  });

const optionalUrl = (protocols: string[]) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return undefined;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: `is not a URL (got '${value}')` });
        return z.NEVER;
      }
      if (!protocols.includes(url.protocol)) {
        ctx.addIssue({ code: 'custom', message: `must start with ${protocols.map((p) => `${p}//`).join(' or ')}` });
        return z.NEVER;
      }
      return value;
    });

/** SMS_PROVIDER: an ordered, comma-separated list of SMS providers, each named once (the first is tried first). */
const SMS_PROVIDERS = ['simulator', 'twilio', 'vonage'] as const;
const smsProviderList = z
  .string()
  .optional()
  .transform((value, ctx): (typeof SMS_PROVIDERS)[number][] => {
    const names = (value ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    if (names.length === 0) return ['simulator'];
    const unknown = names.filter((name) => !(SMS_PROVIDERS as readonly string[]).includes(name));
    if (unknown.length > 0 || new Set(names).size !== names.length) {
      ctx.addIssue({ code: 'custom', message: `must list ${SMS_PROVIDERS.join(', ')}, each at most once (got '${value}')` });
      return z.NEVER;
    }
    return names as (typeof SMS_PROVIDERS)[number][];
  });

/** SMTP_URL: one relay, or an ordered, comma-separated list of relays tried in turn. */
const smtpUrlList = z
  .string()
  .optional()
  .transform((value, ctx): string[] => {
    const urls = (value ?? '')
      .split(',')
      .map((url) => url.trim())
      .filter(Boolean);
    for (const url of urls) {
      let protocol: string;
      try {
        protocol = new URL(url).protocol;
      } catch {
        ctx.addIssue({ code: 'custom', message: `is not a URL (got '${url}')` });
        return z.NEVER;
      }
      if (protocol !== 'smtp:' && protocol !== 'smtps:') {
        ctx.addIssue({ code: 'custom', message: `must start with smtp:// or smtps:// (got '${url}')` });
        return z.NEVER;
      }
    }
    return urls;
  });

const readableFile = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined || value === '') return undefined;
    try {
      accessSync(value, constants.R_OK);
    } catch {
      ctx.addIssue({ code: 'custom', message: `is not a readable file (got '${value}')` });
      return z.NEVER;
    }
    return value;
  });

/**
 * AI_AGENT_CLIENTS: the OAuth clients (a token's `client_id` or `azp`) that are AI agents, comma-separated, or `*`
 * (the default): every token that names a client. Empty: only calls through /mcp count as agents.
 */
const agentClientList = z
  .string()
  .optional()
  .transform((value, ctx): '*' | string[] => {
    if (value === undefined || value.trim() === '*') return '*';
    const clients = value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    if (clients.includes('*')) {
      ctx.addIssue({ code: 'custom', message: "'*' stands alone: every client, or a list of client ids" });
      return z.NEVER;
    }
    return clients;
  });

/** Comma-separated browser origins (`https://app.example.org`); `*` is refused: tokens are per user. */
const originList = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined || value.trim() === '') return [] as string[];
    const origins = value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    for (const origin of origins) {
      let url: URL | undefined;
      try {
        url = new URL(origin);
      } catch {
        url = undefined;
      }
      if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin) {
        ctx.addIssue({ code: 'custom', message: `'${origin}' is not an origin (scheme://host[:port], no path or trailing slash)` });
        return z.NEVER;
      }
    }
    return origins;
  });

/** The demo tenants `npm start` seeds; the TENANTS default outside production. */
const DEMO_TENANTS = ['demo', 'acme'];

/** Comma-separated tenant ids (TENANTS) created as records at start when missing; unset gives `undefined`, which loadConfig settles by mode. */
const tenantList = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined) return undefined;
    const tenants = value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    if (tenants.length === 0) {
      ctx.addIssue({ code: 'custom', message: 'needs at least one tenant id' });
      return z.NEVER;
    }
    const bad = tenants.find((tenant) => !TENANT_ID.test(tenant));
    if (bad !== undefined) {
      ctx.addIssue({ code: 'custom', message: `'${bad}' is not a valid tenant id (letters, digits, _ . -; up to 64)` });
      return z.NEVER;
    }
    return [...new Set(tenants)];
  });

/** The public base URL (scheme, host, optional path prefix): no query or fragment, no trailing slash. */
const publicUrl = optionalUrl(['http:', 'https:']).transform((value, ctx) => {
  if (value === undefined) return undefined;
  const url = new URL(value);
  if (url.search || url.hash || url.username || url.password) {
    ctx.addIssue({ code: 'custom', message: 'must be scheme://host[:port][/path] without query, fragment or credentials' });
    return z.NEVER;
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
});

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).optional().default('development'),
  PORT: int(0, 65535, 4000),
  HOST: z.string().optional().default('0.0.0.0'),
  MESSAGING_PORT: optionalPort,
  EHR_PORT: optionalPort,
  /** A listener serving only GET /metrics: the worker role's (default 9464); other roles serve /metrics on their own port and add this one only when set. */
  METRICS_PORT: optionalPort,
  /** OTLP/HTTP collector (e.g. http://collector:4318): traces are exported only when set (docs/observability.md). */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl(['http:', 'https:']),
  /** Overrides the per-role service.name of traces (caregraph-gateway, caregraph-worker, …). */
  OTEL_SERVICE_NAME: z.string().optional(),
  /** All-in-one process: how the gateway reaches its own subgraphs (`http` keeps the HTTP hop, for comparison). */
  SUBGRAPH_TRANSPORT: z.enum(['inprocess', 'http']).optional().default('inprocess'),
  MESSAGING_URL: optionalUrl(['http:', 'https:']),
  EHR_URL: optionalUrl(['http:', 'https:']),
  DATA_DIR: z.string().optional().default('./data'),
  DATABASE_URL: optionalUrl(['postgres:', 'postgresql:', 'memory:']),
  /** PostgreSQL: the tables' owner, for migrations and grants; unset: DATABASE_URL is the owner's (docs/security.md, Database roles). */
  DATABASE_OWNER_URL: optionalUrl(['postgres:', 'postgresql:']),
  /** PostgreSQL: connections of the runtime role's pool per process (the job queue keeps its own few). */
  DATABASE_POOL_SIZE: int(2, 500, 10),
  /** AQL queries evaluated at once per ehr process; more wait their turn (each may decrypt up to 10,000 compositions). */
  AQL_CONCURRENCY: int(1, 64, 4),
  /** One server (`redis://`, `rediss://`) or a Sentinel-watched master (`redis+sentinel://h1:26379,h2:26379/mymaster`). */
  REDIS_URL: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return undefined;
      try {
        parseRedisUrl(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
      return value;
    }),
  /** Pub/sub channel of the live event bus; one per deployment sharing a Redis. */
  REDIS_EVENTS_CHANNEL: z
    .string()
    .regex(/^[\w:.-]{1,128}$/, 'letters, digits, _ : . - (1..128)')
    .optional()
    .default('caregraph:events'),
  /** GraphQL over WebSocket limits (docs/subscriptions.md). */
  SUBSCRIPTIONS_MAX_PER_CONNECTION: int(1, 10_000, 50),
  SUBSCRIPTIONS_CONNECTIONS_PER_MINUTE: int(1, 1_000_000, 60),
  /** The GraphiQL explorer at GET /graphql (docs/api.md): unset, it is on outside production only. */
  GRAPHQL_EXPLORER: z.enum(['true', 'false']).optional(),
  AUTH_JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  AUTH_JWKS_URL: optionalUrl(['http:', 'https:']),
  AUTH_ISSUER: z.string().optional(),
  /** The longest a bearer token may live (exp − iat), in seconds; longer-lived tokens are refused (docs/security.md, Tokens). */
  AUTH_MAX_TOKEN_LIFETIME: z
    .string()
    .optional()
    .default('30d')
    .transform((value, ctx) => {
      try {
        const seconds = parseLifetime(value);
        if (seconds < 60 || seconds > 365 * 86_400) throw new Error(`must be from 1m to 365d (got '${value}')`);
        return seconds;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  AUTH_AUDIENCE: z.string().optional(),
  ENCRYPTION_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || Buffer.from(v, 'base64').length === 32, 'must be base64 of exactly 32 bytes'),
  /** Retired keys still accepted for reading during a key rotation (comma-separated base64, 32 bytes each). */
  PREVIOUS_ENCRYPTION_KEYS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const keys = (value ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean);
      const bad = keys.findIndex((k) => !/^[A-Za-z0-9+/_-]+={0,2}$/.test(k) || Buffer.from(k, 'base64').length !== 32);
      if (bad >= 0) {
        ctx.addIssue({ code: 'custom', message: `key ${bad + 1} must be base64 of exactly 32 bytes` });
        return z.NEVER;
      }
      return keys.map((k) => Buffer.from(k, 'base64'));
    }),
  /** HMAC key of the audit hash chain and its checkpoints (base64, at least 32 bytes); never stored in the database. */
  AUDIT_HMAC_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || (/^[A-Za-z0-9+/_-]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length >= 32), 'must be base64 of at least 32 bytes'),
  /** Append-only file of signed audit-chain checkpoints (default <DATA_DIR>/audit-checkpoints.jsonl). */
  AUDIT_CHECKPOINT_FILE: z.string().optional(),
  AUDIT_CHECKPOINT_INTERVAL: z
    .string()
    .optional()
    .default('5m')
    .transform((value, ctx) => {
      try {
        const ms = parseDuration(value);
        if (ms < 100) throw new Error('must be at least 100ms');
        return ms;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .optional()
    .default('1m,5m,30m,2h,24h')
    .transform((value, ctx) => {
      try {
        const delays = value.split(',').map(parseDuration);
        if (delays.length === 0) throw new Error('needs at least one delay');
        return delays;
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  WEBHOOK_TIMEOUT_MS: int(1, 120_000, 10_000),
  // After a secret rotation the previous secret keeps signing beside the new one this long (ms; `0s`: not at all).
  WEBHOOK_SECRET_OVERLAP: z
    .string()
    .optional()
    .default('24h')
    .transform((value, ctx) => {
      try {
        return parseDuration(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  // Attempts in flight at once per subscription, over all workers: a slow endpoint holds at most this many.
  WEBHOOK_ENDPOINT_CONCURRENCY: int(1, 100, 8),
  // Finished webhook deliveries (with their attempts) and dispatched events older than this are deleted.
  WEBHOOK_RETENTION_DAYS: int(1, 3650, 30),
  WEBHOOK_ALLOW_INSECURE: bool('WEBHOOK_ALLOW_INSECURE'),
  // PEM file of extra CA certificates trusted for webhook TLS (receivers behind a private CA), on top of the system's.
  WEBHOOK_CA_FILE: z.string().optional(),
  SMS_PROVIDER: smsProviderList,
  TWILIO_ACCOUNT_SID: z.string().optional(),
  TWILIO_AUTH_TOKEN: z.string().optional(),
  TWILIO_FROM: z.string().optional(),
  TWILIO_API_URL: optionalUrl(['http:', 'https:']),
  VONAGE_API_KEY: z.string().optional(),
  VONAGE_API_SECRET: z.string().optional(),
  VONAGE_FROM: z.string().optional(),
  VONAGE_SIGNATURE_SECRET: z.string().optional(),
  VONAGE_SIGNATURE_METHOD: z.enum(['md5hash', 'md5', 'sha1', 'sha256', 'sha512']).optional().default('sha256'),
  VONAGE_API_URL: optionalUrl(['http:', 'https:']),
  /** A provider call that has not answered in this time counts as the provider's failure (the next provider is tried). */
  PROVIDER_TIMEOUT_MS: int(100, 120_000, 10_000),
  /** Consecutive provider-side failures that open a provider's circuit. */
  PROVIDER_FAILURE_THRESHOLD: int(1, 1000, 5),
  /** How long an open circuit skips its provider before one probe send is let through. */
  PROVIDER_COOLDOWN_MS: int(100, 3_600_000, 30_000),
  /** Base of absolute URLs in responses (FHIR links, Location) and of the Twilio callbacks; never taken from a request's Host. */
  PUBLIC_URL: publicUrl,
  /** Behind a reverse proxy: take absolute URLs from X-Forwarded-Proto/-Host when PUBLIC_URL is unset. */
  TRUST_PROXY: bool('TRUST_PROXY'),
  /** Tenants this deployment serves (until tenants are database records); others are refused with 403. */
  TENANTS: tenantList,
  AI_AGENT_CLIENTS: agentClientList,
  SIM_SEND_DELAY_MS: int(0, 600_000, 200),
  SIM_DELIVER_DELAY_MS: int(0, 600_000, 800),
  EMAIL_PROVIDER: z.enum(['simulator', 'smtp']).optional().default('simulator'),
  SMTP_URL: smtpUrlList,
  EMAIL_FROM: z.string().optional().default('CareGraph <no-reply@caregraph.local>'),
  DELIVERY_LEASE_MS: int(1000, 3_600_000, 60_000),
  /** How long a fetched send job may stay active before it is handed out again (its worker died). */
  DELIVERY_JOB_EXPIRY_SECONDS: int(1, 3600, 30),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional().default('info'),
  // API hardening (docs/security.md).
  RATE_LIMIT_KEY_PREFIX: z
    .string()
    .regex(/^[\w:.-]{1,64}$/, 'letters, digits, _ : . - (1-64)')
    .optional()
    .default('caregraph:rl'),
  CORS_ORIGINS: originList,
  TLS_CERT_FILE: readableFile,
  TLS_KEY_FILE: readableFile,
  REQUEST_TIMEOUT_MS: int(100, 600_000, 30_000),
  /** On SIGTERM/SIGINT: how long requests in flight may take to finish before their connections are cut; as long as the request deadline, so a request that may still answer is never cut. */
  SHUTDOWN_GRACE_MS: int(0, 600_000, 30_000),
  GRAPHQL_MAX_DEPTH: int(1, 100, 12),
  GRAPHQL_MAX_ALIASES: int(0, 1000, 30),
  GRAPHQL_MAX_COST: int(1, 10_000_000, 10_000),
  OPENEHR_SYSTEM_ID: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/)
    .optional()
    .default('caregraph.local'),
  /** IHE XDS.b: the affinity domain's patient id assigning authority (an OID); XDS patient ids are `<patient id>^^^&<oid>&ISO`. */
  XDS_ASSIGNING_AUTHORITY: z
    .string()
    .regex(/^[0-2](\.(0|[1-9][0-9]*))+$/, 'an OID')
    .optional()
    .default('2.999.1.1'),
  /** IHE XDS.b: this document repository's repositoryUniqueId (an OID). */
  XDS_REPOSITORY_UNIQUE_ID: z
    .string()
    .regex(/^[0-2](\.(0|[1-9][0-9]*))+$/, 'an OID')
    .optional()
    .default('2.999.1.2'),
  /** IHE XDS.b Document Source: the sourceId (an OID) of the submission sets CareGraph publishes. */
  XDS_SOURCE_ID: z
    .string()
    .regex(/^[0-2](\.(0|[1-9][0-9]*))+$/, 'an OID')
    .optional()
    .default('2.999.1.3'),
  /** The external repository's ITI-41 endpoint that publishPatientCcd sends to; unset: publishing is off. */
  XDS_REPOSITORY_URL: optionalUrl(['http:', 'https:']),
  /** Bearer token sent to XDS_REPOSITORY_URL (a CareGraph repository: a token of its tenant with the document write grant). */
  XDS_REPOSITORY_TOKEN: z.string().optional(),
  /** PEM CA certificates trusted for XDS_REPOSITORY_URL's TLS, on top of the system's; client certificate and key for mutual TLS. */
  XDS_REPOSITORY_CA_FILE: readableFile,
  XDS_REPOSITORY_CERT_FILE: readableFile,
  XDS_REPOSITORY_KEY_FILE: readableFile,
  XDS_REPOSITORY_TIMEOUT_MS: int(1000, 120_000, 20_000),
});

type Env = z.infer<typeof envSchema>;

/** Every variable `loadConfig` reads: the schema's, and one per rate-limit category. */
export const CONFIG_VARIABLES: readonly string[] = [
  ...Object.keys(envSchema.shape),
  ...Object.keys(RATE_LIMIT_CATEGORIES).map((category) => `RATE_LIMIT_${category}`),
];

export interface Config extends Omit<Env, 'TENANTS'> {
  rateLimits: Record<RateLimitCategory, number>;
  production: boolean;
  TENANTS: string[];
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.')}: ${issue.message}`);
  }
  const rateLimits = { ...RATE_LIMIT_CATEGORIES } as Record<RateLimitCategory, number>;
  for (const category of Object.keys(RATE_LIMIT_CATEGORIES) as RateLimitCategory[]) {
    const raw = env[`RATE_LIMIT_${category}`];
    if (raw === undefined || raw === '') continue;
    if (!/^\d+$/.test(raw) || Number(raw) < 1) problems.push(`RATE_LIMIT_${category}: must be a whole number ≥ 1 (got '${raw}')`);
    else rateLimits[category] = Number(raw);
  }
  for (const name of Object.keys(env)) {
    if (name.startsWith('RATE_LIMIT_') && name !== 'RATE_LIMIT_KEY_PREFIX' && !(name.slice('RATE_LIMIT_'.length) in RATE_LIMIT_CATEGORIES)) {
      problems.push(`${name}: unknown rate-limit category (known: ${Object.keys(RATE_LIMIT_CATEGORIES).join(', ')})`);
    }
  }
  if (parsed.success && parsed.data.SMS_PROVIDER.includes('twilio')) {
    for (const name of ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM'] as const) {
      if (!parsed.data[name]) problems.push(`${name}: required when SMS_PROVIDER names twilio`);
    }
  }
  if (parsed.success && parsed.data.SMS_PROVIDER.includes('vonage')) {
    for (const name of ['VONAGE_API_KEY', 'VONAGE_API_SECRET', 'VONAGE_FROM', 'VONAGE_SIGNATURE_SECRET'] as const) {
      if (!parsed.data[name]) problems.push(`${name}: required when SMS_PROVIDER names vonage`);
    }
  }
  if (parsed.success && parsed.data.EMAIL_PROVIDER === 'smtp' && parsed.data.SMTP_URL.length === 0)
    problems.push('SMTP_URL: required when EMAIL_PROVIDER=smtp');
  if (problems.length > 0 || !parsed.success) {
    throw new ConfigError(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
  if (Boolean(parsed.data.XDS_REPOSITORY_CERT_FILE) !== Boolean(parsed.data.XDS_REPOSITORY_KEY_FILE)) {
    throw new ConfigError('Invalid configuration:\n  - XDS_REPOSITORY_CERT_FILE and XDS_REPOSITORY_KEY_FILE must be set together');
  }
  if (!parsed.data.XDS_REPOSITORY_URL && (parsed.data.XDS_REPOSITORY_TOKEN || parsed.data.XDS_REPOSITORY_CERT_FILE || parsed.data.XDS_REPOSITORY_CA_FILE)) {
    throw new ConfigError('Invalid configuration:\n  - XDS_REPOSITORY_TOKEN, _CA_FILE and _CERT_FILE need XDS_REPOSITORY_URL');
  }
  if (Boolean(parsed.data.TLS_CERT_FILE) !== Boolean(parsed.data.TLS_KEY_FILE)) {
    throw new ConfigError('Invalid configuration:\n  - TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  const production = parsed.data.NODE_ENV === 'production';
  if (production) {
    if (!parsed.data.AUTH_JWT_SECRET && !parsed.data.AUTH_JWKS_URL) {
      throw new ConfigError('Invalid configuration:\n  - NODE_ENV=production needs AUTH_JWT_SECRET or AUTH_JWKS_URL (dev secrets are refused)');
    }
    if (!parsed.data.ENCRYPTION_KEY) {
      throw new ConfigError('Invalid configuration:\n  - NODE_ENV=production needs ENCRYPTION_KEY (dev keys are refused)');
    }
    if (!parsed.data.AUDIT_HMAC_KEY) {
      throw new ConfigError('Invalid configuration:\n  - NODE_ENV=production needs AUDIT_HMAC_KEY (dev keys are refused)');
    }
    if (!parsed.data.TENANTS) {
      throw new ConfigError(
        'Invalid configuration:\n  - NODE_ENV=production needs TENANTS (the comma-separated ids of the tenants to create as records when missing)',
      );
    }
  }
  return { ...parsed.data, TENANTS: parsed.data.TENANTS ?? DEMO_TENANTS, rateLimits, production };
}
