import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * One Prometheus registry per process (per platform in tests, where several
 * run in one Node process). Series are defined in one module per area
 * (gateway/metrics.ts, subgraphs/messaging/metrics.ts, …) on top of these
 * helpers; services record through those modules' small interfaces.
 */
export type MetricsRegistry = Registry;

export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

const areas = new WeakMap<Registry, Map<string, unknown>>();

/**
 * An area's series, defined once per registry: in the all-in-one process the
 * messaging subgraph and the worker record into the same series.
 */
export function defineOnce<T>(registry: Registry, area: string, define: (registry: Registry) => T): T {
  let defined = areas.get(registry);
  if (!defined) areas.set(registry, (defined = new Map()));
  if (!defined.has(area)) defined.set(area, define(registry));
  return defined.get(area) as T;
}

/** Latency buckets (seconds) of in-process work and HTTP calls. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Client-chosen label values (GraphQL operation names) kept bounded: the
 * first `max` distinct values are kept, any later one becomes 'other'.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();
  constructor(private readonly max: number) {}

  value(raw: string | null | undefined, fallback = 'anonymous'): string {
    if (!raw) return fallback;
    const text = raw.slice(0, 100);
    if (this.seen.has(text)) return text;
    if (this.seen.size >= this.max) return 'other';
    this.seen.add(text);
    return text;
  }
}

/** Runs a scrape-time collection with a time bound, so a slow database cannot hang /metrics. */
export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export { Counter, Gauge, Histogram };
