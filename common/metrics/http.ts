import http from 'node:http';
import type { RequestHandler } from 'express';
import { listen, type RunningServer } from '../http/listen';
import type { MetricsRegistry } from './registry';

/** GET /metrics in the Prometheus text format; needs no token (bind it where only the scraper reaches). */
export function metricsHandler(registry: MetricsRegistry): RequestHandler {
  return async (_req, res, next) => {
    try {
      res.type(registry.contentType).send(await registry.metrics());
    } catch (err) {
      next(err);
    }
  };
}

/**
 * A listener serving GET /metrics and GET /healthz, for a process without an
 * HTTP server of its own (the worker role: its Kubernetes probes ask /healthz
 * here) or when METRICS_PORT asks for a separate port.
 */
export async function startMetricsListener(registry: MetricsRegistry, host: string, port: number): Promise<RunningServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      // Answering at all is the health: a blocked event loop does not.
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'Only GET /metrics and GET /healthz are served here' } }));
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  const running = await listen(server, host, port);
  return { ...running, url: `${running.url}/metrics` };
}
