import pino, { Logger } from 'pino';

/** One pino root logger per process; components take children named by role. */
export function createLogger(level: string, name = 'caregraph'): Logger {
  return pino({
    name,
    level,
    // Bearer tokens and secrets must never reach a log line.
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.secret', '*.password', 'authorization'],
      censor: '[redacted]',
    },
  });
}

export type { Logger };
