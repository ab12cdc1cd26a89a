import { CONFIG_VARIABLES } from './config';

/**
 * The configuration reference (docs/configuration.md): one row per setting or group of settings read by
 * `loadConfig`. `npm run docs:config` writes the table into the docs; `config-reference.test.ts` fails when
 * a variable of the schema has no row, a row names no variable of the schema, or the docs' table is stale.
 * Cells are Markdown.
 */
interface ConfigRow {
  /** Variable names; `RATE_LIMIT_<CATEGORY>` stands for one per rate-limit category. */
  names: readonly string[];
  default: string;
  meaning: string;
}

export const CONFIG_REFERENCE: readonly ConfigRow[] = [
  { names: ['PORT'], default: '`4000`', meaning: 'gateway port' },
  { names: ['HOST'], default: '`0.0.0.0`', meaning: 'gateway bind address (subgraphs of the all-in-one process bind 127.0.0.1)' },
  { names: ['MESSAGING_PORT', 'EHR_PORT'], default: 'free port (all-in-one), 4001 / 4002 (scale-out)', meaning: 'subgraph ports' },
  {
    names: ['MESSAGING_URL', 'EHR_URL'],
    default: 'unset (then `http://127.0.0.1:4001/graphql`, `http://127.0.0.1:4002/graphql`)',
    meaning: 'where a standalone gateway finds the subgraphs (and messaging and the worker the clinical record)',
  },
  {
    names: ['SUBGRAPH_TRANSPORT'],
    default: '`inprocess`',
    meaning:
      'all-in-one process: how the gateway reaches the subgraphs and messaging the clinical record; `http` sends both over loopback HTTP, as in scale-out ([architecture](architecture.md#cross-subgraph-reads))',
  },
  { names: ['DATA_DIR'], default: '`./data`', meaning: 'embedded database files and generated dev secrets' },
  {
    names: ['DATABASE_URL'],
    default: 'unset',
    meaning:
      "unset: PGlite in `DATA_DIR/pglite`; `memory://`: in-memory PGlite; `postgres://…`: PostgreSQL, the service's least-privilege runtime role ([database roles](security.md#database-roles))",
  },
  {
    names: ['DATABASE_OWNER_URL'],
    default: 'unset',
    meaning:
      "PostgreSQL: the tables' owner, for migrations and grants. Unset: `DATABASE_URL` is the owner's and the service runs as the role `caregraph_runtime` it creates without a password (development servers trusting local logins); set both in production",
  },
  {
    names: ['DATABASE_POOL_SIZE'],
    default: '`10`',
    meaning:
      "PostgreSQL: connections of the runtime role's pool in each process; a request waits for a free one rather than failing ([AQL concurrency](exchange.md#concurrency)). Keep the sum over all processes below the server's `max_connections`",
  },
  {
    names: ['AQL_CONCURRENCY'],
    default: '`4`',
    meaning:
      'AQL queries (ad hoc and stored) evaluated at once in each ehr process; the others wait in turn until their request deadline, then 503 with nothing done ([AQL concurrency](exchange.md#concurrency))',
  },
  { names: ['REDIS_URL'], default: 'unset', meaning: 'unset: in-process pub/sub and counters; set: Redis shared by all instances' },
  { names: ['AUTH_JWT_SECRET'], default: 'dev secret in `DATA_DIR`', meaning: 'HS256 key for access tokens (≥ 32 characters)' },
  { names: ['AUTH_JWKS_URL'], default: 'unset', meaning: "verify tokens with your identity provider's keys instead" },
  { names: ['AUTH_ISSUER', 'AUTH_AUDIENCE'], default: 'unset', meaning: 'required `iss` / `aud` claims when set' },
  {
    names: ['AUTH_MAX_TOKEN_LIFETIME'],
    default: '`30d`',
    meaning:
      'longest lifetime (`exp` − `iat`) a token may have, on every surface (s, m, h, d; 1m..365d); a longer one gets 401, and `npm run token -- --ttl` refuses to mint one ([security](security.md#tokens))',
  },
  {
    names: ['ENCRYPTION_KEY'],
    default: 'dev key in `DATA_DIR`',
    meaning:
      'base64 of 32 bytes: AES-256-GCM for clinical content, contact details and message content (bodies, variables, replies, event data, webhook payloads)',
  },
  { names: ['WEBHOOK_RETRY_SCHEDULE'], default: '`1m,5m,30m,2h,24h`', meaning: 'retry delays (ms, s, m, h)' },
  { names: ['WEBHOOK_TIMEOUT_MS'], default: '`10000`', meaning: 'a delivery without a 2xx answer in this time failed' },
  {
    names: ['WEBHOOK_SECRET_OVERLAP'],
    default: '`24h`',
    meaning:
      "after a subscription's secret changes, the previous secret keeps signing beside the new one this long (ms, s, m, h; `0s`: not at all) ([details](webhooks.md#secrets-and-rotation))",
  },
  {
    names: ['WEBHOOK_ENDPOINT_CONCURRENCY'],
    default: '`8`',
    meaning: 'attempts in flight at once per subscription, over all workers (1–100); a slow endpoint holds no more',
  },
  { names: ['WEBHOOK_ALLOW_INSECURE'], default: '`false`', meaning: 'allow `http://` and private targets (development and tests only)' },
  {
    names: ['RATE_LIMIT_<CATEGORY>'],
    default: '`MESSAGES_SEND` 100, `MESSAGES_READ` 1000, `PATIENTS` 500, `TEMPLATES` 200, `WEBHOOKS` 50, `EHR` 1000',
    meaning: 'per-minute limit per tenant and token subject, e.g. `RATE_LIMIT_MESSAGES_SEND=5` ([details](security.md))',
  },
  {
    names: ['WEBHOOK_RETENTION_DAYS'],
    default: '`30`',
    meaning: 'finished webhook deliveries (with their attempts) and dispatched events older than this are deleted hourly ([details](webhooks.md#retention))',
  },
  { names: ['WEBHOOK_CA_FILE'], default: 'unset', meaning: 'PEM file of extra CA certificates trusted for webhook TLS (receivers behind a private CA)' },
  {
    names: ['SMS_PROVIDER'],
    default: '`simulator`',
    meaning:
      'ordered, comma-separated list of `simulator`, `twilio`, `vonage` (`twilio,vonage`): a send the provider fails on its side goes to the next one ([failover](messaging.md#provider-failover))',
  },
  {
    names: ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM'],
    default: 'unset',
    meaning:
      "the Twilio account, its auth token (also the key of the callbacks' signatures) and the sending number; required with `SMS_PROVIDER=twilio` (`PUBLIC_URL` for Twilio's callbacks)",
  },
  { names: ['TWILIO_API_URL'], default: "unset (Twilio's own, `https://api.twilio.com`)", meaning: "Twilio's API base URL (a test double's, in tests)" },
  {
    names: ['VONAGE_API_KEY', 'VONAGE_API_SECRET', 'VONAGE_FROM', 'VONAGE_SIGNATURE_SECRET'],
    default: 'unset',
    meaning:
      "the Vonage account's API key and secret, the sender, and the signature secret that signs its delivery receipts; required when `SMS_PROVIDER` names `vonage` (`PUBLIC_URL` for the receipts)",
  },
  {
    names: ['VONAGE_SIGNATURE_METHOD'],
    default: '`sha256`',
    meaning: "the signing method set on the Vonage account: `md5hash`, `md5`, `sha1`, `sha256` or `sha512` (the HMACs' hash, or Vonage's MD5 hash)",
  },
  { names: ['VONAGE_API_URL'], default: "unset (Vonage's own, `https://rest.nexmo.com`)", meaning: "Vonage's SMS API base URL (a test double's, in tests)" },
  {
    names: ['PROVIDER_TIMEOUT_MS', 'PROVIDER_FAILURE_THRESHOLD', 'PROVIDER_COOLDOWN_MS'],
    default: '`10000`, `5`, `30000`',
    meaning:
      "a provider call's time limit; consecutive provider-side failures that open its circuit; how long it stays open before a probe ([failover](messaging.md#provider-failover))",
  },
  {
    names: ['TENANTS'],
    default: '`demo,acme` (required with `NODE_ENV=production`)',
    meaning:
      'comma-separated tenant ids created as records at start when missing; a token or `X-Tenant-Id` naming a tenant without a record, or a suspended one, gets 403 `FORBIDDEN` ([details](tenants.md))',
  },
  {
    names: ['PUBLIC_URL'],
    default: "the gateway's own address (`http://localhost:<PORT>`)",
    meaning:
      'public base URL (`https://care.example.org`, optionally with a path prefix) of absolute URLs in responses: FHIR links and `fullUrl`, openEHR and FHIR `Location`, Twilio callbacks; never taken from the `Host` header',
  },
  {
    names: ['TRUST_PROXY'],
    default: '`false`',
    meaning: 'behind a reverse proxy: with `PUBLIC_URL` unset, absolute URLs use `X-Forwarded-Host` / `X-Forwarded-Proto`',
  },
  { names: ['SIM_SEND_DELAY_MS', 'SIM_DELIVER_DELAY_MS'], default: '`200`, `800`', meaning: 'simulator timings' },
  {
    names: ['EMAIL_PROVIDER', 'SMTP_URL', 'EMAIL_FROM'],
    default: 'see [messaging](messaging.md)',
    meaning: 'email over SMTP (nodemailer); `SMTP_URL` takes one relay or an ordered, comma-separated list tried in turn',
  },
  {
    names: ['DELIVERY_LEASE_MS'],
    default: 'see [messaging](messaging.md)',
    meaning: 'how long a worker holds a message in `sending` before another may retry it',
  },
  {
    names: ['DELIVERY_JOB_EXPIRY_SECONDS'],
    default: 'see [messaging](messaging.md)',
    meaning: 'how long a send job fetched by a worker that died stays taken before another worker gets it',
  },
  { names: ['PREVIOUS_ENCRYPTION_KEYS'], default: 'none', meaning: 'comma-separated base64 keys still accepted for reading during a key rotation' },
  {
    names: ['AUDIT_HMAC_KEY'],
    default: 'dev key in `DATA_DIR`',
    meaning:
      'base64 of at least 32 bytes: keys the audit hash chain (HMAC-SHA-256) and signs its checkpoints; never stored in the database ([details](clinical-record.md#audit-trail-and-access-log))',
  },
  {
    names: ['AUDIT_CHECKPOINT_FILE'],
    default: '`audit-checkpoints.jsonl` in `DATA_DIR`',
    meaning: 'append-only file of signed audit-chain checkpoints, kept outside the database',
  },
  { names: ['AUDIT_CHECKPOINT_INTERVAL'], default: '`5m`', meaning: 'how often each EHR process checkpoints the chains that moved (ms, s, m, h)' },
  {
    names: ['REDIS_EVENTS_CHANNEL'],
    default: '`caregraph:events`',
    meaning:
      'Redis pub/sub channel of the live event bus; every event on it is encrypted with `ENCRYPTION_KEY`, so all roles share the key ([security](security.md))',
  },
  {
    names: ['AI_AGENT_CLIENTS'],
    default: '`*`',
    meaning:
      "which token clients (`client_id`/`azp`) are AI agents, held to the patient's `AI_ASSISTANCE` consent on every surface: `*` every token naming a client, a comma-separated list only those, empty none outside `/mcp` ([AI agents](ai-agents.md))",
  },
  {
    names: ['SUBSCRIPTIONS_MAX_PER_CONNECTION', 'SUBSCRIPTIONS_CONNECTIONS_PER_MINUTE'],
    default: '`50`, `60`',
    meaning: 'WebSocket limits (per connection; per client IP)',
  },
  { names: ['GRAPHQL_EXPLORER'], default: 'on outside production', meaning: '`true`/`false`: the GraphiQL page at `GET /graphql` for browsers' },
  { names: ['OPENEHR_SYSTEM_ID'], default: '`caregraph.local`', meaning: 'system id in composition version uids' },
  {
    names: ['XDS_ASSIGNING_AUTHORITY', 'XDS_REPOSITORY_UNIQUE_ID'],
    default: '`2.999.1.1`, `2.999.1.2`',
    meaning: "IHE XDS.b: the affinity domain's patient id assigning authority and this repository's id (OIDs)",
  },
  {
    names: ['XDS_SOURCE_ID'],
    default: '`2.999.1.3`',
    meaning: 'IHE XDS.b: the `sourceId` (an OID) of the submission sets CareGraph publishes as a Document Source',
  },
  {
    names: ['XDS_REPOSITORY_URL'],
    default: 'unset',
    meaning:
      "the external repository's ITI-41 endpoint (`http://` or `https://`) that `publishPatientCcd` / `POST /api/ehr/patients/{id}/cda/publish` sends CCDs to; unset: publishing answers 409 `CONFLICT` ([details](exchange.md#publishing-ccds-to-an-external-repository-document-source))",
  },
  {
    names: ['XDS_REPOSITORY_TOKEN'],
    default: 'unset',
    meaning: 'bearer token sent to `XDS_REPOSITORY_URL` (for a CareGraph repository: a token of its tenant with the document write grant)',
  },
  {
    names: ['XDS_REPOSITORY_CA_FILE', 'XDS_REPOSITORY_CERT_FILE', 'XDS_REPOSITORY_KEY_FILE'],
    default: 'unset',
    meaning: "PEM files: CA certificates trusted for the repository's TLS (besides the system's); a client certificate and key for mutual TLS (set both)",
  },
  {
    names: ['XDS_REPOSITORY_TIMEOUT_MS'],
    default: '`20000`',
    meaning: "a publication without the repository's answer in this time fails with 502 `UPSTREAM_ERROR`",
  },
  { names: ['CORS_ORIGINS'], default: 'none', meaning: 'comma-separated origins allowed to call the API from a browser' },
  { names: ['TLS_CERT_FILE', 'TLS_KEY_FILE'], default: 'unset', meaning: 'serve HTTPS (TLS 1.3 minimum) with this certificate and key' },
  {
    names: ['REQUEST_TIMEOUT_MS'],
    default: '`30000`',
    meaning:
      'request deadline: past it a request that changed nothing gets 503 `SERVICE_UNAVAILABLE` with `X-Request-Outcome: not-started` (safe to retry); a write already under way finishes and answers late, or at twice this time 503 with `X-Request-Outcome: unknown` and, for a send, the `Idempotency-Key` to retry with (docs/security.md, "Request deadlines")',
  },
  {
    names: ['SHUTDOWN_GRACE_MS'],
    default: '`30000`',
    meaning:
      "on SIGTERM/SIGINT, how long requests in flight may take to finish before their connections are cut (as long as `REQUEST_TIMEOUT_MS`, so a request that may still answer is never cut; give the orchestrator's stop timeout this plus 15 s) ([operations](operations.md#stopping))",
  },
  { names: ['GRAPHQL_MAX_DEPTH', 'GRAPHQL_MAX_ALIASES', 'GRAPHQL_MAX_COST'], default: '`12`, `30`, `10000`', meaning: 'GraphQL document limits' },
  { names: ['RATE_LIMIT_KEY_PREFIX'], default: '`caregraph:rl`', meaning: 'Redis key prefix of the rate-limit counters' },
  { names: ['LOG_LEVEL'], default: '`info`', meaning: 'pino level (`silent` … `trace`)' },
  {
    names: ['METRICS_PORT'],
    default: 'unset (worker role: `9464`)',
    meaning:
      "a listener serving only `GET /metrics` and `GET /healthz`: the worker role's (it has no other HTTP server); on other roles an extra one ([observability](observability.md#metrics))",
  },
  {
    names: ['OTEL_EXPORTER_OTLP_ENDPOINT'],
    default: 'unset',
    meaning:
      'OTLP/HTTP collector base URL (`http://collector:4318`): export traces to `<url>/v1/traces`; unset, tracing is off at no cost ([observability](observability.md#traces))',
  },
  { names: ['OTEL_SERVICE_NAME'], default: '`caregraph` (all-in-one), `caregraph-<role>`', meaning: '`service.name` of the exported traces' },
  {
    names: ['NODE_ENV'],
    default: '`development`',
    meaning: '`production` refuses dev secrets, seeds no demo data, turns introspection and GraphQL "Did you mean …" suggestions off',
  },
];

/** The variables a row stands for. */
export function variablesOf(row: ConfigRow): string[] {
  return row.names.flatMap((name) =>
    name === 'RATE_LIMIT_<CATEGORY>' ? CONFIG_VARIABLES.filter((v) => v.startsWith('RATE_LIMIT_') && v !== 'RATE_LIMIT_KEY_PREFIX') : [name],
  );
}

/** The Markdown table of the reference. */
export function renderConfigReference(): string {
  const cells = (row: ConfigRow) => [row.names.map((name) => `\`${name}\``).join(', '), row.default, row.meaning];
  return ['| variable | default | meaning |', '|---|---|---|', ...CONFIG_REFERENCE.map((row) => `| ${cells(row).join(' | ')} |`)].join('\n');
}
