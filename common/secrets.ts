import { randomBytes, hkdfSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config';

/**
 * Key material of a process. Outside production, missing secrets are generated
 * once into DATA_DIR so `npm start` and `npm run token` agree without setup.
 */
export interface Secrets {
  /** HS256 key for access tokens; undefined when tokens are verified through JWKS. */
  jwtSecret?: Uint8Array;
  /** AES-256-GCM key for clinical content and contact details at rest. */
  encryptionKey: Buffer;
  /** HMAC key of the audit hash chain and its checkpoints (AUDIT_HMAC_KEY); the database never holds it. */
  auditKey: Buffer;
  /** Key for the identity header the gateway signs for subgraphs (derived, never configured). */
  internalKey: Uint8Array;
  /** Where dev secrets came from, for the start-up log. */
  source: 'environment' | 'dev-file';
}

interface DevSecretsFile {
  jwtSecret: string;
  encryptionKey: string;
  /** Added later: files written before it lack it and get one on the next start. */
  auditKey?: string;
}

export function devSecretsPath(dataDir: string): string {
  return join(dataDir, 'dev-secrets.json');
}

function loadOrCreateDevSecrets(dataDir: string): DevSecretsFile {
  const path = devSecretsPath(dataDir);
  if (existsSync(path)) {
    const existing = JSON.parse(readFileSync(path, 'utf8')) as DevSecretsFile;
    if (existing.auditKey) return existing;
    const upgraded = { ...existing, auditKey: randomBytes(32).toString('base64') };
    writeFileSync(path, JSON.stringify(upgraded, null, 2), { mode: 0o600 });
    return upgraded;
  }
  mkdirSync(dataDir, { recursive: true });
  const created: DevSecretsFile = {
    jwtSecret: randomBytes(32).toString('base64url'),
    encryptionKey: randomBytes(32).toString('base64'),
    auditKey: randomBytes(32).toString('base64'),
  };
  // 'wx' fails if another process created it meanwhile; then read theirs.
  try {
    writeFileSync(path, JSON.stringify(created, null, 2), { mode: 0o600, flag: 'wx' });
    return created;
  } catch {
    return JSON.parse(readFileSync(path, 'utf8')) as DevSecretsFile;
  }
}

export function resolveSecrets(config: Config): Secrets {
  const needsDev = (!config.AUTH_JWT_SECRET && !config.AUTH_JWKS_URL) || !config.ENCRYPTION_KEY || !config.AUDIT_HMAC_KEY;
  const dev = needsDev ? loadOrCreateDevSecrets(config.DATA_DIR) : undefined;
  const jwtText = config.AUTH_JWKS_URL ? undefined : (config.AUTH_JWT_SECRET ?? dev!.jwtSecret);
  const encryptionKey = Buffer.from(config.ENCRYPTION_KEY ?? dev!.encryptionKey, 'base64');
  const internalKey = new Uint8Array(hkdfSync('sha256', encryptionKey, 'caregraph', 'internal-identity-v1', 32));
  return {
    jwtSecret: jwtText ? new TextEncoder().encode(jwtText) : undefined,
    encryptionKey,
    auditKey: Buffer.from(config.AUDIT_HMAC_KEY ?? dev!.auditKey!, 'base64'),
    internalKey,
    source: dev ? 'dev-file' : 'environment',
  };
}
