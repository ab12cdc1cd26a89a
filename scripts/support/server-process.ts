import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { projectRoot } from '../../common/paths';
import type { ProcessRole } from '../../bin/platform';

/**
 * The compiled `node dist/bin/caregraph.js all` (or another role), as `npm start` runs it, in a
 * child process: `npm run cluster`'s processes, and the tests of what only a real process shows
 * (signals, exit codes, two processes on one DATA_DIR). NODE_ENV stays unset, as with `npm start`.
 */
export interface ServerProcess {
  base: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** When it exited (Date.now()). */
  at: number;
}

const root = projectRoot();

/**
 * A port free now, for a process about to listen on it. Chosen below the kernel's range of ephemeral ports where
 * that range is known (Linux): a port the kernel hands out for port 0 can be handed out again, before our process
 * listens, to any process beside it that binds port 0 or connects (seen: EADDRINUSE in the cluster test, whose
 * subgraph ports are fixed before the processes start). Elsewhere, one the kernel hands out.
 */
export async function freePort(): Promise<number> {
  const ephemeralStart = ephemeralPortsStart();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = ephemeralStart ? LOWEST_CHOSEN_PORT + randomInt(ephemeralStart - LOWEST_CHOSEN_PORT) : 0;
    const bound = await listenOnce(port);
    if (bound !== undefined) return bound;
  }
  throw new Error('no free port found below the ephemeral range in 100 tries');
}

const LOWEST_CHOSEN_PORT = 10_000;

/** The first ephemeral port (Linux), when the range leaves room below it. */
function ephemeralPortsStart(): number | undefined {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return start > LOWEST_CHOSEN_PORT + 1000 ? start : undefined;
  } catch {
    return undefined;
  }
}

/** Listens on `port` (0: any) and closes again: the port bound, or undefined when it was taken. */
function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(undefined) : reject(err)));
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

/** Per role: the variable of the port `base` points at, and the path that answers 200 once the role is up. */
const ROLE_PORTS: Record<ProcessRole, { variable: string; ready: string }> = {
  all: { variable: 'PORT', ready: '/readyz' },
  gateway: { variable: 'PORT', ready: '/readyz' },
  messaging: { variable: 'MESSAGING_PORT', ready: '/healthz' },
  ehr: { variable: 'EHR_PORT', ready: '/healthz' },
  worker: { variable: 'METRICS_PORT', ready: '/metrics' },
};

/**
 * Starts the process (role 'all' unless told); with `ready` (default) waits until the role answers
 * (/readyz; a subgraph's /healthz; the worker's /metrics) and fails if it exits first.
 * `port`: a fixed port, where clients already point (`npm run cluster`); otherwise a free one.
 */
export async function startServer(
  env: Record<string, string>,
  options: { ready?: boolean; port?: number; role?: ProcessRole; readyTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(options.port ?? (await freePort()), env, options);
    } catch (err) {
      // A port found free can be taken before the process listens on it (processes starting beside it bind
      // ports of their own): a port of our choosing is chosen again.
      if (options.port !== undefined || attempt === 3 || !/EADDRINUSE/.test((err as Error).message)) throw err;
    }
  }
}

async function startOn(
  port: number,
  env: Record<string, string>,
  options: { ready?: boolean; role?: ProcessRole; readyTimeoutMs?: number },
): Promise<ServerProcess> {
  const role = options.role ?? 'all';
  const { variable, ready } = ROLE_PORTS[role];
  const child = spawn(process.execPath, [join(root, 'dist/bin/caregraph.js'), role], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SIM_SEND_DELAY_MS: '20',
      SIM_DELIVER_DELAY_MS: '50',
      ...env,
      [variable]: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let started = false;
  child.on('message', (message: { started?: string }) => void (started ||= message?.started === role));
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
  const server: ServerProcess = { base: `http://127.0.0.1:${port}`, child, output: () => output, exited };
  if (options.ready === false) return server;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server exited before it was ready:\n${output}`);
    try {
      if ((await fetch(`${server.base}${ready}`)).status === 200) return server;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server was not ready in time:\n${output}`);
    }
    // Often: a test waits on every start, and a refused connection costs next to nothing.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Sends `signal` and waits for the exit; `ms` is the time from the signal to the exit. */
export async function signalAndWait(server: ServerProcess, signal: NodeJS.Signals): Promise<Exit & { ms: number }> {
  const sent = Date.now();
  server.child.kill(signal);
  const exit = await server.exited;
  return { ...exit, ms: exit.at - sent };
}

/** Kills a process a failed test left running. */
export function killIfRunning(server: ServerProcess | undefined): void {
  if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
}
