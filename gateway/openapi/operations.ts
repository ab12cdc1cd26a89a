import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

/** Paths without a token: health, readiness, metrics (gateway/health.ts) and this document itself. */
export function registerOperations(registry: OpenAPIRegistry): void {
  const tags = ['Operations'];
  registry.registerPath({
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'Liveness: the process answers',
    tags,
    security: [],
    responses: {
      200: { description: 'Alive.', content: { 'application/json': { schema: z.strictObject({ status: z.literal('ok') }), example: { status: 'ok' } } } },
    },
  });
  const readiness = z
    .strictObject({ status: z.enum(['ready', 'not ready']), checks: z.record(z.string(), z.enum(['ok', 'unavailable'])) })
    .meta({ id: 'Readiness' });
  registry.registerPath({
    method: 'get',
    path: '/readyz',
    operationId: 'ready',
    summary: 'Readiness: supergraph loaded and dependencies reachable',
    tags,
    security: [],
    responses: {
      200: {
        description: 'Ready to serve.',
        content: { 'application/json': { schema: readiness, example: { status: 'ready', checks: { supergraph: 'ok', database: 'ok' } } } },
      },
      503: {
        description: 'A dependency is unreachable.',
        content: { 'application/json': { schema: readiness, example: { status: 'not ready', checks: { supergraph: 'ok', database: 'unavailable' } } } },
      },
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics (text exposition format)',
    tags,
    security: [],
    responses: { 200: { description: 'The metrics.', content: { 'text/plain': { schema: z.string(), example: 'process_cpu_user_seconds_total 1.23\n' } } } },
  });
  const docTags = ['API reference'];
  registry.registerPath({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiJson',
    summary: 'This document as JSON',
    tags: docTags,
    security: [],
    responses: { 200: { description: 'OpenAPI 3.1.', content: { 'application/json': { schema: z.looseObject({ openapi: z.string() }) } } } },
  });
  registry.registerPath({
    method: 'get',
    path: '/openapi.yaml',
    operationId: 'openApiYaml',
    summary: 'This document as YAML',
    tags: docTags,
    security: [],
    responses: { 200: { description: 'OpenAPI 3.1.', content: { 'application/yaml': { schema: z.string() } } } },
  });
  registry.registerPath({
    method: 'get',
    path: '/docs',
    operationId: 'apiReferencePage',
    summary: 'The API reference page (Swagger UI, served locally)',
    tags: docTags,
    security: [],
    responses: { 200: { description: 'An HTML page.', content: { 'text/html': { schema: z.string() } } } },
  });
}
