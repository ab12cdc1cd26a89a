import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { postgresHaproxyConfig } from '../haproxy-config';
import { freePort } from './server-process';

/**
 * The replicated stores of `npm run cluster -- --replicated` and the chaos test,
 * from Debian's packages, as processes in one temporary folder on 127.0.0.1
 * (docs/deploy.md, Replicated stores):
 *
 * - PostgreSQL 15: two members run by Patroni (synchronous replication, a
 *   crashed primary fails over at once), the leader elected through a
 *   three-member etcd; HAProxy in front, health-checking Patroni's REST API
 *   (`/primary`), so its one port always leads to the current primary.
 * - Redis 7: a master and a replica watched by three Sentinels (quorum 2); the
 *   platform reaches the master through them (`redis+sentinel://`).
 */
interface PostgresMember {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  /** The Patroni agent of this member (its PostgreSQL is Patroni's child). */
  patroni: ChildProcess;
}

interface RedisMember {
  port: number;
  child: ChildProcess;
}

export interface ReplicatedStores {
  /** PostgreSQL through HAProxy: always the current primary. */
  databaseUrl: string;
  /** Redis through the Sentinels. */
  redisUrl: string;
  postgres: PostgresMember[];
  redis: RedisMember[];
  sentinels: RedisMember[];
  etcd: ChildProcess[];
  haproxy: ChildProcess;
  haproxyPort: number;
  /** The member Patroni's REST API calls the primary (and whose /primary answers 200). */
  leader(): Promise<PostgresMember | undefined>;
  /** The PID of a member's postmaster (first line of its postmaster.pid). */
  postmasterPid(member: PostgresMember): number;
  /** The Redis master the Sentinels name. */
  redisMaster(): Promise<RedisMember | undefined>;
  /** One line per process: name, address, PID. */
  describe(): string[];
  stop(): Promise<void>;
}

const PG_BIN = '/usr/lib/postgresql/15/bin';
const MASTER_NAME = 'caregraph';

/** Debian packages and the binary each brings. */
const PACKAGES: [pkg: string, binary: string][] = [
  ['patroni', '/usr/bin/patroni'],
  ['etcd-server', '/usr/bin/etcd'],
  ['redis-sentinel', '/usr/bin/redis-sentinel'],
  ['redis-server', '/usr/bin/redis-server'],
  ['haproxy', '/usr/sbin/haproxy'],
  ['postgresql-15', `${PG_BIN}/postgres`],
];

