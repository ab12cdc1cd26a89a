/**
 * The scale-out topology of deploy/compose.yaml as OS processes on this machine:
 * HAProxy in front of two gateways, the messaging and EHR subgraphs, two
 * workers, on the machine's PostgreSQL and Redis (docs/deploy.md).
 *
 *   npm run cluster          (node dist/scripts/cluster.js; Ctrl-C stops it)
 *   npm run cluster -- --replicated
 *                            the same processes on replicated stores of their own: PostgreSQL
 *                            primary + standby under Patroni (etcd) behind HAProxy, Redis master +
 *                            replica under three Sentinels (scripts/support/replicated-stores.ts)
 *
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), REDIS_URL
 * (default redis://127.0.0.1:6379; both ignored with --replicated), PORT: HAProxy's port (default 4000),
 * HAPROXY: the binary (default /usr/sbin/haproxy); every other variable is
 * passed to all processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessRole } from '../bin/platform';
import { freePort, killIfRunning, startServer, type ServerProcess } from './support/server-process';
import { haproxyConfig } from './haproxy-config';
import { startReplicatedStores, type ReplicatedStores } from './support/replicated-stores';

export interface ClusterOptions {
  /** The environment every process gets (DATABASE_URL and REDIS_URL included). */
  env: Record<string, string>;
  /** HAProxy's port; default: a free one. */
  port?: number;
  haproxy?: string;
  gateways?: number;
  workers?: number;
  /** How long each process may take to be ready (default 90 s). */
  readyTimeoutMs?: number;
}

export interface Cluster {
  /** HAProxy's front end: what clients call. */
  base: string;
  gateways: ServerProcess[];
  workers: ServerProcess[];
  messaging: ServerProcess;
  ehr: ServerProcess;
  haproxy: ChildProcess;
  /** HAProxy's configuration file (in a temporary folder removed by stop()). */
  configFile: string;
  /** SIGTERM to every process (HAProxy last), then waits for them to exit. */
  stop(): Promise<void>;
}

export const DEFAULT_HAPROXY = '/usr/sbin/haproxy';

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const started: ServerProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'caregraph-cluster-'));
  let haproxy: ChildProcess | undefined;
  const start = async (role: ProcessRole, env: Record<string, string> = {}, port?: number) => {
    const server = await startServer({ ...options.env, ...env }, { role, port, readyTimeoutMs: options.readyTimeoutMs });
    started.push(server);
    return server;
  };
  try {
    // Everything at once: the gateways load the committed supergraph (schema/) and call the
    // subgraphs only per request, so they need the subgraphs' addresses, not the subgraphs.
    const [ehrPort, messagingPort] = [await freePort(), await freePort()];
    const urls = { EHR_URL: `http://127.0.0.1:${ehrPort}/graphql`, MESSAGING_URL: `http://127.0.0.1:${messagingPort}/graphql` };
    const [ehr, messaging, gateways, workers] = await Promise.all([
      start('ehr', {}, ehrPort),
      start('messaging', urls, messagingPort),
      Promise.all(Array.from({ length: options.gateways ?? 2 }, () => start('gateway', urls))),
      Promise.all(Array.from({ length: options.workers ?? 2 }, () => start('worker', urls))),
    ]);
    const port = options.port ?? (await freePort());
    const configFile = join(dir, 'haproxy.cfg');
    writeFileSync(
      configFile,
      haproxyConfig({ bind: `127.0.0.1:${port}`, gateways: gateways.map((g, i) => ({ name: `gateway-${i + 1}`, address: new URL(g.base).host })) }),
    );
    haproxy = await startHaproxy(options.haproxy ?? DEFAULT_HAPROXY, configFile, `http://127.0.0.1:${port}`);
    const proxy = haproxy;
    return {
      base: `http://127.0.0.1:${port}`,
      gateways,
      workers,
      messaging,
      ehr,
      haproxy,
      configFile,
      stop: async () => {
        // Gateways first (they drain), then workers and subgraphs, HAProxy last.
        await stopAll(gateways);
        await stopAll([...workers, messaging, ehr]);
        await stopProcess(proxy);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const server of started) killIfRunning(server);
    if (haproxy && haproxy.exitCode === null) haproxy.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function startHaproxy(binary: string, configFile: string, base: string): Promise<ChildProcess> {
  // -db: stay in the foreground, so the process is ours to signal and wait for.
  const child = spawn(binary, ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`haproxy exited (${code}):\n${output}`)));
  });
  const deadline = Date.now() + 20_000;
  const ready = (async () => {
    for (;;) {
      try {
        if ((await fetch(`${base}/readyz`)).status === 200) return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) throw new Error(`haproxy did not serve in time:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  await Promise.race([ready, failed]);
  failed.catch(() => {});
  return child;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

const stopAll = (servers: ServerProcess[]) => Promise.all(servers.map((s) => stopProcess(s.child)));

async function main(): Promise<void> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  let stores: ReplicatedStores | undefined;
  if (process.argv.includes('--replicated')) {
    console.log('starting the replicated stores (etcd, Patroni, HAProxy, Redis, Sentinel)…');
    stores = await startReplicatedStores({ log: (line) => console.log(line) });
    env.DATABASE_URL = stores.databaseUrl;
    env.REDIS_URL = stores.redisUrl;
  }
  env.DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/postgres';
  env.REDIS_URL ||= 'redis://127.0.0.1:6379';
  // The subgraphs' ports: free ones, whatever the environment says.
  env.MESSAGING_PORT = '0';
  env.EHR_PORT = '0';
  const port = env.PORT ? Number(env.PORT) : 4000;
  const cluster = await startCluster({ env, port, haproxy: env.HAPROXY }).catch(async (err) => {
    await stores?.stop();
    throw err;
  });
  // Every process's log lines on this terminal, each prefixed with its process.
  const named: [string, ServerProcess][] = [
    ...cluster.gateways.map((g, i): [string, ServerProcess] => [`gateway-${i + 1}`, g]),
    ['messaging', cluster.messaging],
    ['ehr', cluster.ehr],
    ...cluster.workers.map((w, i): [string, ServerProcess] => [`worker-${i + 1}`, w]),
  ];
  for (const [name, server] of named) {
    for (const stream of [server.child.stdout!, server.child.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) if (line) process.stdout.write(`${name} | ${line}\n`);
      });
    }
  }
  const table = [
    ['haproxy', cluster.base, cluster.haproxy.pid],
    ...cluster.gateways.map((g, i) => [`gateway-${i + 1}`, g.base, g.child.pid]),
    ['messaging', cluster.messaging.base, cluster.messaging.child.pid],
    ['ehr', cluster.ehr.base, cluster.ehr.child.pid],
    ...cluster.workers.map((w, i) => [`worker-${i + 1}`, '-', w.child.pid]),
  ];
  for (const [name, url, pid] of table) console.log(`${String(name).padEnd(10)} ${String(url).padEnd(28)} pid ${pid}`);
  for (const line of stores?.describe() ?? []) console.log(line);
  console.log(`CareGraph cluster on ${cluster.base} (HAProxy config ${cluster.configFile}); Ctrl-C stops it`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    cluster
      .stop()
      .then(() => stores?.stop())
      .then(
        () => process.exit(0),
        (err) => {
          console.error(err);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
