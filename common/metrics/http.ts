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
 * A listener serving only GET /metrics, for a process without an HTTP server
 * of its own (the worker role) or when METRICS_PORT asks for a separate port.
 */
export async function startMetricsListener(registry: MetricsRegistry, host: string, port: number): Promise<RunningServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'Only GET /metrics is served here' } }));
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
