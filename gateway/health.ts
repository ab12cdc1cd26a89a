import { Router } from 'express';
import type { MetricsRegistry } from '../common/metrics/registry';
import { metricsHandler } from '../common/metrics/http';
import type { Logger } from '../common/logger';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

/** /healthz (alive), /readyz (dependencies reachable), /metrics (Prometheus); none needs a token. */
export function healthRoutes(registry: MetricsRegistry, checks: ReadinessCheck[], logger: Logger): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results: Record<string, string> = {};
    let ready = true;
    await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await check();
          results[name] = 'ok';
        } catch (err) {
          ready = false;
          results[name] = 'unavailable';
          logger.warn({ err, check: name }, 'readiness check failed');
        }
      }),
    );
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks: results });
  });
  router.get('/metrics', metricsHandler(registry));
  return router;
}
