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
      // Bearer tokens and secrets must never reach a log line.
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', '*.secret', '*.password', 'authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

export type { Logger };
