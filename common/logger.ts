import pino, { Logger, type DestinationStream } from 'pino';
import { activeTraceIds } from './telemetry/tracing';

/** One pino root logger per process; components take children named by role. `destination`: where lines go (default stdout). */
export function createLogger(level: string, name = 'caregraph', destination?: DestinationStream): Logger {
  return pino(
    {
      name,
      level,
      // Log lines written inside a traced span carry its ids (docs/observability.md, log correlation).
      mixin: activeTraceIds,
      serializers: { err: serializeError },
      // Bearer tokens and secrets must never reach a log line.
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', '*.secret', '*.password', 'authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * pino's error serializer, keeping only data: a live object hung on an error is dropped. node-postgres's
 * pool puts the failed client on a connection error (`err.client`), and that client holds the connection
 * parameters (password included) and the backend's cancel key; a log line needs the message and code.
 */
function serializeError(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error);
  return serialized && typeof serialized === 'object' ? onlyData(serialized, 0) : serialized;
}

/** Primitives, arrays and plain objects (dates as they are); instances of other classes are left out. */
function onlyData(value: object, depth: number): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const data = dataOf(field, depth + 1);
    if (data !== undefined) kept[key] = data;
  }
  return kept;
}

function dataOf(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (value instanceof Date) return value;
  if (depth > 5) return undefined;
  if (value instanceof Error) return onlyData(pino.stdSerializers.err(value), depth);
  if (Array.isArray(value)) return value.map((item) => dataOf(item, depth + 1) ?? null);
  const proto = Object.getPrototypeOf(value) as unknown;
  // pino's serialized errors (aggregateErrors, an error-valued field) have a prototype of pino's own.
  if (proto === Object.prototype || proto === null || isSerializedError(value)) return onlyData(value, depth);
  return undefined;
}

function isSerializedError(value: object): boolean {
  return typeof (value as { type?: unknown }).type === 'string' && typeof (value as { stack?: unknown }).stack === 'string';
}

export type { Logger };
