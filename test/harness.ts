import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../common/db/database';
import { issueAccessToken } from '../common/auth/tokens';
import { startPlatform, type Platform, type ProcessRole } from '../bin/platform';

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
  token(options?: { tenants?: string[]; roles?: string[]; sub?: string; patientId?: string; ttlSeconds?: number }): Promise<string>;
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

export async function startTestPlatform(extraEnv: Record<string, string> = {}, role: ProcessRole = 'all'): Promise<TestPlatform> {
  // A caller-chosen DATABASE_URL ('' = file-backed PGlite in DATA_DIR) is used as is and never dropped.
  const database: TestDatabase = 'DATABASE_URL' in extraEnv ? { databaseUrl: extraEnv.DATABASE_URL, drop: async () => {} } : await createTestDatabase();
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
    // Rate-limit counters of parallel test files and CI runs on one Redis must not add up.
    RATE_LIMIT_KEY_PREFIX: `test:${randomUUID()}`,
    ...extraEnv,
  };
  const platform = await startPlatform(role, env);
  const url = platform.gateway!.url.replace('localhost', '127.0.0.1');
  const secret = platform.runtime.secrets.jwtSecret!;

  const token: TestPlatform['token'] = (options = {}) =>
    issueAccessToken(secret, {
      sub: options.sub ?? 'test-user',
      tenants: options.tenants ?? ['demo'],
      roles: options.roles ?? ['admin'],
      patientId: options.patientId,
      ttlSeconds: options.ttlSeconds ?? 600,
    });
  let defaultToken: string | undefined;

  const request: TestPlatform['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const auth = options.token === undefined ? (defaultToken ??= await token()) : options.token;
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

/** Which database the e2e suites run on in this run, for test names. */
export const backendName = process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite';
