// How the embedded PGlite is reached: the platform's own worker-thread bridge
// (common/db/pglite-thread.ts + pglite-prisma-adapter + pg-boss executeSql on
// it) against @electric-sql/pglite-socket (PGlite behind a PostgreSQL wire
// protocol server; stock `pg`, @prisma/adapter-pg and pg-boss's own pool),
// with the socket server on a worker thread or on the main thread.
//
//   npm run build && node bench/pglite-bridge.mjs [runs]
//
// pglite-socket is not a dependency: install it somewhere and point
// PGLITE_SOCKET at its package folder (e.g. /tmp/x/node_modules/@electric-sql/pglite-socket).
// Every run is a fresh process with an in-memory database; variants alternate.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => require(path.join(root, 'dist', p));
const QUERIES = 300; // Prisma: create + findMany each
const JOBS = 200; // pg-boss: send, then fetch + complete each
const VARIANTS = ['thread-bridge', 'socket-worker', 'socket-main'];

async function workload(prismaBase, boss) {
  const { tenantClient } = dist('common/db/tenant-session.js');
  const prisma = tenantClient(prismaBase, 't1');
  const out = {};
  let t = performance.now();
  for (let i = 0; i < QUERIES; i++) {
    await prisma.messageTemplate.create({ data: { tenantId: 't1', id: `tpl${i}`, name: 'n', channel: 'sms', body: 'b', variables: [] } });
    await prisma.messageTemplate.findMany({ where: { tenantId: 't1' }, take: 10, orderBy: { id: 'desc' } });
  }
  out.prismaMsPerQuery = (performance.now() - t) / (2 * QUERIES);
  await boss.createQueue('bench');
  t = performance.now();
  for (let i = 0; i < JOBS; i++) await boss.send('bench', { i });
  out.bossSendMs = (performance.now() - t) / JOBS;
  t = performance.now();
  for (let i = 0; i < JOBS; i++) {
    const [job] = await boss.fetch('bench');
    await boss.complete('bench', job.id);
  }
  out.bossFetchCompleteMs = (performance.now() - t) / JOBS;
  return out;
}

async function runVariant(variant) {
  const { PrismaClient } = dist('subgraphs/messaging/db/generated/client.js');
  const started = performance.now();
  if (variant === 'thread-bridge') {
    const { openDatabase } = dist('common/db/database.js');
    const { migrateAll } = dist('common/db/migrate.js');
    const { createBoss } = dist('common/db/boss.js');
    const db = await openDatabase({ databaseUrl: 'memory://', dataDir: 'unused' });
    await migrateAll(db);
    const prisma = new PrismaClient({ adapter: db.adapterFactory('messaging') });
    const boss = await createBoss(db, { boss: { supervise: false, schedule: false } });
    await boss.start();
    const setupMs = performance.now() - started;
    const out = await workload(prisma, boss);
    await boss.stop({ graceful: false, wait: true });
    await prisma.$disconnect();
    await db.close();
    return { setupMs, ...out };
  }
  const socketDir = process.env.PGLITE_SOCKET;
  if (!socketDir) throw new Error('set PGLITE_SOCKET to the folder of an installed @electric-sql/pglite-socket');
  const socketModule = pathToFileURL(path.join(socketDir, 'dist', 'index.js')).href;
  const pgliteModule = pathToFileURL(require.resolve('@electric-sql/pglite')).href;
  let stop;
  let port;
  if (variant === 'socket-worker') {
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       (async () => {
         const { PGlite } = await import(${JSON.stringify(pgliteModule)});
         const { PGLiteSocketServer } = await import(${JSON.stringify(socketModule)});
         const db = await PGlite.create();
         const server = new PGLiteSocketServer({ db, port: 0, maxConnections: 8 });
         await server.start();
         parentPort.postMessage(server.port);
       })();`,
      { eval: true },
    );
    port = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
    stop = () => worker.terminate();
  } else {
    const { PGlite } = await import(pgliteModule);
    const { PGLiteSocketServer } = await import(socketModule);
    const db = await PGlite.create();
    const server = new PGLiteSocketServer({ db, port: 0, maxConnections: 8 });
    await server.start();
    port = server.port;
    stop = async () => {
      await server.stop();
      await db.close();
    };
  }
  const pg = require('pg');
  const { PrismaPg } = require('@prisma/adapter-pg');
  const PgBoss = require('pg-boss');
  const { readMigrations } = dist('common/db/migrate.js');
  const connectionString = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const setup = new pg.Client({ connectionString });
  await setup.connect();
  for (const m of await readMigrations('messaging')) await setup.query(m.sql);
  await setup.end();
  const pool = new pg.Pool({ connectionString, max: 4 });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { schema: 'messaging' }) });
  const boss = new PgBoss({ connectionString, max: 4, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  const setupMs = performance.now() - started;
  const out = await workload(prisma, boss);
  await boss.stop({ graceful: false, wait: true });
  await prisma.$disconnect();
  await pool.end();
  await stop();
  return { setupMs, ...out };
}

if (process.argv[2] === '--variant') {
  runVariant(process.argv[3]).then(
    (r) => {
      console.log(JSON.stringify(r));
      process.exit(0);
    },
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
} else {
  const runs = Number(process.argv[2] ?? 5);
  const results = Object.fromEntries(VARIANTS.map((v) => [v, []]));
  for (let i = 0; i < runs; i++) {
    for (const v of VARIANTS) {
      const out = await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--variant', v], { stdio: ['ignore', 'pipe', 'inherit'] });
        let text = '';
        child.stdout.on('data', (d) => (text += d));
        child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text.trim().split('\n').pop())) : reject(new Error(`${v} exited ${code}`))));
      });
      results[v].push(out);
    }
  }
  const fmt = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return `${s[0].toFixed(2)} / ${s[Math.floor(s.length / 2)].toFixed(2)} / ${s[s.length - 1].toFixed(2)}`;
  };
  console.log(`${runs} runs each, min / median / max (ms)`);
  console.log('| variant | set-up | Prisma query | pg-boss send | pg-boss fetch+complete |');
  console.log('|---|---|---|---|---|');
  for (const v of VARIANTS) {
    const r = results[v];
    console.log(
      `| ${v} | ${fmt(r.map((x) => x.setupMs))} | ${fmt(r.map((x) => x.prismaMsPerQuery))} | ${fmt(r.map((x) => x.bossSendMs))} | ${fmt(r.map((x) => x.bossFetchCompleteMs))} |`,
    );
  }
}
