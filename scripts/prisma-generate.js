#!/usr/bin/env node
// Generates both subgraphs' Prisma clients (postinstall and `npm run db:generate`).
// Prisma 7's CLI wants a native schema engine at start and tries to download it;
// `prisma generate` never uses it, so we point PRISMA_SCHEMA_ENGINE_BINARY at an
// existing file and switch off every other network call (update check, telemetry).
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const subgraphs = ['messaging', 'ehr'];

function findPrismaCli() {
  try {
    return require.resolve('prisma/build/index.js', { paths: [root] });
  } catch {
    return null;
  }
}

const cli = findPrismaCli();
if (!cli) {
  // Production installs (`npm ci --omit=dev`) have no prisma CLI: the generated
  // clients are then expected to come with the build.
  console.log('[prisma-generate] prisma CLI not installed, skipping client generation');
  process.exit(0);
}

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY:
    process.env.PRISMA_SCHEMA_ENGINE_BINARY && fs.existsSync(process.env.PRISMA_SCHEMA_ENGINE_BINARY)
      ? process.env.PRISMA_SCHEMA_ENGINE_BINARY
      : process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  PRISMA_DISABLE_WARNINGS: '1',
  CHECKPOINT_DISABLE: '1',
  PRISMA_TELEMETRY_INFORMATION: '',
  PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING: '1',
  PRISMA_GENERATE_SKIP_AUTOINSTALL: '1',
  PRISMA_HIDE_PREVIEW_FLAG_WARNINGS: '1',
};

let failed = false;
for (const name of subgraphs) {
  const schema = path.join('prisma', name, 'schema.prisma');
  if (!fs.existsSync(path.join(root, schema))) {
    console.error(`[prisma-generate] ${schema} not found`);
    failed = true;
    continue;
  }
  const started = Date.now();
  const res = spawnSync(process.execPath, [cli, 'generate', '--schema', schema], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  if (res.status !== 0) {
    failed = true;
    console.error(`[prisma-generate] ${name}: prisma generate failed (exit ${res.status ?? res.signal})`);
    process.stderr.write(res.stdout || '');
    process.stderr.write(res.stderr || '');
    continue;
  }
  console.log(`[prisma-generate] ${name}: client generated in subgraphs/${name}/db/generated (${Date.now() - started} ms)`);
}
process.exit(failed ? 1 : 0);
