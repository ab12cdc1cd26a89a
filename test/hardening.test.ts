import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../common/config';

describe('hardening settings (configuration)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'caregraph-config-'));
    writeFileSync(join(dir, 'cert.pem'), 'x');
    writeFileSync(join(dir, 'key.pem'), 'x');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has safe defaults: no CORS origins, no TLS, 30 s deadline, GraphQL limits', () => {
    expect(loadConfig({}).TLS_CERT_FILE).toBeUndefined();
    expect(loadConfig({})).toMatchObject({
      CORS_ORIGINS: [],
      REQUEST_TIMEOUT_MS: 30_000,
      GRAPHQL_MAX_DEPTH: 12,
      GRAPHQL_MAX_ALIASES: 30,
      GRAPHQL_MAX_COST: 10_000,
      RATE_LIMIT_KEY_PREFIX: 'caregraph:rl',
    });
  });

  it('parses CORS_ORIGINS as exact origins and refuses wildcards, paths and junk', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).CORS_ORIGINS).toEqual(['https://a.example', 'http://localhost:5173']);
    for (const bad of ['*', 'https://a.example/', 'https://a.example/app', 'a.example', 'ftp://a.example']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(ConfigError);
    }
  });

  it('needs TLS_CERT_FILE and TLS_KEY_FILE together, both readable', () => {
    expect(loadConfig({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') }).TLS_KEY_FILE).toBe(join(dir, 'key.pem'));
    expect(() => loadConfig({ TLS_CERT_FILE: join(dir, 'cert.pem') })).toThrow(/set together/);
    expect(() => loadConfig({ TLS_CERT_FILE: join(dir, 'missing.pem'), TLS_KEY_FILE: join(dir, 'key.pem') })).toThrow(/TLS_CERT_FILE: is not a readable file/);
  });

  it('validates limits and the rate-limit key prefix without mistaking it for a category', () => {
    expect(loadConfig({ RATE_LIMIT_KEY_PREFIX: 'prod:eu1', RATE_LIMIT_MESSAGES_SEND: '5' })).toMatchObject({
      RATE_LIMIT_KEY_PREFIX: 'prod:eu1',
      rateLimits: { MESSAGES_SEND: 5 },
    });
    expect(() => loadConfig({ RATE_LIMIT_KEY_PREFIX: 'has space' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_SENDS: '5' })).toThrow(/unknown rate-limit category/);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '10' })).toThrow(/REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ GRAPHQL_MAX_DEPTH: '0' })).toThrow(/GRAPHQL_MAX_DEPTH/);
  });
});