/** Installs the missing packages with apt-get when root; otherwise names them and fails. */
function ensurePackages(log: (line: string) => void = console.log): void {
  const missing = PACKAGES.filter(([, binary]) => !executable(binary)).map(([pkg]) => pkg);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `the replicated stores need the Debian packages ${missing.join(' ')}: run 'sudo apt-get install ${missing.join(' ')}' (or run this as root)`,
    );
  }
  log(`installing ${missing.join(' ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function startReplicatedStores(options: { log?: (line: string) => void } = {}): Promise<ReplicatedStores> {
  const log = options.log ?? (() => {});
  ensurePackages(log);
  const dir = mkdtempSync(join(tmpdir(), 'caregraph-replicated-'));
  // PostgreSQL refuses to run as root: as root, every store runs as the postgres user.
  const owner = process.getuid?.() === 0 ? userIds('postgres') : undefined;
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const children: ChildProcess[] = [];
  const spawnStore = (name: string, command: string, args: string[]) => {
    const logFile = join(dir, `${name}.log`);
    const child = spawn(command, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], ...(owner ?? {}) });
    let output = '';
    const keep = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.length > 200_000) output = output.slice(-100_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('exit', () => writeFileSync(logFile, output));
    outputs.set(child, () => output);
    children.push(child);
    return child;
  };
  const outputs = new Map<ChildProcess, () => string>();
  const dirFor = (name: string) => {
    const path = join(dir, name);
    mkdirSync(path, { mode: 0o700 });
    if (owner) chownSync(path, owner.uid, owner.gid);
    return path;
  };

  try {
    // etcd: three members, so Patroni's leader lock survives one of them.
    const etcdPorts = await Promise.all([0, 1, 2].map(async () => ({ client: await freePort(), peer: await freePort() })));
    const initialCluster = etcdPorts.map((p, i) => `etcd${i + 1}=http://127.0.0.1:${p.peer}`).join(',');
    const etcd = etcdPorts.map((p, i) =>
      spawnStore(`etcd${i + 1}`, '/usr/bin/etcd', [
        `--name=etcd${i + 1}`,
        `--data-dir=${dirFor(`etcd${i + 1}`)}`,
        `--listen-client-urls=http://127.0.0.1:${p.client}`,
        `--advertise-client-urls=http://127.0.0.1:${p.client}`,
        `--listen-peer-urls=http://127.0.0.1:${p.peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${p.peer}`,
        `--initial-cluster=${initialCluster}`,
        '--initial-cluster-state=new',
        '--initial-cluster-token=caregraph',
        '--log-level=warn',
      ]),
    );
    await Promise.all(etcdPorts.map((p) => waitUntil(`etcd on ${p.client}`, () => httpOk(`http://127.0.0.1:${p.client}/health`), 30_000)));

    // Patroni: the first member bootstraps the cluster, the second clones it (pg_basebackup) and follows.
    const postgres: PostgresMember[] = [];
    for (const name of ['pg1', 'pg2']) {
      const [pgPort, restPort] = [await freePort(), await freePort()];
      const dataDir = join(dir, name);
      const configFile = join(dir, `${name}.yml`);
      writeFileSync(configFile, patroniConfig({ name, pgPort, restPort, dataDir, dir, etcd: etcdPorts.map((p) => `127.0.0.1:${p.client}`) }));
      postgres.push({ name, pgPort, restPort, dataDir, patroni: spawnStore(name, '/usr/bin/patroni', [configFile]) });
      if (name === 'pg1') await waitUntil('the first PostgreSQL member to lead', () => httpOk(`http://127.0.0.1:${restPort}/primary`), 90_000);
    }
    await waitUntil('the standby to stream', () => httpOk(`http://127.0.0.1:${postgres[1].restPort}/replica`), 90_000);

    const haproxyPort = await freePort();
    const haproxyFile = join(dir, 'haproxy-postgres.cfg');
    writeFileSync(
      haproxyFile,
      postgresHaproxyConfig({
        bind: `127.0.0.1:${haproxyPort}`,
        members: postgres.map((m) => ({ name: m.name, address: `127.0.0.1:${m.pgPort}`, checkPort: m.restPort })),
      }),
    );
    // -db: in the foreground, ours to signal.
    const haproxy = spawnStore('haproxy', '/usr/sbin/haproxy', ['-db', '-f', haproxyFile]);
    const databaseUrl = `postgres://postgres@127.0.0.1:${haproxyPort}/postgres`;
    await waitUntil('PostgreSQL through HAProxy', () => canQuery(databaseUrl), 30_000);

    // Redis: a master and a replica, three Sentinels.
    const redisPorts = [await freePort(), await freePort()];
    const redis = redisPorts.map((port, i) =>
      spawnStore(`redis${i + 1}`, '/usr/bin/redis-server', [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dirFor(`redis${i + 1}`),
        '--save',
        '',
        '--appendonly',
        'no',
        ...(i > 0 ? ['--replicaof', '127.0.0.1', String(redisPorts[0])] : []),
      ]),
    );
    const sentinelPorts = [await freePort(), await freePort(), await freePort()];
    const sentinels = sentinelPorts.map((port, i) => {
      const file = join(dirFor(`sentinel${i + 1}`), 'sentinel.conf');
      writeFileSync(file, sentinelConfig(port, redisPorts[0]));
      if (owner) chownSync(file, owner.uid, owner.gid);
      return spawnStore(`sentinel${i + 1}`, '/usr/bin/redis-sentinel', [file]);
    });
    const redisMembers = redisPorts.map((port, i) => ({ port, child: redis[i] }));
    const sentinelMembers = sentinelPorts.map((port, i) => ({ port, child: sentinels[i] }));
    await waitUntil(
      'the Redis replica to sync',
      async () => /master_link_status:up/.test((await redisCommand(redisPorts[1], ['INFO', 'replication']).catch(() => ['']))[0]),
      30_000,
    );
    await waitUntil(
      'the Sentinels to see the replica and each other',
      async () => {
        const replies = await Promise.all(sentinelPorts.map((p) => redisCommand(p, ['SENTINEL', 'MASTER', MASTER_NAME]).catch(() => [])));
        const field = (reply: string[], name: string) => reply[reply.indexOf(name) + 1];
        return replies.every((r) => field(r, 'num-slaves') === '1' && field(r, 'num-other-sentinels') === '2');
      },
      30_000,
    );

    const redisMaster = async () => {
      for (const port of sentinelPorts) {
        const reply = await redisCommand(port, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME]).catch(() => []);
        const masterPort = Number(reply[1]);
        if (masterPort) return redisMembers.find((m) => m.port === masterPort);
      }
      return undefined;
    };
    let stopped = false;
    return {
      databaseUrl,
      redisUrl: `redis+sentinel://${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${MASTER_NAME}`,
      postgres,
      redis: redisMembers,
      sentinels: sentinelMembers,
      etcd,
      haproxy,
      haproxyPort,
      leader: async () => {
        for (const member of postgres) if (await httpOk(`http://127.0.0.1:${member.restPort}/primary`)) return member;
        return undefined;
      },
      postmasterPid: (member) => Number(readFileSync(join(member.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]),
      redisMaster,
      describe: () => [
        `postgres   ${databaseUrl} (HAProxy pid ${haproxy.pid}, leader checked on Patroni's /primary)`,
        ...postgres.map((m) => `  ${m.name}      127.0.0.1:${m.pgPort}, Patroni REST http://127.0.0.1:${m.restPort} (patroni pid ${m.patroni.pid})`),
        ...etcdPorts.map((p, i) => `  etcd${i + 1}    http://127.0.0.1:${p.client} (pid ${etcd[i].pid})`),
        `redis      redis+sentinel://${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${MASTER_NAME}`,
        ...redisMembers.map((m, i) => `  redis${i + 1}    127.0.0.1:${m.port} (pid ${m.child.pid}${i === 0 ? ', first master' : ''})`),
        ...sentinelMembers.map((m, i) => `  sentinel${i + 1} 127.0.0.1:${m.port} (pid ${m.child.pid})`),
        `logs and data in ${dir}`,
      ],
      stop: async () => {
        if (stopped) return;
        stopped = true;
        // HAProxy and Redis first, then Patroni (it stops its PostgreSQL), etcd last: Patroni needs it to stop cleanly.
        await stopAll([haproxy, ...sentinels, ...redis]);
        await stopAll(postgres.map((m) => m.patroni));
        await stopAll(etcd);
        // A postmaster whose Patroni was killed may outlive it.
        for (const member of postgres) killPostmaster(member.dataDir);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    const tails = children.map((c) => `--- ${c.spawnargs[0]} ${c.spawnargs.at(-1)}:\n${(outputs.get(c)?.() ?? '').slice(-2000)}`).join('\n');
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const name of ['pg1', 'pg2']) killPostmaster(join(dir, name));
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}\n${tails}`, { cause: err });
  }
}

function patroniConfig(m: { name: string; pgPort: number; restPort: number; dataDir: string; dir: string; etcd: string[] }): string {
  return stringify({
    scope: 'caregraph',
    name: m.name,
    log: { level: 'WARNING' },
    restapi: { listen: `127.0.0.1:${m.restPort}`, connect_address: `127.0.0.1:${m.restPort}` },
    etcd3: { hosts: m.etcd },
    bootstrap: {
      dcs: {
        // The shortest leader lock Patroni accepts; one loop every 2 s notices a crash quickly.
        ttl: 20,
        loop_wait: 2,
        retry_timeout: 5,
        // A crashed primary fails over at once instead of being restarted in place.
        master_start_timeout: 0,
        // A commit is acknowledged only once the standby has it, and only that standby is promoted: no acknowledged write is lost.
        synchronous_mode: true,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: { wal_log_hints: 'on', max_connections: 300, max_wal_senders: 5, max_replication_slots: 5, hot_standby: 'on' },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }, 'data-checksums'],
      pg_hba: ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'],
    },
    postgresql: {
      listen: `127.0.0.1:${m.pgPort}`,
      connect_address: `127.0.0.1:${m.pgPort}`,
      data_dir: m.dataDir,
      bin_dir: PG_BIN,
      pgpass: join(m.dir, `${m.name}.pgpass`),
      authentication: {
        superuser: { username: 'postgres', password: 'postgres' },
        replication: { username: 'replicator', password: 'replicator' },
        rewind: { username: 'postgres', password: 'postgres' },
      },
      parameters: { unix_socket_directories: m.dir },
    },
  });
}

function sentinelConfig(port: number, masterPort: number): string {
  return [
    `port ${port}`,
    'bind 127.0.0.1',
    `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} 2`,
    // A master silent for 2 s is down; a failover that stalls is tried again after 10 s.
    `sentinel down-after-milliseconds ${MASTER_NAME} 2000`,
    `sentinel failover-timeout ${MASTER_NAME} 10000`,
    `sentinel parallel-syncs ${MASTER_NAME} 1`,
    '',
  ].join('\n');
}

function userIds(name: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

function killPostmaster(dataDir: string): void {
  try {
    process.kill(Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGKILL');
  } catch {
    // Not running.
  }
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

async function httpOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** One command on a raw RESP connection (no client library's reconnect logic in the way): a bulk reply as one string, a flat array as its strings. */
function redisCommand(port: number, args: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(new Error('timeout')), 2000);
    socket.on('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    socket.on('data', (chunk: Buffer) => {
      reply = Buffer.concat([reply, chunk]);
      const parsed = parseReply(reply);
      if (parsed) {
        clearTimeout(timer);
        socket.end();
        resolve(parsed);
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** The values of a complete reply (simple, error, integer, bulk, or a flat array of those), or undefined while incomplete. */
function parseReply(buffer: Buffer): string[] | undefined {
  let at = 0;
  const line = (): string | undefined => {
    const end = buffer.indexOf('\r\n', at);
    if (end < 0) return undefined;
    const text = buffer.subarray(at, end).toString('utf8');
    at = end + 2;
    return text;
  };
  const value = (): string | undefined => {
    const head = line();
    if (head === undefined) return undefined;
    if (head[0] !== '$') return head.slice(1);
    const length = Number(head.slice(1));
    if (length < 0) return '';
    if (buffer.length < at + length + 2) return undefined;
    const text = buffer.subarray(at, at + length).toString('utf8');
    at += length + 2;
    return text;
  };
  if (buffer[0] !== 0x2a /* '*' */) {
    const single = value();
    return single === undefined ? undefined : [single];
  }
  const head = line();
  if (head === undefined) return undefined;
  const values: string[] = [];
  for (let i = 0; i < Number(head.slice(1)); i++) {
    const item = value();
    if (item === undefined) return undefined;
    values.push(item);
  }
  return values;
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
