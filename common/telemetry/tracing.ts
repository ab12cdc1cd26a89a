import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

/**
 * Our own span boundaries (gateway request, subgraph fetch and request, job
 * run, provider send, webhook send) on the OpenTelemetry API. Without a
 * tracer provider (OTEL_EXPORTER_OTLP_ENDPOINT unset, see ./setup.ts) every
 * call here is the API's no-op: no span is recorded, nothing is propagated.
 */
const tracer = () => trace.getTracer('caregraph');

// Kept here, not in ./setup.ts, so that the per-request middleware can ask without loading the exporter and SDK
// modules that only a process with tracing configured needs (about 0.3 s of every start-up otherwise).
let recording = false;

/** Whether this process records spans (our per-request middleware skips all work otherwise). */
export const tracingEnabled = (): boolean => recording;

/** Set by ./setup.ts when it registers or removes the process's tracer provider. */
export function setTracingEnabled(on: boolean): void {
  recording = on;
}

/** Runs `work` in a new span that is active for everything it awaits; ends it with the outcome. */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * A span for work that is not one awaited call (each job of a batch that is handled set-based): its context,
 * to run the job's own calls in and to carry on, and `end`, given the error when the work failed.
 */
export function startSpan(name: string, options: { kind?: SpanKind; parent?: Context }): { context: Context; end(err?: unknown): void } {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL }, parent);
  return {
    context: trace.setSpan(parent, span),
    end(err?: unknown) {
      if (err !== undefined) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      }
      span.end();
    },
  };
}

/** The W3C trace context (`traceparent`, `tracestate`) of the active span, for headers and job payloads; empty without one. */
export function traceCarrier(from: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  return carrier;
}

/** The context a W3C `traceparent` (from headers or a job payload) names; the root context without one. */
export function contextFrom(carrier: Record<string, unknown>): Context {
  return propagation.extract(ROOT_CONTEXT, carrier, {
    get: (c, key) => {
      const value = c[key];
      return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
    },
    keys: (c) => Object.keys(c),
  });
}

/** trace_id and span_id of the active span, for log lines (pino mixin); empty without one. */
export function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span || !trace.isSpanContextValid(span.spanContext())) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

export { context, SpanKind, type Context, type Span };
