import type { RequestHandler } from 'express';
import { BoundedLabel, Counter, defineOnce, Gauge, Histogram, LATENCY_BUCKETS, type MetricsRegistry } from '../common/metrics/registry';
import { routeOf } from '../common/telemetry/http';

/** What the gateway records; series defined below, nowhere else. */
export interface GatewayMetrics {
  /** A finished HTTP request, by route template (never the raw path). */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** A GraphQL operation answered; `code` is the first error's code, 'none' without errors. */
  graphqlOperation(operationName: string | null | undefined, type: string, code: string): void;
  /** One fetch of the query plan to a subgraph. */
  subgraphFetch(subgraph: string, outcome: 'ok' | 'graphql_error' | 'error', seconds: number): void;
  rateLimitRefused(category: string): void;
  /** Counts live subscriptions on scrape. */
  observeSubscriptions(count: () => number): void;
}

/** At most this many distinct operation names are labelled; later ones count as 'other'. */
const MAX_OPERATION_NAMES = 200;

export function gatewayMetrics(registry: MetricsRegistry): GatewayMetrics {
  return defineOnce(registry, 'gateway', (registers) => {
    const requests = new Counter({
      name: 'caregraph_http_requests_total',
      help: 'HTTP requests by route template, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registers],
    });
    const duration = new Histogram({
      name: 'caregraph_http_request_duration_seconds',
      help: 'HTTP request latency by route template and method',
      labelNames: ['route', 'method'],
      buckets: LATENCY_BUCKETS,
      registers: [registers],
    });
    const operations = new Counter({
      name: 'caregraph_graphql_operations_total',
      help: 'GraphQL operations by operation name, type and error code (none = no error)',
      labelNames: ['operation', 'type', 'code'],
      registers: [registers],
    });
    const fetches = new Counter({
      name: 'caregraph_subgraph_fetches_total',
      help: 'Query-plan fetches to a subgraph by outcome',
      labelNames: ['subgraph', 'outcome'],
      registers: [registers],
    });
    const fetchDuration = new Histogram({
      name: 'caregraph_subgraph_fetch_duration_seconds',
      help: 'Query-plan fetch latency by subgraph and outcome',
      labelNames: ['subgraph', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registers],
    });
    const refusals = new Counter({
      name: 'caregraph_rate_limit_refusals_total',
      help: 'Requests refused by a rate limit, by category',
      labelNames: ['category'],
      registers: [registers],
    });
    const counters: Array<() => number> = [];
    new Gauge({
      name: 'caregraph_subscriptions_active',
      help: 'Live GraphQL subscriptions (graphql-ws) on this process',
      registers: [registers],
      collect() {
        this.set(counters.reduce((sum, count) => sum + count(), 0));
      },
    });
    const names = new BoundedLabel(MAX_OPERATION_NAMES);
    return {
      httpRequest: (route, method, status, seconds) => {
        requests.inc({ route, method, status: String(status) });
        duration.observe({ route, method }, seconds);
      },
      graphqlOperation: (operationName, type, code) => operations.inc({ operation: names.value(operationName), type, code }),
      subgraphFetch: (subgraph, outcome, seconds) => {
        fetches.inc({ subgraph, outcome });
        fetchDuration.observe({ subgraph, outcome }, seconds);
      },
      rateLimitRefused: (category) => refusals.inc({ category }),
      observeSubscriptions: (count) => void counters.push(count),
    };
  });
}

/** Methods we label as themselves; anything else counts as 'other'. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Records every request when its answer is finished, labelled with its route template (never the raw path). */
export function httpMetrics(metrics: GatewayMetrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      metrics.httpRequest(routeOf(req), METHODS.has(req.method) ? req.method : 'other', res.statusCode, (performance.now() - started) / 1000);
    });
    next();
  };
}
