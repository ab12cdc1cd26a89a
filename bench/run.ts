import 'reflect-metadata';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../common/config';
import { resolveSecrets } from '../common/secrets';
import { openDatabase, redactUrl, withClient } from '../common/db/database';
import { issueAccessToken, signIdentity, IDENTITY_HEADER } from '../common/auth/tokens';
import { freePort, Monitor, sample, startChild, type Child } from './lib/proc';
import { measure, measureInterleaved, percentile, preflight, round, type Measurement, type Target } from './lib/load';
import { seedBenchData, type SeedPlan, type SeededData } from './lib/seed';
import { SLOW_PREFIX, startReceiver, type Receiver } from './lib/receiver';
import { connectSubscribers, socketHeadroomProblem } from './lib/subscribers';
import { DEFAULT_HAPROXY, startCluster, type Cluster } from '../scripts/cluster';
import { clinicalPatientId, loadClinicalCompositions } from './lib/clinical-load';
import { FieldCipher } from '../common/crypto';
import { summarise, type CpuProfile, type ProfileSummary } from './lib/cpu-profile';
import { collectGarbage } from './lib/inspector';

/**
 * `npm run bench`: CareGraph against direct subgraph calls and peer gateways,
 * all on loopback, every comparison inside one run (the machine may be shared:
 * compare ratios, not absolute numbers across runs). `--quick` for a short
 * run, `--only 1,2` for some scenarios, `--soak <seconds>` for the memory soak only,
 * `--db postgres` on PostgreSQL and Redis instead of PGlite (scenarios 1-5 by default); scenario 6 (clinical
 * queries at 10k, 100k and 1M compositions, `--clinical-sizes 10000,100000` for fewer) and scenario 7 (scale-out
 * behind HAProxy, 2 gateways + 2 workers vs 1 + 1) run on PostgreSQL only.
 * `--profile [seconds]`: CPU profiles of the federated query and of the REST send, summarised by area.
 * `--keep-db` (with `--db postgres`): keeps the run's database and data folder, and prints where they are.
 */

interface Settings {
  quick: boolean;
  seconds: number;
  warmup: number;
  /** Interleaved rounds of the head-to-head comparisons (scenarios 1 and 2), and the seconds of each. */
  rounds: number;
  roundSeconds: number;
  connections: number;
  seed: SeedPlan;
  /** Extra patients for the 10× data step. */
  growPatients: number;
  subscribers: number;
  /** Scenario 3's second measurement (full runs only) and scenario 7's subscribers. */
  scaleSubscribers: number;
  statusChanges: number;
  webhookSubscriptions: number;
  webhookMessages: number;
  batches: number;
  /** 4c: messages sent in batches of up to 1,000 and timed to `delivered`. */
  deliveryMessages: number;
  /** Scenario 6: the composition counts the database grows through, measured at each. */
  clinicalSizes: number[];
}

/** `--db postgres`: a fresh database on this server (DATABASE_URL, else the local one), dropped afterwards; Redis from REDIS_URL, else the local one. */
const POSTGRES_SERVER = process.env.DATABASE_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.REDIS_URL?.trim() || 'redis://127.0.0.1:6379';

function parseArgs(argv: string[]): { settings: Settings; soak?: number; profile?: number; only: Set<number>; postgres: boolean; keepDatabase: boolean } {
  const quick = argv.includes('--quick');
  const keepDatabase = argv.includes('--keep-db');
  const onlyAt = argv.indexOf('--only');
  const dbAt = argv.indexOf('--db');
  const db = dbAt >= 0 ? argv[dbAt + 1] : 'pglite';
  if (db !== 'pglite' && db !== 'postgres') throw new Error('--db takes pglite (default) or postgres');
  const only = new Set((onlyAt >= 0 ? (argv[onlyAt + 1] ?? '') : '1,2,3,4,5').split(',').map(Number));
  if (only.size === 0 || [...only].some((n) => !Number.isInteger(n) || n < 1 || n > 7))
    throw new Error('--only takes scenario numbers 1..7, comma-separated (e.g. --only 1,2)');
  // A million compositions is a server database's load, not an embedded one's.
  if (db === 'pglite' && only.has(6)) throw new Error('scenario 6 (clinical queries) runs on PostgreSQL: --db postgres --only 6');
  // Several processes share state only through PostgreSQL and Redis.
  if (db === 'pglite' && only.has(7)) throw new Error('scenario 7 (scale-out) runs on PostgreSQL and Redis: --db postgres --only 7');
  const sizesAt = argv.indexOf('--clinical-sizes');
  const clinicalSizes = (sizesAt >= 0 ? (argv[sizesAt + 1] ?? '') : '10000,100000,1000000').split(',').map(Number);
  if (clinicalSizes.some((n, i) => !Number.isInteger(n) || n < 1000 || n % 1000 !== 0 || (i > 0 && n <= clinicalSizes[i - 1])))
    throw new Error('--clinical-sizes takes growing composition counts, multiples of 1000 (e.g. --clinical-sizes 10000,100000)');
  const soakAt = argv.indexOf('--soak');
  const soak = soakAt >= 0 ? Number(argv[soakAt + 1] ?? 60) : undefined;
  if (soak !== undefined && !(soak >= 10 && soak <= 3600)) throw new Error('--soak takes seconds, 10..3600');
  const profileAt = argv.indexOf('--profile');
  const profileArg = argv[profileAt + 1];
  const profile = profileAt >= 0 ? (profileArg === undefined || profileArg.startsWith('--') ? 20 : Number(profileArg)) : undefined;
  if (profile !== undefined && !(profile >= 2 && profile <= 600)) throw new Error('--profile takes seconds per path, 2..600');
  const base = quick ? 100 : 300;
  if (db === 'postgres' && (soak !== undefined || profile !== undefined)) throw new Error('--soak and --profile run on PGlite only');
  if (soak !== undefined && profile !== undefined) throw new Error('--soak and --profile are separate runs');
  if (keepDatabase && db !== 'postgres') throw new Error('--keep-db keeps the PostgreSQL database: --db postgres');
  return {
    keepDatabase,
    soak,
    profile,
    only,
    postgres: db === 'postgres',
    settings: {
      quick,
      seconds: quick ? 3 : 6,
      warmup: quick ? 1 : 2,
      rounds: quick ? 2 : 3,
      roundSeconds: quick ? 2 : 3,
      connections: 8,
      seed: { patients: base, messagesPerPatient: 10, appointmentsPerPatient: 2, heldPatients: 20 },
      growPatients: base * 9,
      subscribers: 1000,
      scaleSubscribers: quick ? 1000 : 10_000,
      statusChanges: quick ? 4 : 10,
      webhookSubscriptions: 4,
      webhookMessages: quick ? 150 : 400,
      batches: quick ? 3 : 5,
      deliveryMessages: quick ? 1000 : 2000,
      clinicalSizes,
    },
  };
}

const ROOT = join(__dirname, '..', '..');
const SCRIPT = {
  caregraph: join(ROOT, 'dist', 'bin', 'caregraph.js'),
  bare: join(ROOT, 'dist', 'bench', 'peers', 'apollo-bare.js'),
  hive: join(ROOT, 'dist', 'bench', 'peers', 'hive.js'),
};
/** Limits far above what a 2-core loopback run reaches, so the benchmark measures work, not 429s. */
const UNLIMITED = Object.fromEntries(
  ['MESSAGES_SEND', 'MESSAGES_READ', 'PATIENTS', 'TEMPLATES', 'WEBHOOKS', 'EHR'].map((c) => [`RATE_LIMIT_${c}`, '100000000']),
);

const MESSAGE_FIELDS = 'id patientId templateId templateVersion language channel variables subject body status error appointmentId dueAt createdAt updatedAt';
const FEDERATED_QUERY =
  'query Inbox($offset: Int) { messages(limit: 20, offset: $offset) { data { id status createdAt patient { id name { given family } nextAppointment { id start status } } } } }';
/** Different pages per request, as different users' inboxes would be (identical concurrent queries let a gateway share subgraph fetches). */
const federatedBody = (vary: boolean) => (i: number) => gql(FEDERATED_QUERY, { offset: vary ? (i % 50) * 20 : 0 });
/** A send for one of the held patients: accepted into `queued` and held by quiet hours, so nothing is delivered during the run. */
const heldSend = (held: string[], i: number) => ({
  patientId: held[i % held.length],
  templateId: 'appointment-reminder',
  channel: 'sms',
  variables: { date: '2027-01-15', time: '09:30' },
});

const log = (text: string) => process.stderr.write(`[bench] ${text}\n`);

interface Platform {
  child: Child;
  url: string;
  messagingUrl: string;
  ehrUrl: string;
  /** Set when started with the inspector on loopback: scenario 3 collects garbage before sampling memory. */
  inspectPort?: number;
}

async function startCareGraph(
  dataDir: string,
  ports: { gateway: number; messaging: number; ehr: number },
  extra: Record<string, string> = {},
  nodeArgs: string[] = [],
  inspectPort?: number,
): Promise<Platform> {
  const env = {
    PATH: process.env.PATH,
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: String(ports.gateway),
    MESSAGING_PORT: String(ports.messaging),
    EHR_PORT: String(ports.ehr),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    SIM_SEND_DELAY_MS: '10',
    SIM_DELIVER_DELAY_MS: '20',
    SUBSCRIPTIONS_CONNECTIONS_PER_MINUTE: '1000000',
    ...UNLIMITED,
    ...extra,
  };
  const url = `http://127.0.0.1:${ports.gateway}`;
  const inspect = inspectPort === undefined ? [] : [`--inspect=127.0.0.1:${inspectPort}`];
  const child = await startChild('caregraph', SCRIPT.caregraph, ['all'], env, `${url}/readyz`, 120_000, [...nodeArgs, ...inspect]);
  return { child, url, messagingUrl: `http://127.0.0.1:${ports.messaging}/graphql`, ehrUrl: `http://127.0.0.1:${ports.ehr}/graphql`, inspectPort };
}

