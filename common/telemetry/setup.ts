import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { setTracingEnabled } from './tracing';

export interface Tracing {
  /** Exports the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

let active: { provider: NodeTracerProvider; users: number } | undefined;

/**
 * Registers the process's tracer provider when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set: spans batched to `<endpoint>/v1/traces` over OTLP/HTTP (JSON), W3C
 * trace context, AsyncLocalStorage as the active-span store. Unset: nothing
 * is registered and the API stays a no-op. One provider per process: a
 * second platform in the same process (tests) shares the first one's.
 */
export function startTracing(endpoint: string | undefined, serviceName: string): Tracing {
  if (!endpoint) return { shutdown: async () => {} };
  if (!active) {
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` }), { scheduledDelayMillis: 500 })],
    });
    provider.register();
    active = { provider, users: 0 };
    setTracingEnabled(true);
  }
  const current = active;
  current.users++;
  return {
    shutdown: async () => {
      current.users--;
      await current.provider.forceFlush();
      if (current.users > 0 || active !== current) return;
      active = undefined;
      setTracingEnabled(false);
      await current.provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
