import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS = 100;

export interface ProcessSample {
  /** User + system CPU seconds since the process started. */
  cpuSeconds: number;
  rssBytes: number;
}

/** CPU and resident memory of a process, from /proc (Linux). */
export function sample(pid: number): ProcessSample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS;
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds, rssBytes: rss ? Number(rss[1]) * 1024 : 0 };
}

/** Samples processes while a measurement runs: CPU seconds used and peak RSS (summed over the processes). */
export class Monitor {
  private readonly start: ProcessSample[];
  private peaks: number[];
  private readonly timer: NodeJS.Timeout;
  readonly series: Array<{ t: number; rssBytes: number }> = [];
  private readonly t0 = Date.now();

  constructor(
    private readonly pids: number[],
    intervalMs = 100,
  ) {
    this.start = pids.map(sample);
    this.peaks = this.start.map((s) => s.rssBytes);
    this.timer = setInterval(() => this.tick(), intervalMs);
  }

  private tick(): void {
    const now = this.pids.map(sample);
    this.peaks = now.map((s, i) => Math.max(s.rssBytes, this.peaks[i]));
    this.series.push({ t: (Date.now() - this.t0) / 1000, rssBytes: now.reduce((a, s) => a + s.rssBytes, 0) });
  }

  stop(): { cpuSeconds: number; cpuSecondsByProcess: number[]; peakRssBytes: number; rssBytes: number } {
    clearInterval(this.timer);
    this.tick();
    const end = this.pids.map(sample);
    const cpuSecondsByProcess = end.map((s, i) => s.cpuSeconds - this.start[i].cpuSeconds);
    return {
      cpuSeconds: cpuSecondsByProcess.reduce((a, b) => a + b, 0),
      cpuSecondsByProcess,
      peakRssBytes: this.peaks.reduce((a, b) => a + b, 0),
      rssBytes: end.reduce((a, s) => a + s.rssBytes, 0),
    };
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Child {
  name: string;
  pid: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a Node script (with `nodeArgs` for node itself) as a child process and waits until `ready` (a URL answering 2xx, or a request) succeeds. */
export async function startChild(
  name: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: string | { url: string; init: RequestInit },
  timeoutMs = 120_000,
  nodeArgs: string[] = [],
): Promise<Child> {
  const probe = typeof ready === 'string' ? { url: ready, init: {} } : ready;
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`${name} exited during start-up:\n${stderr}`);
    try {
      const response = await fetch(probe.url, { ...probe.init, signal: AbortSignal.timeout(2000) });
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not become ready within ${timeoutMs / 1000} s:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    name,
    pid: child.pid!,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
