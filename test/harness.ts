import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../common/clock';
import type { TestDatabase } from '../common/db/test-backends';
import type { Platform, ProcessRole } from '../bin/platform';
import { snapshotManifest, type SnapshotManifest } from './support/process-database';

/**
 * The platform's code as test/support/e2e-environment.js loaded it, once per Jest worker from dist/, outside this
 * file's sandbox. Objects handed to it must be of its realm where it checks their class (a Date).
 */
interface PlatformModules {
  platform: typeof import('../bin/platform');
  database: typeof import('../common/db/database');
  testBackends: typeof import('../common/db/test-backends');
  tokens: typeof import('../common/auth/tokens');
  load(relative: string): unknown;
  /** A file's bytes in shared memory, read once per Jest worker (the snapshot tarball). */
  sharedFile(path: string): Uint8Array;
  Date: DateConstructor;
}
const loaded = (globalThis as { __caregraphPlatformModules?: PlatformModules }).__caregraphPlatformModules;
if (!loaded) throw new Error('test/harness.ts runs in the e2e project, whose environment loads the platform (jest.config.js)');
const modules: PlatformModules = loaded;
const { startPlatform } = modules.platform;
const { openDatabase } = modules.database;
const { createTestDatabase } = modules.testBackends;
const { issueAccessToken } = modules.tokens;

/**
 * A module of the platform as the platform itself loaded it (`relative` to the repository, without extension), for a
 * test that hands it the platform's objects: a copy loaded in the test's sandbox would not know them (its metrics
 * registry, say). Type it with `typeof import(…)` of the same module.
 */
export function platformModule<T>(relative: string): T {
  return modules.load(relative) as T;
}

/** A test's clock as the platform's realm sees it: its dates built with the platform's Date. */
function inPlatformRealm(clock: Clock): Clock {
  return {
    now: () => new modules.Date(clock.now().getTime()),
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    clearTimeout: (timer) => clock.clearTimeout(timer),
  };
}

/**
 * In-process test harness: the real all-in-one platform (gateway and both
 * subgraphs over real HTTP on free ports) on a fresh database: an in-memory
 * PGlite, or a new database on TEST_DATABASE_URL's server when that is set.
 */
