import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { issueAccessToken } from '../../common/auth/tokens';
import { createTestDatabase } from '../../common/db/test-backends';

/** The migrated and seeded database of this jest run (test/support/snapshot.js). */
export interface SnapshotManifest {
  /** The keys the seed was encrypted with (AUTH_JWT_SECRET, ENCRYPTION_KEY, AUDIT_HMAC_KEY). */
  secrets: Record<string, string>;
  /** PGlite: an uncompressed dumpDataDir() tarball. */
  pglite?: string;
  /** PostgreSQL: the template database on TEST_DATABASE_URL's server. */
  postgresTemplate?: string;
}

let manifest: SnapshotManifest | null | undefined;

/** This run's snapshot, or null: none made (a file run outside the e2e project), or made for the other backend. */
export function snapshotManifest(): SnapshotManifest | null {
  if (manifest !== undefined) return manifest;
  const file = process.env.CAREGRAPH_TEST_SNAPSHOT;
  if (!file) return (manifest = null);
  const read = JSON.parse(readFileSync(file, 'utf8')) as SnapshotManifest;
  // TEST_DATABASE_URL set or unset since it was made: it does not apply.
  return (manifest = !!read.postgresTemplate === !!process.env.TEST_DATABASE_URL ? read : null);
}

/** The database of a compiled server a test runs as a child process (scripts/support/server-process.ts). */
export interface ProcessDatabase {
  /** DATABASE_URL, the keys and TENANTS to pass to every process on this database. */
  env: Record<string, string>;
  /** A bearer token those processes accept: tenant demo, role admin. */
  token(): Promise<string>;
  drop(): Promise<void>;
}

/**
 * A copy of the run's snapshot for child processes, so they start on a
 * migrated and seeded database instead of doing that work themselves: on
 * PGlite its files unpacked into `<dataDir>/pglite` (where a process with an
 * empty DATABASE_URL keeps them), on PostgreSQL a database made from the
 * template. Without a snapshot, an empty database and keys of its own.
 */
export async function processDatabase(dataDir: string): Promise<ProcessDatabase> {
  const snapshot = snapshotManifest();
  const database = await createTestDatabase({ template: snapshot?.postgresTemplate });
  if (snapshot?.pglite) {
    const files = join(dataDir, 'pglite');
    mkdirSync(files, { recursive: true });
    // stderr piped: tar's note on the members' leading '/' stays out of the test output, and in the error if it fails.
    execFileSync('tar', ['-xf', snapshot.pglite, '-C', files], { stdio: 'pipe' });
  }
  const secrets = snapshot?.secrets ?? {
    AUTH_JWT_SECRET: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    AUDIT_HMAC_KEY: randomBytes(32).toString('base64'),
  };
  const jwtSecret = new TextEncoder().encode(secrets.AUTH_JWT_SECRET);
  return {
    // An empty DATABASE_URL: PGlite files in DATA_DIR, which outlive a killed process as PostgreSQL does.
    env: { ...secrets, TENANTS: 'demo,acme', DATABASE_URL: database.databaseUrl === 'memory://' ? '' : database.databaseUrl },
    token: () => issueAccessToken(jwtSecret, { sub: 'process-test', tenants: ['demo'], roles: ['admin'], ttlSeconds: 600 }),
    drop: () => database.drop(),
  };
}

/** JSON calls to a started server with one bearer token: `{status, body}`. */
export function serverApi(base: string, token: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: await res.json() };
  };
}
