import autocannon from 'autocannon';
import { Monitor } from './proc';

export interface Target {
  /** Row label, e.g. "CareGraph gateway (REST)". */
  name: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** A request body per call (rotates ids); omitted for GET. */
  body?: (i: number) => string;
  /** A path per call (rotates ids), relative to the url's origin. */
  path?: (i: number) => string;
  /** Processes under test (CPU and memory are summed over them). */
  pids: number[];
}

export interface Measurement {
  scenario: string;
  name: string;
  connections: number;
  durationSeconds: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  cpuSeconds: number;
  cpuMsPerRequest: number;
  cpuMsPerRequestByProcess: number[];
  peakRssMiB: number;
  /** Interleaved measurements: requests per second of each round. */
  roundsRequestsPerSecond?: number[];
  /** Each measured round's start and end on the monotonic clock, in µs: the time base of `node --cpu-prof` samples. */
  windowsUs: Array<{ startUs: number; endUs: number }>;
  /** Filled in by the caller: this row's throughput relative to the scenario's reference row. */
  ratio?: number;
  ratioTo?: string;
}

/** One call, checked: a 2xx answer and, for GraphQL, no errors (peers answer errors with 200). */
export async function preflight(target: Target): Promise<unknown> {
  const url = target.path ? new URL(target.path(0), target.url).toString() : target.url;
  const response = await fetch(url, { method: target.method, headers: target.headers, body: target.body?.(0) });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  if (!response.ok || (body && typeof body === 'object' && Array.isArray(body.errors))) {
    throw new Error(`${target.name}: preflight answered ${response.status}: ${text.slice(0, 500)}`);
  }
  return body;
}

/** Closed-loop load with `connections` concurrent clients for `seconds`, after a short warm-up. */
export async function measure(scenario: string, target: Target, connections: number, seconds: number, warmupSeconds: number): Promise<Measurement> {
  await preflight(target);
  const load = loadFor(target, connections);
  if (warmupSeconds > 0) await load(warmupSeconds);
  const run = await sampled(target, load, seconds);
  return toMeasurement(scenario, target, connections, [run]);
}

/**
 * Targets compared with each other, measured in interleaved rounds (A B C, B C A, C A B, …) so that a machine
 * whose speed drifts over minutes (shared hosts) slows each target alike. Each target is warmed up once; its
 * row has the median of its rounds' requests per second and latencies, CPU and requests summed over all rounds.
 */
export async function measureInterleaved(
  scenario: string,
  targets: Target[],
  connections: number,
  rounds: number,
  seconds: number,
  warmupSeconds: number,
): Promise<Measurement[]> {
  const loads = targets.map((target) => loadFor(target, connections));
  for (const [i, target] of targets.entries()) {
    await preflight(target);
    if (warmupSeconds > 0) await loads[i](warmupSeconds);
  }
  const runs: Run[][] = targets.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < targets.length; k++) {
      const i = (round + k) % targets.length;
      runs[i].push(await sampled(targets[i], loads[i], seconds));
    }
  }
  return targets.map((target, i) => toMeasurement(scenario, target, connections, runs[i]));
}

type LoadResult = Awaited<ReturnType<typeof autocannon>>;

interface Run {
  seconds: number;
  requests: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  cpuSeconds: number;
  cpuSecondsByProcess: number[];
  peakRssBytes: number;
  startUs: number;
  endUs: number;
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

function loadFor(target: Target, connections: number): (seconds: number) => Promise<LoadResult> {
  let counter = 0;
  const options = {
    url: target.url,
    connections,
    method: target.method,
    headers: target.headers,
    timeout: 30,
    requests: [
      {
        setupRequest: (request: any) => {
          const i = counter++;
          return {
            ...request,
            ...(target.path ? { path: target.path(i) } : {}),
            ...(target.body ? { body: target.body(i) } : {}),
          };
        },
      },
    ],
  };
  return (seconds) => autocannon({ ...options, duration: seconds });
}

async function sampled(target: Target, load: (seconds: number) => Promise<LoadResult>, seconds: number): Promise<Run> {
  const monitor = new Monitor(target.pids);
  const startUs = monotonicUs();
  const result = await load(seconds);
  const endUs = monotonicUs();
  const usage = monitor.stop();
  return {
    seconds,
    requests: result['2xx'],
    failed: result.errors + result.timeouts + result.non2xx,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuSeconds: usage.cpuSeconds,
    cpuSecondsByProcess: usage.cpuSecondsByProcess,
    peakRssBytes: usage.peakRssBytes,
    startUs,
    endUs,
  };
}

function toMeasurement(scenario: string, target: Target, connections: number, runs: Run[]): Measurement {
  const sum = (pick: (r: Run) => number) => runs.reduce((a, r) => a + pick(r), 0);
  const requests = sum((r) => r.requests);
  const cpuSeconds = sum((r) => r.cpuSeconds);
  return {
    scenario,
    name: target.name,
    connections,
    durationSeconds: sum((r) => r.seconds),
    requests,
    requestsPerSecond: round(median(runs.map((r) => r.requests / r.seconds)), 1),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    errors: sum((r) => r.failed),
    cpuSeconds: round(cpuSeconds, 2),
    cpuMsPerRequest: requests > 0 ? round((cpuSeconds * 1000) / requests, 3) : 0,
    // Per process of target.pids (a peer gateway, then the CareGraph process serving its subgraphs).
    cpuMsPerRequestByProcess: target.pids.map((_, i) => (requests > 0 ? round((sum((r) => r.cpuSecondsByProcess[i]) * 1000) / requests, 3) : 0)),
    peakRssMiB: round(Math.max(...runs.map((r) => r.peakRssBytes)) / 2 ** 20, 1),
    windowsUs: runs.map((r) => ({ startUs: r.startUs, endUs: r.endUs })),
    ...(runs.length > 1 ? { roundsRequestsPerSecond: runs.map((r) => round(r.requests / r.seconds, 1)) } : {}),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