async function startPeer(name: 'bare' | 'hive', platform: Platform): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/graphql`;
  const env = { PATH: process.env.PATH, NODE_ENV: 'production', PORT: String(port), MESSAGING_URL: platform.messagingUrl, EHR_URL: platform.ehrUrl };
  const probe = { url, init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{__typename}"}' } };
  const child = await startChild(name, SCRIPT[name], [], env, probe, 60_000);
  return { child, url };
}

/** Three distinct free ports, none of them in `taken` (ports found free are only reserved once a process binds them). */
async function platformPorts(taken: number[]): Promise<{ gateway: number; messaging: number; ehr: number }> {
  const picked: number[] = [];
  while (picked.length < 3) {
    const port = await freePort();
    if (!taken.includes(port) && !picked.includes(port)) picked.push(port);
  }
  return { gateway: picked[0], messaging: picked[1], ehr: picked[2] };
}

function withRatio(rows: Measurement[], reference: Measurement): Measurement[] {
  for (const row of rows) {
    row.ratio = round(row.requestsPerSecond / reference.requestsPerSecond, 2);
    row.ratioTo = reference.name;
  }
  return rows;
}

const gql = (query: string, variables?: Record<string, unknown>) => JSON.stringify({ query, variables });

async function main(): Promise<void> {
  const { settings, soak, profile, only, postgres, keepDatabase } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const workDir = mkdtempSync(join(tmpdir(), 'caregraph-bench-'));
  const dataDir = join(workDir, 'data');
  const children: Child[] = [];
  let receiver: Receiver | undefined;
  const results: Record<string, unknown> = {
    machine: machine(),
    mode:
      soak !== undefined
        ? `soak ${soak}s`
        : profile !== undefined
          ? `profile ${profile}s per path`
          : `${settings.quick ? 'quick' : 'full'}${[...only].join() !== '1,2,3,4,5' ? `, scenarios ${[...only].sort().join(',')}` : ''}${postgres ? ', PostgreSQL + Redis' : ', PGlite'}`,
    startedAt: new Date().toISOString(),
  };
  const rows: Measurement[] = [];
  const database = postgres ? await createBenchDatabase() : undefined;
  // Copies of the run's data for second platforms (the HTTP hop, the 1× side of data growth): a copied data
  // folder on PGlite; on PostgreSQL also a database made from the run's as a template, with its own events channel.
  const copies: BenchDatabase[] = [];
  const copyData = async (label: string, env: Record<string, string>): Promise<{ dir: string; env: Record<string, string> }> => {
    const dir = join(workDir, `data-${label}`);
    cpSync(dataDir, dir, { recursive: true });
    if (!database) return { dir, env };
    const copy = await createBenchDatabase(database.name);
    copies.push(copy);
    const channel = `caregraph:bench:${copy.name}`;
    return { dir, env: { ...env, DATABASE_URL: copy.url, REDIS_EVENTS_CHANNEL: channel, RATE_LIMIT_KEY_PREFIX: channel } };
  };
  try {
    log(
      `seeding ${settings.seed.patients} patients, ${settings.seed.patients * settings.seed.messagesPerPatient} messages into ${database ? redactUrl(database.url) : dataDir}`,
    );
    const seeded = await seedBenchData(dataDir, settings.seed, 0, database?.url);
    const secrets = resolveSecrets(loadConfig({ DATA_DIR: dataDir }));
    const token = await issueAccessToken(secrets.jwtSecret!, { sub: 'bench', tenants: ['demo'], roles: ['admin'], ttlSeconds: 7200 });
    const identity = await signIdentity(secrets.internalKey, { sub: 'bench', tenantId: 'demo', roles: ['admin'] }, 7200);
    const ports = await platformPorts([]);
    receiver = await startReceiver(workDir);
    const cgEnv: Record<string, string> = {
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_CA_FILE: receiver.caFile,
      // Scenario 4 holds the receiver's answers while its backlog builds up.
      WEBHOOK_TIMEOUT_MS: '60000',
      // This run's own events channel: other processes on the same Redis must not reach its subscribers.
      ...(database
        ? {
            DATABASE_URL: database.url,
            REDIS_URL: REDIS,
            REDIS_EVENTS_CHANNEL: `caregraph:bench:${database.name}`,
            RATE_LIMIT_KEY_PREFIX: `caregraph:bench:${database.name}`,
          }
        : {}),
    };
    // The before/after of the in-process data source: a second CareGraph on a copy of the same data, with the
    // HTTP hop between its gateway and subgraphs, measured in the same interleaved rounds as the rest.
    let hop: Platform | undefined;
    if (soak === undefined && profile === undefined && (only.has(1) || only.has(2))) {
      const copy = await copyData('http-hop', { ...cgEnv, SUBGRAPH_TRANSPORT: 'http' });
      hop = await startCareGraph(copy.dir, await platformPorts(Object.values(ports)), copy.env);
      children.push(hop.child);
    }
    // --cpu-prof writes one profile per thread (the event loop, PGlite's worker) when the process exits.
    const profileDir = join(ROOT, 'bench', 'profiles');
    if (profile !== undefined) {
      rmSync(profileDir, { recursive: true, force: true });
      mkdirSync(profileDir, { recursive: true });
    }
    let platform = await startCareGraph(
      dataDir,
      ports,
      cgEnv,
      profile !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
      only.has(3) ? await freePort() : undefined,
    );
    children.push(platform.child);
    const ctx = { settings, seeded, token, identity, receiver };

    if (soak !== undefined) {
      results.soak = await soakRun(platform, ctx, soak);
      return;
    }

    const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const direct = { [IDENTITY_HEADER]: identity, 'content-type': 'application/json' };
    const ids = seeded.messageIds.slice(0, 200);
    const sendInput = (i: number) => heldSend(seeded.heldPatientIds, i);
    const targets = (p: Platform) => ({
      restGet: {
        name: 'CareGraph gateway: REST GET /v1/messages/{id}',
        url: p.url,
        method: 'GET',
        headers: bearer,
        path: (i: number) => `/v1/messages/${ids[i % ids.length]}`,
        pids: [p.child.pid],
      } satisfies Target,
      directGet: {
        name: 'messaging subgraph direct: GraphQL message(id)',
        url: p.messagingUrl,
        method: 'POST',
        headers: direct,
        body: (i: number) => gql(`query($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} statusHistory { status at error } } }`, { id: ids[i % ids.length] }),
        pids: [p.child.pid],
      } satisfies Target,
      restPost: {
        name: 'CareGraph gateway: REST POST /v1/messages',
        url: `${p.url}/v1/messages`,
        method: 'POST',
        headers: bearer,
        body: (i: number) => JSON.stringify(sendInput(i)),
        pids: [p.child.pid],
      } satisfies Target,
      directPost: {
        name: 'messaging subgraph direct: GraphQL sendMessage',
        url: p.messagingUrl,
        method: 'POST',
        headers: direct,
        body: (i: number) => gql(`mutation($input: SendMessageInput!) { sendMessage(input: $input) { ${MESSAGE_FIELDS} } }`, { input: sendInput(i) }),
        pids: [p.child.pid],
      } satisfies Target,
      federated: {
        name: 'CareGraph gateway',
        url: `${p.url}/graphql`,
        method: 'POST',
        headers: bearer,
        body: federatedBody(true),
        pids: [p.child.pid],
      } satisfies Target,
      list: {
        name: 'CareGraph gateway: REST GET /v1/messages?patientId',
        url: p.url,
        method: 'GET',
        headers: bearer,
        path: (i: number) => `/v1/messages?patientId=${seeded.patientIds[i % seeded.patientIds.length]}&limit=20`,
        pids: [p.child.pid],
      } satisfies Target,
    });
    const run = (scenario: string, target: Target, connections = settings.connections) => {
      log(`${scenario}: ${target.name} × ${connections}`);
      return measure(scenario, target, connections, settings.seconds, settings.warmup);
    };
    const compare = (scenario: string, compared: Target[]) => {
      log(
        `${scenario}: ${compared.map((c) => c.name).join(' vs ')} × ${settings.connections}, ${settings.rounds} interleaved rounds of ${settings.roundSeconds} s`,
      );
      return measureInterleaved(scenario, compared, settings.connections, settings.rounds, settings.roundSeconds, settings.warmup);
    };
    let t = targets(platform);

    if (profile !== undefined) {
      results.profile = await profileRun(platform, [t.federated, t.restPost], settings, profile, profileDir);
      return;
    }

    // 1. Gateway overhead: REST through the gateway vs the same GraphQL operation straight to the subgraph.
    if (only.has(1)) {
      const reads = await compare('1 gateway overhead (read)', [
        t.directGet,
        t.restGet,
        { ...targets(hop!).restGet, name: 'CareGraph gateway, HTTP hop to subgraphs: REST GET' },
      ]);
      const [postDirect, postGateway] = await compare('1 gateway overhead (send)', [t.directPost, t.restPost]);
      rows.push(...withRatio(reads, reads[0]), ...withRatio([postDirect, postGateway], postDirect));
    }

    // 2. Federated query: CareGraph vs bare @apollo/gateway vs Hive Gateway, same subgraphs and database.
    if (only.has(2)) {
      const bare = await startPeer('bare', platform);
      children.push(bare.child);
      const hive = await startPeer('hive', platform);
      children.push(hive.child);
      const peerTarget = (name: string, url: string, pid: number, vary = true): Target => ({
        name,
        url,
        method: 'POST',
        headers: direct,
        body: federatedBody(vary),
        pids: [pid, platform.child.pid],
      });
      await checkSameAnswer(t.federated, [peerTarget('bare', bare.url, bare.child.pid), peerTarget('hive', hive.url, hive.child.pid)]);
      const BARE = 'bare @apollo/gateway + @apollo/server (+ subgraphs)';
      const HIVE = 'Hive Gateway runtime (+ subgraphs)';
      const federated = await compare('2 federated query', [
        peerTarget(BARE, bare.url, bare.child.pid),
        t.federated,
        { ...targets(hop!).federated, name: 'CareGraph gateway, HTTP hop to subgraphs' },
        peerTarget(HIVE, hive.url, hive.child.pid),
      ]);
      rows.push(...withRatio(federated, federated[0]));
      // The same query from every client at once: Hive shares in-flight identical subgraph fetches (on by default).
      const same = await compare('2 federated, identical query', [
        peerTarget(BARE, bare.url, bare.child.pid, false),
        { ...t.federated, body: federatedBody(false) },
        peerTarget(HIVE, hive.url, hive.child.pid, false),
      ]);
      rows.push(...withRatio(same, same[0]));
      await bare.child.stop();
      await hive.child.stop();
    }
    await hop?.child.stop();

    // 5a. Scaling with concurrency.
    if (only.has(5)) {
      for (const target of [t.restGet, t.federated]) {
        const levels: Measurement[] = [];
        for (const c of [1, 4, 16]) levels.push(await run('5 concurrency', target, c));
        rows.push(...withRatio(levels, levels[0]));
      }
    }

    // 3. Subscription fan-out: 1,000 subscribers, and in full runs 10,000, on the one process.
    if (only.has(3)) {
      const gateway = [{ url: platform.url, pid: platform.child.pid, inspectPort: platform.inspectPort }];
      results.subscriptions = await fanOut(ctx, settings.subscribers, gateway, platform);
      if (settings.scaleSubscribers > settings.subscribers) results.subscriptionsAtScale = await fanOut(ctx, settings.scaleSubscribers, gateway, platform);
    }
    // 4. Webhook deliveries and batch sends.
    if (only.has(4)) {
      results.webhooks = await webhookThroughput(platform, ctx);
      results.batch = await batchThroughput(platform, ctx);
      // 4c needs the simulator without delays: CareGraph restarted for it, then as before for what follows.
      await platform.child.stop();
      results.delivery = await deliveryThroughput(ctx, { dataDir, ports, cgEnv, postgres: database !== undefined });
      platform = await startCareGraph(dataDir, ports, cgEnv);
      children.push(platform.child);
    }

    // 7. Scale-out behind HAProxy: 2 gateways + 2 workers against 1 + 1, each with its own messaging and ehr processes.
    if (only.has(7)) {
      await platform.child.stop();
      results.scaleOut = await scaleOutRun(ctx, { dataDir, workDir, cgEnv, compare }, rows);
    }

    // 5b. Ten times the data: the same reads on a copy of the database as it is and on the database grown
    // tenfold, both running, measured in interleaved rounds.
    if (only.has(5)) {
      await platform.child.stop();
      const copy = await copyData('1x', cgEnv);
      log(`growing the database tenfold (${settings.growPatients} more patients)`);
      const grown = await seedBenchData(dataDir, { ...settings.seed, patients: settings.growPatients, heldPatients: 0 }, settings.seed.patients, database?.url);
      const base = await startCareGraph(copy.dir, await platformPorts(Object.values(ports)), copy.env);
      children.push(base.child);
      platform = await startCareGraph(dataDir, ports, cgEnv);
      children.push(platform.child);
      const small = targets(base);
      t = targets(platform);
      const newest = grown.messageIds.slice(0, 200);
      const sized = (target: Target, size: string): Target => ({ ...target, name: `${target.name} (${size})` });
      for (const [before, after] of [
        [small.restGet, { ...t.restGet, path: (i: number) => `/v1/messages/${newest[i % newest.length]}` }],
        [small.list, t.list],
        [small.federated, t.federated],
      ] as const) {
        const pair = await compare('5 data growth', [sized(before, '1× data'), sized(after, '10× data')]);
        rows.push(...withRatio(pair, pair[0]));
      }
    }

    // 6. Clinical queries as the record grows: compositions bulk-loaded into the database, measured at each size.
    if (only.has(6)) {
      await platform.child.stop();
      results.clinical = await clinicalQueries(database!.url, dataDir, settings, token, async () => {
        platform = await startCareGraph(dataDir, ports, cgEnv);
        children.push(platform.child);
        return platform;
      });
    }
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => {});
    await receiver?.close();
    for (const copy of copies) await copy.drop();
    // Kept for inspection (EXPLAIN, a migration's replay): the data folder holds the key its contents are encrypted with.
    if (keepDatabase && database) log(`kept: DATABASE_URL=${database.url} DATA_DIR=${dataDir}`);
    else {
      await database?.drop();
      rmSync(workDir, { recursive: true, force: true });
    }
    results.rows = rows;
    results.totalSeconds = round((Date.now() - started) / 1000, 1);
    const file = resultsFile(results.startedAt as string);
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    printReport(results, rows);
    log(`wrote ${file} (${String(results.totalSeconds)} s)`);
  }
}

/**
 * One file per run in bench/results/, named by its start time and commit, so runs of several commits sit side by
 * side and a ratio can be read against the run of the commit before.
 */
function resultsFile(startedAt: string): string {
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Not a git checkout (an unpacked release): the start time alone names the run.
  }
  return join(dir, `${startedAt.replace(/[:.]/g, '-')}-${commit}.json`);
}

interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * A new database on POSTGRES_SERVER for one run: empty, or a copy of `template`. PostgreSQL copies a template only
 * while no one is connected to it, and a stopped platform's sessions may take a moment to end: it retries a while.
 */
async function createBenchDatabase(template?: string): Promise<BenchDatabase> {
  const name = `caregraph_bench_${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  for (let attempt = 1; ; attempt++) {
    try {
      await withClient(POSTGRES_SERVER, (c) => c.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`));
      break;
    } catch (err) {
      const inUse = (err as { code?: string }).code === '55006';
      if (!inUse || attempt === 50) throw err;
      await sleep(200);
    }
  }
  const url = new URL(POSTGRES_SERVER);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => withClient(POSTGRES_SERVER, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

interface RunContext {
  settings: Settings;
  seeded: SeededData;
  token: string;
  identity: string;
  receiver: Receiver;
}

/** Peers must answer the federated query exactly as CareGraph does, or the comparison is void. */
async function checkSameAnswer(reference: Target, peers: Target[]): Promise<void> {
  const expected = JSON.stringify(await preflight(reference));
  for (const peer of peers) {
    const got = JSON.stringify(await preflight(peer));
    if (got !== expected) throw new Error(`${peer.name} answered the federated query differently:\n${got.slice(0, 400)}\nvs\n${expected.slice(0, 400)}`);
  }
}

async function api(platform: Pick<Platform, 'url'>, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${platform.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json().catch(() => null);
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Live JavaScript memory of the platform (V8 heap in use + external buffers), from its /metrics: unlike RSS it
 * shrinks after garbage collection, so it shows what connections hold. Lowest of three samples, taken while idle,
 * after a full collection when the process runs with the inspector (else the heap's garbage is counted too).
 */
async function liveMemoryBytes(platform: Pick<Platform, 'url' | 'inspectPort'>): Promise<number> {
  if (platform.inspectPort !== undefined) await collectGarbage(platform.inspectPort);
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const text = await (await fetch(`${platform.url}/metrics`)).text();
    const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
    samples.push(metric('nodejs_heap_size_used_bytes') + metric('nodejs_external_memory_bytes'));
    await sleep(300);
  }
  return Math.min(...samples);
}

/** A gateway process subscribers connect to: its base URL (with /metrics) and pid. */
interface GatewayProcess {
  url: string;
  pid: number;
  inspectPort?: number;
}

/**
 * 3 (and 7): `n` subscribers on their own sockets, spread evenly over `gateways`; status changes are sent through
 * `sendVia`. Reports the time from each status change to its last receipt, and memory per connection (summed
 * over the gateways), or why the machine cannot hold `n` sockets.
 */
async function fanOut(ctx: RunContext, n: number, gateways: GatewayProcess[], sendVia: Pick<Platform, 'url'>, scenario = '3 subscriptions') {
  const problem = socketHeadroomProblem(n, gateways.length);
  if (problem) {
    log(`${scenario}: ${n} subscribers skipped: ${problem}`);
    return { subscribers: n, gateways: gateways.length, skipped: problem };
  }
  log(`${scenario}: connecting ${n} graphql-ws subscribers to ${gateways.length} gateway process${gateways.length > 1 ? 'es' : ''}`);
  const pids = gateways.map((g) => g.pid);
  const rss = () => pids.reduce((a, pid) => a + sample(pid).rssBytes, 0);
  const live = async () => (await Promise.all(gateways.map(liveMemoryBytes))).reduce((a, b) => a + b, 0);
  await sleep(1000);
  const before = rss();
  const liveBefore = await live();
  const monitor = new Monitor(pids);
  const connectStarted = Date.now();
  const subscribers = await connectSubscribers(
    gateways.map((g) => `${g.url.replace('http', 'ws')}/graphql`),
    ctx.token,
    n,
  );
  const connectSeconds = (Date.now() - connectStarted) / 1000;
  await sleep(1500);
  const connected = rss();
  const liveConnected = await live();
  // Changes far enough apart that one's fan-out is done before the next starts (10,000 sends take longer than 1,000).
  const spacingMs = Math.max(400, n / 10);
  // Sends refused with 503 (the database reported unavailable while the process is saturated) are retried and counted.
  let refusedSends = 0;
  const expected = ctx.settings.statusChanges * 2;
  const complete = () => [...subscribers.receipts.values()].filter((r) => r.received.length === n).length;
  let usage: ReturnType<Monitor['stop']>;
  try {
    for (let i = 0; i < ctx.settings.statusChanges; i++) {
      const patientId = ctx.seeded.patientIds[i % ctx.seeded.patientIds.length];
      for (let attempt = 0; ; attempt++) {
        try {
          await api(sendVia, ctx.token, 'POST', '/v1/messages', {
            patientId,
            templateId: 'appointment-reminder',
            channel: 'sms',
            variables: { date: '2027-01-15', time: '09:30' },
          });
          break;
        } catch (err) {
          if (!/answered 503/.test((err as Error).message) || attempt >= 10) throw err;
          refusedSends++;
          await sleep(1000);
        }
      }
      await sleep(spacingMs);
    }
    // Each send yields `sent` and `delivered`: wait until every subscriber has both of every change.
    const deadline = Date.now() + 30_000 + 10 * n;
    while (Date.now() < deadline && (subscribers.receipts.size < expected || complete() < expected)) await sleep(200);
  } finally {
    usage = monitor.stop();
    await subscribers.close();
  }
  const lastReceipt = [...subscribers.receipts.values()].map((r) => Math.max(...r.received) - r.timestamp);
  const medianReceipt = [...subscribers.receipts.values()].map((r) => percentile(r.received, 50) - r.timestamp);
  return {
    subscribers: n,
    gateways: gateways.length,
    connectSeconds: round(connectSeconds, 1),
    statusChanges: subscribers.receipts.size,
    deliveredToAll: complete(),
    lastReceiptP50Ms: percentile(lastReceipt, 50),
    lastReceiptP99Ms: percentile(lastReceipt, 99),
    medianReceiptP50Ms: percentile(medianReceipt, 50),
    rssBeforeMiB: round(before / 2 ** 20, 1),
    rssConnectedMiB: round(connected / 2 ** 20, 1),
    rssKibPerConnection: round((connected - before) / 1024 / n, 1),
    liveBeforeMiB: round(liveBefore / 2 ** 20, 1),
    liveConnectedMiB: round(liveConnected / 2 ** 20, 1),
    kibPerConnection: round((liveConnected - liveBefore) / 1024 / n, 1),
    garbageCollectedBeforeSamples: gateways.every((g) => g.inspectPort !== undefined),
    cpuSeconds: round(usage.cpuSeconds, 2),
    peakRssMiB: round(usage.peakRssBytes / 2 ** 20, 1),
    refusedSends,
    errors: subscribers.errors.slice(0, 5),
  };
}

/**
 * 4a: signed webhook deliveries per second to a local HTTPS receiver. The receiver holds its answers until
 * every delivery is in the database, then the backlog is drained: the rate is the worker's, not the message
 * pipeline's. Measured alone, then with one more endpoint that answers after 2 s (it gets the same events).
 */
async function webhookThroughput(platform: Platform, ctx: RunContext) {
  // A first drain warms the delivery path up (JIT, pools), as the other rows' warm-up does; its rate is reported apart.
  const cold = await webhookDrain(platform, ctx, {});
  const solo = await webhookDrain(platform, ctx, {});
  const withSlow = await webhookDrain(platform, ctx, { slow: true });
  const withOrdered = await webhookDrain(platform, ctx, { fifo: true, throttle: THROTTLED_RATE });
  return { ...solo, coldDeliveriesPerSecond: cold.deliveriesPerSecond, withSlowEndpoint: withSlow, withFifoAndThrottled: withOrdered };
}

/** The throttled endpoint's `rateLimit` in 4a: well under what the normal endpoints take, so the throttle shows. */
const THROTTLED_RATE = 50;

/** Deliveries stored for these subscriptions; 0 when the service asks to retry (a 503 while the message pipeline loads its database). */
async function deliveriesStored(platform: Platform, ctx: RunContext, ids: string[]): Promise<number> {
  let total = 0;
  try {
    for (const id of ids) total += (await api(platform, ctx.token, 'GET', `/v1/webhooks/${id}/deliveries?limit=1`)).pagination.total;
  } catch (err) {
    if (/answered 503/.test((err as Error).message)) return 0;
    throw err;
  }
  return total;
}

/**
 * One drain of 4a. Beside the normal endpoints (`/hook/…`), optionally one answering after 2 s (`slow`), one
 * with `ordering: fifo` and one with a `rateLimit` of `throttle` a second; each of those gets the same events.
 */
async function webhookDrain(platform: Platform, ctx: RunContext, extra: { slow?: boolean; fifo?: boolean; throttle?: number }) {
  const { receiver, settings } = ctx;
  const create = async (path: string, options: Record<string, unknown> = {}) =>
    (
      await api(platform, ctx.token, 'POST', '/v1/webhooks', {
        url: `${receiver.url}${path}`,
        events: ['message.sent', 'message.delivered'],
        secret: 'bench-secret-0123456789',
        ...options,
      })
    ).id as string;
  const fast: string[] = [];
  for (let i = 0; i < settings.webhookSubscriptions; i++) fast.push(await create(`/hook/${i}`));
  const others: string[] = [];
  if (extra.slow) others.push(await create(`${SLOW_PREFIX}0`));
  if (extra.fifo) others.push(await create('/fifo/0', { ordering: 'fifo' }));
  if (extra.throttle) others.push(await create('/throttled/0', { rateLimit: extra.throttle }));
  receiver.arrivals.length = 0;
  receiver.hold();
  const perEndpoint = settings.webhookMessages * 2;
  const expected = settings.webhookSubscriptions * perEndpoint;
  const besides = [
    extra.slow && 'an endpoint answering after 2 s',
    extra.fifo && 'a fifo endpoint',
    extra.throttle && `one throttled to ${extra.throttle}/s`,
  ].filter(Boolean);
  log(`4 webhooks${besides.length ? ` (+ ${besides.join(', ')})` : ''}: ${settings.webhookMessages} messages → ${expected} deliveries to the normal endpoints`);
  const start = Date.now();
  const messages = Array.from({ length: settings.webhookMessages }, (_, i) => ({
    patientId: ctx.seeded.patientIds[i % ctx.seeded.patientIds.length],
    templateId: 'appointment-reminder',
    channel: 'sms',
    variables: { date: '2027-01-15', time: '09:30' },
  }));
  await api(platform, ctx.token, 'POST', '/v1/messages/batch', { messages });
  let deadline = Date.now() + 120_000;
  while ((await deliveriesStored(platform, ctx, fast)) < expected && Date.now() < deadline) await sleep(500);
  const backlogSeconds = (Date.now() - start) / 1000;
  const connectionsBefore = receiver.connections();
  const monitor = new Monitor([platform.child.pid]);
  const released = Date.now();
  receiver.release();
  const fastArrivals = () => receiver.arrivals.filter((a) => a.path.startsWith('/hook/'));
  deadline = Date.now() + 120_000;
  while (fastArrivals().length < expected && Date.now() < deadline) await sleep(50);
  const usage = monitor.stop();
  const done = fastArrivals();
  const last = Math.max(...done.map((a) => a.at));
  const slowDone = receiver.arrivals.filter((a) => a.path.startsWith(SLOW_PREFIX)).length;
  /** An ordered or throttled endpoint's own drain: its deliveries a second from the release to its last one. */
  const ownDrain = async (prefix: string) => {
    const mine = () => receiver.arrivals.filter((a) => a.path.startsWith(prefix));
    const until = Date.now() + 120_000;
    while (mine().length < perEndpoint && Date.now() < until) await sleep(50);
    const arrived = mine();
    const seconds = (Math.max(...arrived.map((a) => a.at)) - released) / 1000;
    return {
      deliveries: arrived.length,
      expected: perEndpoint,
      seconds: round(seconds, 2),
      deliveriesPerSecond: round(arrived.length / Math.max(0.001, seconds), 1),
    };
  };
  const fifo = extra.fifo ? await ownDrain('/fifo/') : undefined;
  const throttled = extra.throttle ? { rateLimit: extra.throttle, ...(await ownDrain('/throttled/')) } : undefined;
  for (const id of [...fast, ...others]) await api(platform, ctx.token, 'DELETE', `/v1/webhooks/${id}`).catch(() => {});
  return {
    subscriptions: fast.length,
    messages: settings.webhookMessages,
    expectedDeliveries: expected,
    deliveries: done.length,
    deliveriesPerSecond: round(done.length / Math.max(0.001, (last - released) / 1000), 1),
    backlogSeconds: round(backlogSeconds, 2),
    drainSeconds: round((last - released) / 1000, 2),
    newConnections: receiver.connections() - connectionsBefore,
    slowDeliveries: extra.slow ? slowDone : undefined,
    fifo,
    throttled,
    cpuSeconds: round(usage.cpuSeconds, 2),
    peakRssMiB: round(usage.peakRssBytes / 2 ** 20, 1),
  };
}

/** 4b: POST /v1/messages/batch with 1,000 items, each accepted into `queued`. */
async function batchThroughput(platform: Platform, ctx: RunContext) {
  const held = ctx.seeded.heldPatientIds;
  const runs: Array<{ seconds: number; accepted: number }> = [];
  const monitor = new Monitor([platform.child.pid]);
  for (let b = 0; b < ctx.settings.batches; b++) {
    const messages = Array.from({ length: 1000 }, (_, i) => ({
      patientId: held[i % held.length],
      templateId: 'appointment-reminder',
      channel: 'sms',
      variables: { date: '2027-01-15', time: '09:30' },
    }));
    log(`4 batch: 1000 items (${b + 1}/${ctx.settings.batches})`);
    const t0 = Date.now();
    const result = await api(platform, ctx.token, 'POST', '/v1/messages/batch', { messages });
    runs.push({ seconds: (Date.now() - t0) / 1000, accepted: result.accepted });
  }
  const usage = monitor.stop();
  const seconds = runs.map((r) => r.seconds);
  return {
    items: 1000,
    batches: runs.length,
    accepted: runs.map((r) => r.accepted),
    medianSeconds: round(percentile(seconds, 50), 2),
    itemsPerSecond: round(1000 / percentile(seconds, 50), 1),
    cpuSeconds: round(usage.cpuSeconds, 2),
    peakRssMiB: round(usage.peakRssBytes / 2 ** 20, 1),
  };
}

/** The simulator's delays at zero: 4c measures the pipeline, not the simulated network. */
const NO_SIM_DELAYS = { SIM_SEND_DELAY_MS: '0', SIM_DELIVER_DELAY_MS: '0' };

/** Messages that reached `delivered`, summed over the processes' /metrics (each counts its own transitions). */
async function deliveredCount(metricsUrls: string[]): Promise<number> {
  let total = 0;
  for (const url of metricsUrls) {
    const text = await (await fetch(url)).text();
    for (const match of text.matchAll(/^caregraph_message_status_transitions_total\{[^}]*to="delivered"[^}]*\} (\S+)$/gm)) total += Number(match[1]);
  }
  return total;
}

/**
 * Sends `count` SMS in batches of up to 1,000 (`send` answers how many were accepted) and times the pipeline from
 * the first batch's acceptance to the last `delivered`, read from the workers' transition counters.
 */
async function drainDelivery(ctx: RunContext, count: number, pids: number[], metricsUrls: string[], send: (messages: object[]) => Promise<number>) {
  const patients = ctx.seeded.patientIds;
  const before = await deliveredCount(metricsUrls);
  const monitor = new Monitor(pids);
  let accepted = 0;
  let acceptedAt: number | undefined;
  for (let offset = 0; offset < count; offset += 1000) {
    const messages = Array.from({ length: Math.min(1000, count - offset) }, (_, i) => ({
      patientId: patients[(offset + i) % patients.length],
      templateId: 'appointment-reminder',
      channel: 'sms',
      variables: { date: '2027-01-15', time: '09:30' },
    }));
    accepted += await send(messages);
    acceptedAt ??= Date.now();
  }
  let delivered = 0;
  for (const deadline = Date.now() + 600_000; Date.now() < deadline; await sleep(50)) {
    delivered = (await deliveredCount(metricsUrls)) - before;
    if (delivered >= accepted) break;
  }
  const seconds = (Date.now() - acceptedAt!) / 1000;
  const usage = monitor.stop();
  return {
    accepted,
    delivered,
    seconds: round(seconds, 2),
    messagesPerSecond: round(delivered / seconds, 1),
    cpuSeconds: round(usage.cpuSeconds, 2),
  };
}

/**
 * 4c: messages from batch acceptance to `delivered` through the simulator without delays: the all-in-one process,
 * and on PostgreSQL the subgraphs and 1 then 2 `worker` processes (the scale-out roles of docs/deploy.md).
 */
async function deliveryThroughput(
  ctx: RunContext,
  where: { dataDir: string; ports: { gateway: number; messaging: number; ehr: number }; cgEnv: Record<string, string>; postgres: boolean },
) {
  const count = ctx.settings.deliveryMessages;
  log(`4 delivery: ${count} messages, in-process worker`);
  const all = await startCareGraph(where.dataDir, where.ports, { ...where.cgEnv, ...NO_SIM_DELAYS });
  let inProcess;
  try {
    inProcess = await drainDelivery(ctx, count, [all.child.pid], [`${all.url}/metrics`], async (messages) => {
      return (await api(all, ctx.token, 'POST', '/v1/messages/batch', { messages })).accepted;
    });
  } finally {
    await all.child.stop();
  }
  if (!where.postgres) return { messages: count, inProcess };

  const env = {
    PATH: process.env.PATH,
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    DATA_DIR: where.dataDir,
    LOG_LEVEL: 'warn',
    ...UNLIMITED,
    ...where.cgEnv,
    ...NO_SIM_DELAYS,
  };
  const [ehrPort, messagingPort] = [await freePort(), await freePort()];
  const urls = { EHR_URL: `http://127.0.0.1:${ehrPort}/graphql`, MESSAGING_URL: `http://127.0.0.1:${messagingPort}/graphql` };
  const subgraphs: Child[] = [];
  const byWorkers: Array<{ workers: number } & Awaited<ReturnType<typeof drainDelivery>>> = [];
  try {
    subgraphs.push(await startChild('ehr', SCRIPT.caregraph, ['ehr'], { ...env, EHR_PORT: String(ehrPort) }, `http://127.0.0.1:${ehrPort}/healthz`));
    subgraphs.push(
      await startChild(
        'messaging',
        SCRIPT.caregraph,
        ['messaging'],
        { ...env, ...urls, MESSAGING_PORT: String(messagingPort) },
        `http://127.0.0.1:${messagingPort}/healthz`,
      ),
    );
    const send = async (messages: object[]) => {
      const response = await fetch(urls.MESSAGING_URL, {
        method: 'POST',
        headers: { [IDENTITY_HEADER]: ctx.identity, 'content-type': 'application/json' },
        body: gql('mutation($messages: [SendMessageInput!]!) { sendMessages(messages: $messages) { accepted } }', { messages }),
      });
      const json = (await response.json()) as { data?: { sendMessages: { accepted: number } }; errors?: unknown };
      if (!json.data) throw new Error(`sendMessages failed: ${JSON.stringify(json.errors)}`);
      return json.data.sendMessages.accepted;
    };
    for (const workers of [1, 2]) {
      log(`4 delivery: ${count} messages, ${workers} worker process${workers > 1 ? 'es' : ''}`);
      const started: Array<{ child: Child; metrics: string }> = [];
      try {
        for (let i = 0; i < workers; i++) {
          const port = await freePort();
          const metrics = `http://127.0.0.1:${port}/metrics`;
          started.push({
            child: await startChild(`worker-${i + 1}`, SCRIPT.caregraph, ['worker'], { ...env, ...urls, METRICS_PORT: String(port) }, metrics),
            metrics,
          });
        }
        const pids = [...subgraphs, ...started.map((w) => w.child)].map((c) => c.pid);
        byWorkers.push({
          workers,
          ...(await drainDelivery(
            ctx,
            count,
            pids,
            started.map((w) => w.metrics),
            send,
          )),
        });
      } finally {
        for (const worker of started) await worker.child.stop();
      }
    }
  } finally {
    for (const child of subgraphs.reverse()) await child.stop();
  }
  return {
    messages: count,
    inProcess,
    workerProcesses: byWorkers,
    twoWorkersRatio: round(byWorkers[1].messagesPerSecond / byWorkers[0].messagesPerSecond, 2),
  };
}

/**
 * 7: the split-process deployment (docs/deploy.md) behind HAProxy, on the machine's PostgreSQL and Redis:
 * HAProxy → 2 gateways + 2 workers against HAProxy → 1 gateway + 1 worker, each with its own messaging and
 * ehr processes (`startCluster`, what `npm run cluster` runs). Each topology has its own database (seeded alike)
 * and Redis channel, so both run side by side and are measured in interleaved rounds: the federated query and
 * REST sends through HAProxy; then, one topology after the other, subscribers spread over its gateways and
 * delivery from batch acceptance to `delivered` by its workers.
 */
async function scaleOutRun(
  ctx: RunContext,
  where: { dataDir: string; workDir: string; cgEnv: Record<string, string>; compare: (scenario: string, targets: Target[]) => Promise<Measurement[]> },
  rows: Measurement[],
) {
  const haproxy = process.env.HAPROXY?.trim() || DEFAULT_HAPROXY;
  if (!existsSync(haproxy)) throw new Error(`scenario 7 needs HAProxy at ${haproxy} (apt-get install haproxy, or HAPROXY=<binary>)`);
  // Each topology gets a fresh database seeded alike (earlier scenarios have grown the run's), and its own
  // DATA_DIR with the run's secrets (so the run's token works on both; the audit checkpoints stay apart).
  const databases: BenchDatabase[] = [];
  const clusters: Cluster[] = [];
  try {
    for (const n of [1, 2]) {
      const database = await createBenchDatabase();
      databases.push(database);
      const dataDir = join(where.workDir, `data-scale-out-${n}`);
      cpSync(where.dataDir, dataDir, { recursive: true });
      log(`7 scale-out: seeding a database for HAProxy → ${n} gateway(s) + ${n} worker(s)`);
      await seedBenchData(dataDir, ctx.settings.seed, 0, database.url);
      const channel = `caregraph:bench:${database.name}`;
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        SUBSCRIPTIONS_CONNECTIONS_PER_MINUTE: '1000000',
        ...UNLIMITED,
        ...where.cgEnv,
        ...NO_SIM_DELAYS,
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        REDIS_EVENTS_CHANNEL: channel,
        RATE_LIMIT_KEY_PREFIX: channel,
      };
      // One topology after the other: ten processes booting at once on a small machine take longer than two waves.
      log(`7 scale-out: starting HAProxy → ${n} gateway(s) + ${n} worker(s) + messaging + ehr`);
      clusters.push(await startCluster({ env, haproxy, gateways: n, workers: n }));
    }
    const [one, two] = clusters;
    // HAProxy prints each server state change on stderr (`-db`): a gateway too busy to answer /readyz within the
    // check interval is taken out of rotation, which shows in the errors of the rows.
    const downs = clusters.map(() => [] as string[]);
    clusters.forEach((c, i) => {
      for (const stream of [c.haproxy.stdout!, c.haproxy.stderr!])
        stream.on('data', (chunk: Buffer) =>
          downs[i].push(
            ...chunk
              .toString('utf8')
              .split('\n')
              .filter((line) => / is DOWN/.test(line)),
          ),
        );
    });
    const label = (c: Cluster) =>
      `HAProxy → ${c.gateways.length} gateway${c.gateways.length > 1 ? 's' : ''} + ${c.workers.length} worker${c.workers.length > 1 ? 's' : ''}`;
    const pids = (c: Cluster) => [...c.gateways, ...c.workers, c.messaging, c.ehr].map((p) => p.child.pid!).concat(c.haproxy.pid!);
    const bearer = { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' };
    const federated = (c: Cluster): Target => ({
      name: `${label(c)}: federated query`,
      url: `${c.base}/graphql`,
      method: 'POST',
      headers: bearer,
      body: federatedBody(true),
      pids: pids(c),
    });
    const send = (c: Cluster): Target => ({
      name: `${label(c)}: REST POST /v1/messages`,
      url: `${c.base}/v1/messages`,
      method: 'POST',
      headers: bearer,
      body: (i) => JSON.stringify(heldSend(ctx.seeded.heldPatientIds, i)),
      pids: pids(c),
    });
    // A first request through a topology that sat idle while the other one started may meet a 502 from HAProxy
    // (seen once under load average 26); each topology answers one federated query before the load, and the
    // failed attempts are reported.
    const warmupFailures: string[] = [];
    for (const c of clusters) {
      for (let attempt = 1; ; attempt++) {
        const response = await fetch(`${c.base}/graphql`, { method: 'POST', headers: bearer, body: federatedBody(true)(0) });
        await response.text();
        if (response.ok) break;
        warmupFailures.push(`${label(c)}: ${response.status}`);
        if (attempt === 5) throw new Error(`7 scale-out: ${label(c)} answered ${warmupFailures.join(', ')}`);
        await sleep(1000);
      }
    }
    for (const [scenario, target] of [
      ['7 scale-out (federated)', federated],
      ['7 scale-out (send)', send],
    ] as const) {
      const pair = await where.compare(scenario, [target(one), target(two)]);
      rows.push(...withRatio(pair, pair[0]));
    }

    const subscribers = [];
    for (const c of clusters) {
      const gateways = c.gateways.map((g) => ({ url: g.base, pid: g.child.pid! }));
      // Status changes go to the first gateway itself: HAProxy is not on the subscribers' path, and must not fail the sends.
      subscribers.push(await fanOut(ctx, ctx.settings.scaleSubscribers, gateways, gateways[0], '7 scale-out subscriptions'));
    }

    const delivery = [];
    for (const c of clusters) {
      log(`7 scale-out delivery: ${ctx.settings.deliveryMessages} messages, ${label(c)}`);
      const metrics = c.workers.map((w) => `${w.base}/metrics`);
      delivery.push({
        gateways: c.gateways.length,
        workers: c.workers.length,
        ...(await drainDelivery(ctx, ctx.settings.deliveryMessages, pids(c), metrics, async (messages) => {
          return (await api({ url: c.base }, ctx.token, 'POST', '/v1/messages/batch', { messages })).accepted;
        })),
      });
    }
    return {
      warmupFailures,
      gatewaysMarkedDown: downs.map((lines, i) => ({ topology: label(clusters[i]), times: lines.length, first: lines[0] })),
      subscribers,
      delivery,
      deliveryRatio: round(delivery[1].messagesPerSecond / delivery[0].messagesPerSecond, 2),
    };
  } finally {
    for (const c of clusters.reverse()) await c.stop();
    for (const database of databases) await database.drop();
  }
}

/** Scenario 6: compositions per patient (three vital signs to one lab result, bench/lib/clinical-load.ts). */
const CLINICAL_PER_PATIENT = 10;
/** Clinical times spread over the last year. */
const CLINICAL_DAYS = 365;
const HEART_RATE = 'http://loinc.org|8867-4';
const BP_SYSTOLIC = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude';
const POPULATION_AQL = `SELECT COUNT(*) FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2] WHERE ${BP_SYSTOLIC} > 140 AND c/context/start_time/value > $since`;
const BP_DIASTOLIC = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0005]/value/magnitude';
/** A patient's highest blood pressures, a row per event: values of a repeated event, paired in SQL. */
const PATIENT_BP_AQL = `SELECT c/uid/value, ${BP_SYSTOLIC} AS systolic, ${BP_DIASTOLIC} FROM EHR e[ehr_id/value=$ehr] CONTAINS COMPOSITION c CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2] ORDER BY systolic DESC LIMIT 10`;
/** Across every EHR: the 50 highest systolic pressures of the population, in SQL on the clinical index. */
const CROSS_EHR_AQL = `SELECT e/ehr_id/value, c/uid/value, ${BP_SYSTOLIC} AS systolic FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[openEHR-EHR-OBSERVATION.blood_pressure.v2] WHERE ${BP_SYSTOLIC} > 140 ORDER BY systolic DESC LIMIT 50`;
/** Clients sending AQL at once in the parallel-query run (more than AQL_CONCURRENCY, so turns are taken). */
const PARALLEL_AQL_CLIENTS = 12;
/** Sequential requests of the exact decrypt count (no other request in flight between the two scrapes) and the unloaded latency. */
const DECRYPT_PROBES = 10;

interface ClinicalRow {
  compositions: number;
  query: string;
  connections: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  cpuMsPerRequest: number;
  peakRssMiB: number;
  /** Median latency of the sequential requests (one at a time, before the load). */
  sequentialP50Ms: number;
  /** Compositions decrypted per request, over the sequential requests. */
  decryptsPerRequest: number | null;
  /** Compositions the answers held per request (FHIR: distinct compositions of the Observations; AQL: those the COUNT counted). */
  answerCompositions: number | null;
  note?: string;
}

async function decryptTotal(platform: Platform): Promise<number> {
  const text = await (await fetch(`${platform.url}/metrics`)).text();
  return Number(/^caregraph_composition_decrypts_total (\S+)/m.exec(text)?.[1] ?? NaN);
}

/** Waits (up to a minute) until requests a load left in flight have finished: the decrypt counter holds still for a second. */
async function quiesce(platform: Platform): Promise<void> {
  let last = await decryptTotal(platform);
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    await sleep(1000);
    const now = await decryptTotal(platform);
    if (now === last) return;
    last = now;
  }
}

/**
 * 6: grows the database through `settings.clinicalSizes` compositions (bulk-loaded, not through HTTP), and at each
 * size starts CareGraph afresh and measures a patient's latest vitals, an AQL population count and a patient's
 * latest heart rates: latency, throughput, CPU, peak RSS, and compositions decrypted per request.
 */
async function clinicalQueries(databaseUrl: string, dataDir: string, settings: Settings, token: string, start: () => Promise<Platform>) {
  const config = loadConfig({ DATA_DIR: dataDir });
  const cipher = new FieldCipher(resolveSecrets(config).encryptionKey);
  const now = new Date();
  const since = new Date(now.getTime() - 30 * 86_400_000).toISOString();
  const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const rows: ClinicalRow[] = [];
  const loads: Array<{ compositions: number; loadSeconds: number; compositionsPerSecond: number; databaseMiB: number; indexRows: number }> = [];
  let loaded = 0;
  for (const size of settings.clinicalSizes) {
    const db = await openDatabase({ dataDir, databaseUrl });
    try {
      const t0 = Date.now();
      let reported = 0;
      log(`6 clinical queries: loading compositions ${loaded} → ${size}`);
      await loadClinicalCompositions(db, cipher, {
        fromPatient: loaded / CLINICAL_PER_PATIENT,
        patients: (size - loaded) / CLINICAL_PER_PATIENT,
        compositionsPerPatient: CLINICAL_PER_PATIENT,
        systemId: config.OPENEHR_SYSTEM_ID,
        now,
        days: CLINICAL_DAYS,
        onProgress: (done, total) => {
          if (done - reported >= 25_000 || done === total) {
            reported = done;
            log(`6 clinical queries: ${loaded + done}/${size} compositions (${round((Date.now() - t0) / 1000, 0)} s)`);
          }
        },
      });
      // Planner statistics and the visibility map, as autovacuum keeps them on a live server.
      for (const table of ['Patient', 'Ehr', 'Composition', 'CompositionVersion', 'ClinicalIndexEntry']) await db.query(`VACUUM ANALYZE ehr."${table}"`);
      const loadSeconds = (Date.now() - t0) / 1000;
      const [{ bytes }] = (await db.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes')).rows;
      const [{ n }] = (await db.query<{ n: string }>('SELECT count(*) AS n FROM ehr."ClinicalIndexEntry"')).rows;
      loads.push({
        compositions: size,
        loadSeconds: round(loadSeconds, 1),
        compositionsPerSecond: round((size - loaded) / loadSeconds, 0),
        databaseMiB: round(Number(bytes) / 2 ** 20, 0),
        indexRows: Number(n),
      });
      loaded = size;
    } finally {
      await db.close();
    }

    const platform = await start();
    const patients = loaded / CLINICAL_PER_PATIENT;
    // Patients spread over everything loaded so far (old and new rows alike).
    const patient = (i: number) => clinicalPatientId((i * 7919) % patients);
    const fhir = (name: string, query: (i: number) => string): Target => ({
      name,
      url: platform.url,
      method: 'GET',
      headers: bearer,
      path: (i) => `/fhir/R4/Observation?patient=Patient/${patient(i)}&${query(i)}`,
      pids: [platform.child.pid],
    });
    // The population query runs one at a time (an analyst's query, each one scanning the population), the per-patient ones as many users' would.
    const queries: Array<{ target: Target; answer: (body: any) => number; connections?: number; probes?: number }> = [
      {
        target: fhir('latest vitals: Observation?patient&category=vital-signs&_sort=-date&_count=10', () => 'category=vital-signs&_sort=-date&_count=10'),
        answer: fhirCompositions,
      },
      {
        target: {
          name: 'AQL population: COUNT of systolic > 140 in the last 30 days',
          url: `${platform.url}/openehr/v1/query/aql`,
          method: 'POST',
          headers: bearer,
          body: () => JSON.stringify({ q: POPULATION_AQL, query_parameters: { since } }),
          pids: [platform.child.pid],
        },
        answer: (body) => Number(body.rows?.[0]?.[0] ?? NaN),
        connections: 1,
        probes: 3,
      },
      ...[1, PARALLEL_AQL_CLIENTS].map((clients) => ({
        target: {
          name: `AQL cross-EHR: the 50 highest systolic pressures, ORDER BY … LIMIT 50, ${clients === 1 ? 'one client' : `${clients} clients at once`}`,
          url: `${platform.url}/openehr/v1/query/aql`,
          method: 'POST' as const,
          headers: bearer,
          body: () => JSON.stringify({ q: CROSS_EHR_AQL }),
          pids: [platform.child.pid],
        },
        answer: (body: any) => (body.rows ?? []).length,
        connections: clients,
        probes: 3,
      })),
      {
        target: fhir(
          `latest heart rates: Observation?patient&code=${HEART_RATE}&_sort=-date&_count=10`,
          () => `code=${encodeURIComponent(HEART_RATE)}&_sort=-date&_count=10`,
        ),
        answer: fhirCompositions,
      },
      {
        target: {
          name: "AQL a patient's highest blood pressures, a row per event",
          url: `${platform.url}/openehr/v1/query/aql`,
          method: 'POST',
          headers: bearer,
          body: (i) => JSON.stringify({ q: PATIENT_BP_AQL, query_parameters: { ehr: `ehr-${patient(i)}` } }),
          pids: [platform.child.pid],
        },
        answer: (body) => new Set((body.rows ?? []).map((row: unknown[]) => row[0])).size,
      },
    ];
    for (const { target, answer, connections = settings.connections, probes = DECRYPT_PROBES } of queries) {
      log(`6 clinical queries at ${size}: ${target.name}`);
      const row: ClinicalRow = {
        compositions: size,
        query: target.name,
        connections,
        requestsPerSecond: 0,
        p50Ms: NaN,
        p99Ms: NaN,
        sequentialP50Ms: NaN,
        errors: 0,
        cpuMsPerRequest: NaN,
        peakRssMiB: NaN,
        decryptsPerRequest: null,
        answerCompositions: null,
      };
      try {
        // The exact count first: sequential requests, so the counter moves only for them.
        await quiesce(platform);
        const before = await decryptTotal(platform);
        let answered = 0;
        const latencies: number[] = [];
        for (let i = 0; i < probes; i++) {
          const t0 = performance.now();
          answered += answer(await preflight({ ...target, path: target.path && (() => target.path!(i)) }));
          latencies.push(performance.now() - t0);
        }
        row.sequentialP50Ms = round(percentile(latencies, 50), 0);
        row.decryptsPerRequest = round(((await decryptTotal(platform)) - before) / probes, 1);
        row.answerCompositions = round(answered / probes, 1);
        const m = await measure(`6 clinical queries (${size})`, target, connections, settings.seconds, settings.warmup);
        Object.assign(row, {
          requestsPerSecond: m.requestsPerSecond,
          p50Ms: m.p50Ms,
          p99Ms: m.p99Ms,
          errors: m.errors,
          cpuMsPerRequest: m.cpuMsPerRequest,
          peakRssMiB: m.peakRssMiB,
        });
      } catch (err) {
        // A refused query (e.g. more candidates than the AQL cap) is a result, not a crash of the run.
        row.errors += 1;
        row.note = (err as Error).message.slice(0, 300);
        log(`6 clinical queries at ${size}: ${row.note}`);
      }
      rows.push(row);
      await quiesce(platform);
    }
    await platform.child.stop();
  }
  const smallest = settings.clinicalSizes[0];
  const largest = settings.clinicalSizes.at(-1)!;
  const at = (size: number, query: string) => rows.find((r) => r.compositions === size && r.query === query);
  const ratios = [...new Set(rows.map((r) => r.query))].map((query) => ({
    query,
    from: smallest,
    to: largest,
    p50Ratio: round(at(largest, query)!.p50Ms / at(smallest, query)!.p50Ms, 2),
    sequentialP50Ratio: round(at(largest, query)!.sequentialP50Ms / at(smallest, query)!.sequentialP50Ms, 2),
  }));
  return { perPatient: CLINICAL_PER_PATIENT, loads, rows, ratios };
}

/** Distinct compositions behind a FHIR search page (an Observation id is `<composition uuid>.<slot>`). */
function fhirCompositions(bundle: any): number {
  return new Set((bundle.entry ?? []).map((e: any) => String(e.resource.id).split('.')[0])).size;
}

/** --soak: mixed load (reads, sends, federated queries, subscribers, webhooks) for N seconds, RSS sampled each second. */
/**
 * `--profile`: the federated query and then the REST send, each measured for `seconds` after a warm-up, on one
 * CareGraph process started with `--cpu-prof`. Stopping the process makes it write one profile per thread; the
 * samples of each thread inside each measurement's window are summarised by area and divided by its requests.
 */
async function profileRun(platform: Platform, paths: Target[], settings: Settings, seconds: number, dir: string) {
  const measured: Array<Measurement & { loadAverage: string }> = [];
  for (const target of paths) {
    log(`profile: ${target.name} × ${settings.connections} for ${seconds} s`);
    const m = await measure('profile', target, settings.connections, seconds, settings.warmup);
    measured.push({ ...m, loadAverage: machine().loadAverage });
  }
  await platform.child.stop();
  const threads = readdirSync(dir)
    .filter((file) => file.endsWith('.cpuprofile'))
    .map((file) => {
      const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
      // CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile; thread 0 is the main thread.
      const id = file.split('.')[4];
      const pglite = id !== '0' && profile.nodes.some((n) => n.callFrame.url.includes('pglite-worker'));
      const thread = id === '0' ? 'event loop' : pglite ? 'PGlite thread' : `worker thread ${id}`;
      // The event loop's WebAssembly is Prisma's query compiler; PGlite's thread runs PostgreSQL compiled to it.
      const wasm = id === '0' ? 'Prisma query compiler (WebAssembly)' : pglite ? 'PostgreSQL (PGlite WebAssembly)' : 'WebAssembly';
      return { thread, file, profile, wasm };
    })
    .sort((a, b) => a.file.localeCompare(b.file));
  return measured.map((m) => ({
    path: m.name,
    seconds,
    requests: m.requests,
    requestsPerSecond: m.requestsPerSecond,
    errors: m.errors,
    /** All of the process's threads, V8's GC helpers included, from /proc. */
    processCpuMsPerRequest: m.cpuMsPerRequest,
    loadAverage: m.loadAverage,
    windowUs: m.windowsUs[0],
    threads: threads.map(({ thread, file, profile, wasm }) => ({
      thread,
      file: join(dir, file),
      ...perRequest(summarise(profile, ROOT, { window: m.windowsUs[0], wasm }), m.requests),
    })),
  }));
}

function perRequest(summary: ProfileSummary, requests: number) {
  const per = (ms: number) => round(ms / Math.max(1, requests), 3);
  const shares = (list: ProfileSummary['categories']) => list.map((c) => ({ name: c.name, msPerRequest: per(c.ms), share: round(c.share, 3) }));
  return {
    busyMsPerRequest: per(summary.busyMs),
    idleShare: round(summary.idleMs / Math.max(1, summary.windowMs), 3),
    categories: shares(summary.categories),
    functions: shares(summary.functions),
  };
}

async function soakRun(platform: Platform, ctx: RunContext, seconds: number) {
  const bearer = { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' };
  const ids = ctx.seeded.messageIds.slice(0, 200);
  const held = ctx.seeded.heldPatientIds;
  const subscribers = await connectSubscribers([`${platform.url.replace('http', 'ws')}/graphql`], ctx.token, 200);
  const hook = await api(platform, ctx.token, 'POST', '/v1/webhooks', {
    url: `${ctx.receiver.url}/soak`,
    events: ['message.sent', 'message.delivered'],
    secret: 'bench-secret-0123456789',
  });
  const samples: Array<{ t: number; rssMiB: number }> = [];
  const t0 = Date.now();
  const timer = setInterval(() => samples.push({ t: (Date.now() - t0) / 1000, rssMiB: sample(platform.child.pid).rssBytes / 2 ** 20 }), 1000);
  const cpu0 = sample(platform.child.pid).cpuSeconds;
  log(`soak: ${seconds} s of mixed load`);
  const loads: Target[] = [
    { name: 'soak read', url: platform.url, method: 'GET', headers: bearer, path: (i) => `/v1/messages/${ids[i % ids.length]}`, pids: [] },
    { name: 'soak federated', url: `${platform.url}/graphql`, method: 'POST', headers: bearer, body: federatedBody(true), pids: [] },
    {
      name: 'soak send',
      url: `${platform.url}/v1/messages`,
      method: 'POST',
      headers: bearer,
      body: (i) =>
        JSON.stringify({
          patientId: held[i % held.length],
          templateId: 'appointment-reminder',
          channel: 'sms',
          variables: { date: '2027-01-15', time: '09:30' },
        }),
      pids: [],
    },
  ];
  // Deliverable sends every second keep subscriptions and webhooks busy for the whole soak.
  const sender = setInterval(() => {
    void api(platform, ctx.token, 'POST', '/v1/messages', {
      patientId: ctx.seeded.patientIds[0],
      templateId: 'appointment-reminder',
      channel: 'sms',
      variables: { date: '2027-01-15', time: '09:30' },
    }).catch(() => {});
  }, 1000);
  const measured = await Promise.all(loads.map((target, i) => measure('soak', target, [3, 3, 1][i], seconds, 0)));
  clearInterval(sender);
  clearInterval(timer);
  await subscribers.close();
  await api(platform, ctx.token, 'DELETE', `/v1/webhooks/${hook.id}`).catch(() => {});
  // RSS saw-tooths with garbage collection, and WebAssembly memory (PGlite) and V8's heap grow in steps to a
  // plateau and never give pages back: a leak shows as a floor that keeps rising. The floor (lowest sample) of
  // each sixth of the run, and its growth over the last third, say whether memory is bounded.
  const sixths = Array.from({ length: 6 }, (_, k) => samples.filter((s) => s.t > (seconds * k) / 6 && s.t <= (seconds * (k + 1)) / 6).map((s) => s.rssMiB));
  const floors = sixths.map((w) => round(Math.min(...w), 1));
  const peaks = sixths.map((w) => round(Math.max(...w), 1));
  const lastThirdFloorGrowth = round(floors[5] - floors[3], 1);
  const lastHalf = samples.filter((s) => s.t >= seconds / 2);
  const lastHalfSlope = linearSlope(
    lastHalf.map((s) => s.t),
    lastHalf.map((s) => s.rssMiB),
  );
  return {
    seconds,
    requests: Object.fromEntries(measured.map((m) => [m.name, { requestsPerSecond: m.requestsPerSecond, p99Ms: m.p99Ms, errors: m.errors }])),
    subscriberEvents: [...subscribers.receipts.values()].reduce((a, r) => a + r.received.length, 0),
    webhookDeliveries: ctx.receiver.arrivals.length,
    cpuSeconds: round(sample(platform.child.pid).cpuSeconds - cpu0, 1),
    rssStartMiB: round(samples[0]?.rssMiB ?? 0, 1),
    rssEndMiB: round(samples.at(-1)?.rssMiB ?? 0, 1),
    rssPeakMiB: round(Math.max(...samples.map((s) => s.rssMiB)), 1),
    floorBySixthMiB: floors,
    peakBySixthMiB: peaks,
    lastThirdFloorGrowthMiB: lastThirdFloorGrowth,
    lastHalfSlopeMiBPerMinute: round(lastHalfSlope * 60, 2),
    // Bounded: the floor rose by less than 2 % of itself over the last third of the run.
    bounded: lastThirdFloorGrowth < 0.02 * floors[5],
    samples: samples.map((s) => [round(s.t, 1), round(s.rssMiB, 1)]),
  };
}

/** Least-squares slope of y over x. */
function linearSlope(x: number[], y: number[]): number {
  const n = x.length;
  if (n < 2) return 0;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (x[i] - mx) * (y[i] - my);
    den += (x[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

function machine() {
  const model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
  return {
    nproc: cpus().length,
    cpu: model,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  };
}

function printReport(results: Record<string, any>, rows: Measurement[]): void {
  const out: string[] = [];
  const m = results.machine;
  out.push(`CareGraph benchmark (${results.mode}) — ${m.nproc} × ${m.cpu}, Node ${m.node}, load average at start ${m.loadAverage}`);
  out.push('');
  const header = ['scenario', 'target', 'conns', 'req/s', 'rounds req/s', 'p50 ms', 'p99 ms', 'CPU s', 'CPU ms/req', 'peak RSS MiB', 'req/s ratio', 'errors'];
  const table = rows.map((r) => [
    r.scenario,
    r.name,
    String(r.connections),
    String(r.requestsPerSecond),
    r.roundsRequestsPerSecond?.join(' / ') ?? '',
    String(r.p50Ms),
    String(r.p99Ms),
    String(r.cpuSeconds),
    String(r.cpuMsPerRequest),
    String(r.peakRssMiB),
    r.ratio !== undefined ? `${r.ratio}×` : '',
    String(r.errors),
  ]);
  if (table.length > 0) out.push(...markdownTable(header, table));
  const fanOutLine = (label: string, s: any) =>
    s.skipped
      ? `${label}: ${s.subscribers} subscribers skipped: ${s.skipped}`
      : `${label}: ${s.subscribers} graphql-ws subscribers on ${s.gateways} gateway process${s.gateways > 1 ? 'es' : ''} (connected in ${s.connectSeconds} s), ${s.statusChanges} status changes (${s.deliveredToAll} reached all${s.refusedSends ? `; ${s.refusedSends} sends refused with 503 and retried` : ''}): last subscriber's receipt p50 ${s.lastReceiptP50Ms} ms, p99 ${s.lastReceiptP99Ms} ms; ${s.kibPerConnection} KiB per connection of live JavaScript memory (${s.garbageCollectedBeforeSamples ? 'after a full garbage collection; ' : ''}heap + external ${s.liveBeforeMiB} → ${s.liveConnectedMiB} MiB; RSS ${s.rssBeforeMiB} → ${s.rssConnectedMiB} MiB)`;
  if (results.subscriptions) out.push('', fanOutLine('3 subscriptions', results.subscriptions));
  if (results.subscriptionsAtScale) out.push(fanOutLine('3 subscriptions', results.subscriptionsAtScale));
  if (results.scaleOut) {
    const s = results.scaleOut;
    for (const f of s.subscribers) out.push(fanOutLine('7 scale-out subscriptions', f));
    for (const d of s.delivery)
      out.push(
        `7 scale-out delivery, ${d.gateways} gateway(s) + ${d.workers} worker(s): ${d.delivered}/${d.accepted} delivered in ${d.seconds} s, ${d.messagesPerSecond} messages/s (CPU ${d.cpuSeconds} s)`,
      );
    out.push(`  2 + 2 / 1 + 1 delivery: ${s.deliveryRatio}×`);
    for (const d of s.gatewaysMarkedDown)
      if (d.times > 0) out.push(`  ${d.topology}: HAProxy took a gateway out of rotation ${d.times} time(s), first: ${d.first}`);
    if (s.warmupFailures.length > 0) out.push(`  first requests refused before the load: ${s.warmupFailures.join(', ')}`);
  }
  if (results.webhooks) {
    const w = results.webhooks;
    const line = (v: any, label: string) =>
      `4 webhooks${label}: ${v.deliveries}/${v.expectedDeliveries} signed deliveries to ${v.subscriptions} endpoints of a local HTTPS receiver at ${v.deliveriesPerSecond}/s (backlog of ${v.backlogSeconds} s drained in ${v.drainSeconds} s over ${v.newConnections} new TLS connections, CPU ${v.cpuSeconds} s)`;
    out.push(`${line(w, '')}; the first, warm-up drain went at ${w.coldDeliveriesPerSecond}/s`);
    const s = w.withSlowEndpoint;
    out.push(
      `${line(s, ', + 1 endpoint answering after 2 s')}; ${round(s.deliveriesPerSecond / Math.max(0.001, w.deliveriesPerSecond), 2)}× the solo rate; the slow endpoint got ${s.slowDeliveries} meanwhile`,
    );
    const o = w.withFifoAndThrottled;
    out.push(
      `${line(o, ', + 1 fifo endpoint + 1 throttled one')}; ${round(o.deliveriesPerSecond / Math.max(0.001, w.deliveriesPerSecond), 2)}× the solo rate; ` +
        `fifo ${o.fifo.deliveries}/${o.fifo.expected} at ${o.fifo.deliveriesPerSecond}/s (${round(o.fifo.deliveriesPerSecond / Math.max(0.001, w.deliveriesPerSecond / w.subscriptions), 2)}× a normal endpoint's share); ` +
        `throttled ${o.throttled.deliveries}/${o.throttled.expected} at ${o.throttled.deliveriesPerSecond}/s (${round(o.throttled.deliveriesPerSecond / o.throttled.rateLimit, 2)}× its rateLimit of ${o.throttled.rateLimit}/s)`,
    );
  }
  if (results.batch) {
    const b = results.batch;
    out.push(
      `4 batch: POST /v1/messages/batch of 1,000 items into queued in ${b.medianSeconds} s median (${b.itemsPerSecond} items/s; accepted ${b.accepted.join(', ')})`,
    );
  }
  if (results.delivery) {
    const d = results.delivery;
    const line = (r: any) => `${r.delivered}/${r.accepted} delivered in ${r.seconds} s, ${r.messagesPerSecond} messages/s (CPU ${r.cpuSeconds} s)`;
    out.push(`4 delivery: ${d.messages} messages from batch acceptance to delivered, no simulated delays; in-process worker ${line(d.inProcess)}`);
    for (const w of d.workerProcesses ?? []) out.push(`  ${w.workers} worker process${w.workers > 1 ? 'es' : ''}: ${line(w)}`);
    if (d.twoWorkersRatio !== undefined) out.push(`  2 worker processes / 1: ${d.twoWorkersRatio}×`);
  }
  if (results.soak) {
    const s = results.soak;
    out.push(
      `soak ${s.seconds} s: RSS ${s.rssStartMiB} → ${s.rssEndMiB} MiB (peak ${s.rssPeakMiB}); RSS floor by sixth of the run ${s.floorBySixthMiB.join(' → ')} MiB, peaks ${s.peakBySixthMiB.join(' / ')} MiB`,
    );
    out.push(
      `  floor growth over the last third ${s.lastThirdFloorGrowthMiB} MiB (slope over the last half ${s.lastHalfSlopeMiBPerMinute} MiB/min): ${s.bounded ? 'bounded' : 'STILL GROWING'}; ${s.subscriberEvents} subscriber events, ${s.webhookDeliveries} webhook deliveries`,
    );
    for (const [name, r] of Object.entries<any>(s.requests)) out.push(`  ${name}: ${r.requestsPerSecond} req/s, p99 ${r.p99Ms} ms, ${r.errors} errors`);
  }
  for (const p of results.profile ?? []) {
    out.push(
      '',
      `profile: ${p.path}: ${p.requests} requests in ${p.seconds} s (${p.requestsPerSecond} req/s, ${p.errors} errors, load average ${p.loadAverage}); process CPU ${p.processCpuMsPerRequest} ms/req (all threads, /proc)`,
    );
    const rows: string[][] = [];
    for (const th of p.threads) {
      rows.push([th.thread, `busy (sampled), ${Math.round(th.idleShare * 100)} % idle`, String(th.busyMsPerRequest), '100 %']);
      for (const c of th.categories) rows.push(['', c.name, String(c.msPerRequest), `${(c.share * 100).toFixed(1)} %`]);
    }
    out.push(...markdownTable(['thread', 'area (self time)', 'ms/req', 'share of thread'], rows));
    for (const th of p.threads) {
      out.push(`  top functions, ${th.thread} (ms/req, share):`);
      for (const f of th.functions.slice(0, 10)) out.push(`    ${f.msPerRequest}  ${(f.share * 100).toFixed(1)} %  ${f.name}`);
    }
    out.push(...p.threads.map((th: any) => `  ${th.thread} profile: ${th.file}`));
  }
  if (results.clinical) {
    const c = results.clinical;
    out.push('', `6 clinical queries: ${c.perPatient} compositions per patient, bulk-loaded; CareGraph restarted at each size`);
    for (const l of c.loads)
      out.push(
        `  ${l.compositions} compositions: loaded in ${l.loadSeconds} s (${l.compositionsPerSecond}/s), ${l.indexRows} index rows, database ${l.databaseMiB} MiB`,
      );
    out.push(
      ...markdownTable(
        [
          'compositions',
          'query',
          'sequential p50 ms',
          'conns',
          'req/s',
          'p50 ms',
          'p99 ms',
          'CPU ms/req',
          'peak RSS MiB',
          'decrypts/req',
          'answer compositions/req',
          'errors',
        ],
        c.rows.map((r: any) => [
          String(r.compositions),
          r.query,
          String(r.sequentialP50Ms),
          String(r.connections),
          String(r.requestsPerSecond),
          String(r.p50Ms),
          String(r.p99Ms),
          String(r.cpuMsPerRequest),
          String(r.peakRssMiB),
          String(r.decryptsPerRequest ?? '–'),
          String(r.answerCompositions ?? '–'),
          `${r.errors}${r.note ? ` (${r.note})` : ''}`,
        ]),
      ),
    );
    for (const r of c.ratios) out.push(`  p50 at ${r.to} / p50 at ${r.from}: ${r.p50Ratio}× under load, ${r.sequentialP50Ratio}× sequential — ${r.query}`);
  }
  out.push('', `total ${results.totalSeconds} s`);
  process.stdout.write(`${out.join('\n')}\n`);
}

function markdownTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)];
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