export interface TestPlatform {
  platform: Platform;
  url: string;
  env: Record<string, string>;
  /** A bearer token; defaults: tenant demo, role admin. */
  token(options?: {
    tenants?: string[];
    roles?: string[];
    sub?: string;
    patientId?: string;
    clientId?: string;
    scope?: string;
    actor?: string;
    ttlSeconds?: number;
  }): Promise<string>;
  /** An HTTP call to the gateway; `token: null` sends no Authorization header. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** A GraphQL operation through the gateway. */
  graphql(query: string, variables?: Record<string, unknown>, options?: RequestOptions): Promise<TestResponse>;
  stop(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string | Buffer;
  token?: string | null;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** This run's snapshot database, with its PGlite tarball (read once per Jest worker: see the environment). */
let snapshot: { manifest: SnapshotManifest; pglite?: Uint8Array } | null | undefined;

function loadSnapshot(): typeof snapshot {
  if (snapshot !== undefined) return snapshot;
  const manifest = snapshotManifest();
  return (snapshot = manifest && { manifest, pglite: manifest.pglite ? modules.sharedFile(manifest.pglite) : undefined });
}

/**
 * Settings that make a platform's database differ from the snapshot's: its own
 * database, keys the seed was not encrypted with, or production (which never seeds).
 */
const OWN_DATABASE = [
  'DATABASE_URL',
  'DATABASE_OWNER_URL',
  'AUTH_JWT_SECRET',
  'AUTH_JWKS_URL',
  'ENCRYPTION_KEY',
  'PREVIOUS_ENCRYPTION_KEYS',
  'AUDIT_HMAC_KEY',
  'NODE_ENV',
  'TENANTS',
];

/**
 * A copy of the run's migrated and seeded database, for a test that assembles the platform's parts itself: where
 * it is (on PGlite, `memory://` opened with `loadDataDir`) and the keys its seed was sealed with (pass them to the
 * configuration). Without a snapshot (a file run outside the e2e project): an empty database and no keys.
 */
export async function seededDatabase(): Promise<TestDatabase & { secrets: Record<string, string>; loadDataDir?: Uint8Array }> {
  const seeded = loadSnapshot();
  const database = await createTestDatabase({ template: seeded?.manifest.postgresTemplate });
  return { ...database, secrets: seeded?.manifest.secrets ?? {}, loadDataDir: seeded?.pglite };
}

export async function startTestPlatform(
  extraEnv: Record<string, string> = {},
  role: ProcessRole = 'all',
  options: { clock?: Clock } = {},
): Promise<TestPlatform> {
  // A caller-chosen DATABASE_URL ('' = file-backed PGlite in DATA_DIR) is used as is and never dropped.
  const database: TestDatabase & { secrets?: Record<string, string>; loadDataDir?: Uint8Array } =
    'DATABASE_URL' in extraEnv
      ? { databaseUrl: extraEnv.DATABASE_URL, drop: async () => {} }
      : OWN_DATABASE.some((name) => name in extraEnv)
        ? await createTestDatabase()
        : await seededDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-test-'));
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: database.databaseUrl,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SIM_SEND_DELAY_MS: '20',
    SIM_DELIVER_DELAY_MS: '50',
    ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
    // Rate-limit counters of parallel test files and CI runs on one Redis must not add up,
    // nor may one platform see another's live events (platforms that must share pass the same channel).
    RATE_LIMIT_KEY_PREFIX: `test:${randomUUID()}`,
    REDIS_EVENTS_CHANNEL: `caregraph:test:${randomUUID()}`,
    // The tenants the tests use; production mode requires the setting.
    TENANTS: 'demo,acme',
    ...database.secrets,
    ...extraEnv,
  };
  const loadDataDir = database.loadDataDir;
  const clock = options.clock;
  const platform = await startPlatform(role, env, {
    clock: clock && inPlatformRealm(clock),
    ...(loadDataDir ? { openDatabase: (opened) => openDatabase({ ...opened, loadDataDir }) } : {}),
  });
  const url = platform.gateway!.url.replace('localhost', '127.0.0.1');
  const secret = platform.runtime.secrets.jwtSecret!;

  // Issuer and audience as configured, so a platform started with AUTH_ISSUER accepts the tokens.
  const token: TestPlatform['token'] = (options = {}) =>
    issueAccessToken(
      secret,
      {
        sub: options.sub ?? 'test-user',
        tenants: options.tenants ?? ['demo'],
        roles: options.roles ?? ['admin'],
        patientId: options.patientId,
        clientId: options.clientId,
        scope: options.scope,
        actor: options.actor,
        ttlSeconds: options.ttlSeconds ?? 600,
      },
      platform.runtime.config,
      clock,
    );
  let defaultToken: string | undefined;

  const request: TestPlatform['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    // A test that moves the platform's clock gets a token minted at the clock's time on every request.
    const auth = options.token === undefined ? (clock ? await token() : (defaultToken ??= await token())) : options.token;
    if (auth) headers.authorization = `Bearer ${auth}`;
    let body: string | Buffer | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${url}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };

  return {
    platform,
    url,
    env,
    token,
    request,
    graphql: (query, variables, options = {}) => request('POST', '/graphql', { ...options, body: { query, variables } }),
    stop: async () => {
      await platform.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The environment of one scale-out deployment in tests (separate gateway,
 * subgraph and worker roles on PostgreSQL and Redis): its roles share one
 * event channel and rate-limit prefix, and no other test file's platforms do.
 */
export function scaleOutEnv(dataDir: string, databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.TEST_REDIS_URL!,
    REDIS_EVENTS_CHANNEL: `caregraph:test:${randomUUID()}`,
    RATE_LIMIT_KEY_PREFIX: `test:${randomUUID()}`,
    LOG_LEVEL: 'silent',
    EHR_PORT: '0',
    MESSAGING_PORT: '0',
    PORT: '0',
    // The worker role's metrics listener (9464 by default) on a free port too.
    METRICS_PORT: '0',
    ...extra,
  };
}

/** Which database the e2e suites run on in this run, for test names. */
export const backendName = process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite';
