#!/usr/bin/env node
// `npm run build`: brings dist/ up to date. The server is recompiled only when a
// source is newer than the last build (`tsc` itself is incremental), the
// dashboard and the GraphQL explorer only when their sources are, so the npm
// scripts that build before they run (`npm start`, `db:migrate`, …) start at
// once when nothing changed; the Prisma clients are generated again when a
// schema is newer than them. Each step says what it does before it starts (a
// first build takes a while) and how long it took. `--force` builds everything.
// The end-to-end tests' Jest globalSetup calls it once per run, before any test
// file starts, so that no test compiles.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** The newest modification time under `dirs` (files whose name passes `keep`), or 0. */
function newest(dirs, keep) {
  let latest = 0;
  const visit = (p) => {
    let stat;
    try {
      stat = fs.statSync(p);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      if (path.basename(p) === 'node_modules') return;
      for (const name of fs.readdirSync(p)) visit(path.join(p, name));
    } else if (keep(p)) latest = Math.max(latest, stat.mtimeMs);
  };
  for (const dir of dirs) visit(path.join(root, dir));
  return latest;
}

const builtAt = (file) => {
  try {
    return fs.statSync(path.join(root, file)).mtimeMs;
  } catch {
    return -1;
  }
};

function run(args, what) {
  const started = Date.now();
  process.stderr.write(`build: ${what} …\n`);
  execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  process.stderr.write(`build: ${what}: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

function build({ force = false } = {}) {
  const admin = path.join('gateway', 'admin');
  const explorer = path.join('gateway', 'explorer');
  const pages = [admin, explorer].map((dir) => path.join(root, dir) + path.sep);
  const serverSources = newest(
    ['bin', 'common', 'gateway', 'subgraphs', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    (p) => !pages.some((dir) => p.startsWith(dir)) && !p.endsWith('.test.ts'),
  );
  // A pulled schema change: the generated Prisma clients first (npm install generates them too), so the
  // server compiles against them.
  const staleClient = ['messaging', 'ehr'].some(
    (name) => builtAt(path.join('prisma', name, 'schema.prisma')) > builtAt(path.join('subgraphs', name, 'db', 'generated', 'client.ts')),
  );
  if (force || staleClient) run([path.join(root, 'scripts', 'prisma-generate.js')], 'generating the Prisma clients (prisma generate)');
  const stamp = path.join('dist', '.tsbuildinfo');
  if (force || serverSources > builtAt(stamp)) {
    run([path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], 'compiling the server (tsc -p tsconfig.build.json)');
    // tsc leaves its build info untouched when nothing changed; the stamp marks this check as done.
    const now = new Date();
    fs.utimesSync(path.join(root, stamp), now, now);
  }
  const dashboard = path.join('dist', 'admin', 'index.html');
  // The dashboard bundles the event types from common/events/types.ts too.
  if (force || newest([admin, path.join('common', 'events', 'types.ts'), 'package-lock.json'], () => true) > builtAt(dashboard)) {
    run(
      [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'gateway/admin/vite.config.mts', '--logLevel', 'error'],
      'building the admin dashboard (vite build)',
    );
  }
  if (force || newest([explorer, 'package-lock.json'], () => true) > builtAt(path.join('dist', 'explorer', 'index.html'))) {
    run(
      [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'gateway/explorer/vite.config.mts', '--logLevel', 'error'],
      'building the GraphQL explorer (vite build)',
    );
  }
}

module.exports = build;

if (require.main === module) build({ force: process.argv.includes('--force') });
