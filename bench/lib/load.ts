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
  peakRssMiB: number;
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
  if (warmupSeconds > 0) await autocannon({ ...options, duration: warmupSeconds });
  const monitor = new Monitor(target.pids);
  const result = await autocannon({ ...options, duration: seconds });
  const usage = monitor.stop();
  const requests = result['2xx'];
  const failed = result.errors + result.timeouts + result.non2xx;
  return {
    scenario,
    name: target.name,
    connections,
    durationSeconds: seconds,
    requests,
    requestsPerSecond: round(requests / seconds, 1),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: failed,
    cpuSeconds: round(usage.cpuSeconds, 2),
    cpuMsPerRequest: requests > 0 ? round((usage.cpuSeconds * 1000) / requests, 3) : 0,
    peakRssMiB: round(usage.peakRssBytes / 2 ** 20, 1),
  };
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
