// Jest globalSetup helper of the end-to-end project: one platform start on a
// fresh database migrates and seeds it (both subgraphs, pg-boss's schema, the
// runtime role's grants and row-level security), and every test platform then
// starts from a copy of it instead of doing that work again (test/harness.ts).
// PGlite: a dumpDataDir() tarball, loaded per platform with loadDataDir.
// PostgreSQL (TEST_DATABASE_URL): a template database, copied per platform
// with CREATE DATABASE … TEMPLATE. Runs the compiled platform (dist/), which
// scripts/build.js has just brought up to date.
'use strict';
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const ENV_VAR = 'CAREGRAPH_TEST_SNAPSHOT';

const isPostgres = (url) => !!url && /^postgres(ql)?:\/\//i.test(url);

async function asAdmin(admin, fn) {
  const pg = require('pg');
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function buildSnapshot() {
  const started = Date.now();
  // The platform's GraphQL types need it loaded first (as the test files' setupFiles do).
  require('reflect-metadata');
  const { startPlatform } = require(path.join(root, 'dist/bin/platform.js'));
  const { openDatabase } = require(path.join(root, 'dist/common/db/database.js'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'caregraph-snapshot-'));
  // The seed encrypts with these keys: platforms started from the snapshot must use the same ones.
  const secrets = {
    AUTH_JWT_SECRET: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    AUDIT_HMAC_KEY: randomBytes(32).toString('base64'),
  };
  const manifest = { dir, secrets };
  const admin = process.env.TEST_DATABASE_URL?.trim();
  let databaseUrl = 'memory://';
  if (isPostgres(admin)) {
    manifest.postgresTemplate = `caregraph_snapshot_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
    await asAdmin(admin, (c) => c.query(`CREATE DATABASE "${manifest.postgresTemplate}"`));
    const url = new URL(admin);
    url.pathname = `/${manifest.postgresTemplate}`;
    databaseUrl = url.toString();
  }
  let dump;
  const env = {
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: path.join(dir, 'data'),
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    TENANTS: 'demo,acme',
    ...secrets,
  };
  const platform = await startPlatform('all', env, {
    // The dump is taken when the platform closes its database: after every worker has stopped.
    openDatabase: async (options) => {
      const db = await openDatabase(options);
      if (!db.dumpDataDir) return db;
      return { ...db, close: async () => ((dump = await db.dumpDataDir()), db.close()) };
    },
  });
  await platform.stop();
  if (manifest.postgresTemplate) {
    // A template must have no sessions when it is copied; none may open one from now on.
    await asAdmin(admin, (c) => c.query(`ALTER DATABASE "${manifest.postgresTemplate}" ALLOW_CONNECTIONS false`));
    await asAdmin(admin, (c) => c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [manifest.postgresTemplate]));
  } else {
    manifest.pglite = path.join(dir, 'pglite.tar');
    fs.writeFileSync(manifest.pglite, dump);
  }
  const file = path.join(dir, 'manifest.json');
  fs.writeFileSync(file, JSON.stringify(manifest));
  process.env[ENV_VAR] = file;
  process.stderr.write(`test setup: migrated and seeded the snapshot database in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

async function removeSnapshot() {
  const file = process.env[ENV_VAR];
  if (!file || !fs.existsSync(file)) return;
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (manifest.postgresTemplate) {
    await asAdmin(process.env.TEST_DATABASE_URL, (c) => c.query(`DROP DATABASE IF EXISTS "${manifest.postgresTemplate}" WITH (FORCE)`));
  }
  fs.rmSync(manifest.dir, { recursive: true, force: true });
}

module.exports = { buildSnapshot, removeSnapshot, ENV_VAR };
