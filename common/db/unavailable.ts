import { AppError } from '../errors';

/** What a client is told to wait before retrying while the database is unreachable (the `Retry-After` header). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Node socket errors of a connection that cannot be made or was cut. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/**
 * Prisma's wrappers: P1001 can't reach the server, P1002 timed out reaching it, P1008 operation
 * timed out, P1017 the server closed the connection, P2024 timed out waiting for a pool connection.
 */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/**
 * P2028 is every interactive-transaction failure; only this one is "busy": the transaction waited its whole
 * maxWait for a connection (on the embedded database, the one connection every request queues for).
 */
const TRANSACTION_NOT_STARTED = /Unable to start a transaction in the given time/;
/** Prisma driver adapter error kinds (`meta.driverAdapterError.cause.kind`) of the same failures. */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/** SQLSTATE: 57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now, 53300 too many connections; class 08 is checked apart. */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** node-postgres reports a cut or timed-out connection without a code. */
const PG_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * Whether an error means "the database cannot be reached right now" (a
 * transient outage the caller should retry) rather than a bug or bad input.
 * The one classification behind 503 SERVICE_UNAVAILABLE for both subgraphs,
 * the gateway and the REST adapters. Follows `cause`, Prisma's
 * `meta.driverAdapterError` and AggregateError's `errors` (pg's connect
 * to several addresses).
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { code?: unknown; kind?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown }; errors?: unknown };
  if (typeof e.code === 'string') {
    if (SOCKET_CODES.has(e.code) || PRISMA_CODES.has(e.code) || SQLSTATES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true;
    if (e.code === 'P2028' && typeof e.message === 'string' && TRANSACTION_NOT_STARTED.test(e.message)) return true;
  }
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
  if (typeof e.message === 'string' && PG_MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1) || isDatabaseUnavailable(e.meta?.driverAdapterError, depth + 1);
}

export function databaseUnavailable(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', `The database is temporarily unavailable; retry after ${DATABASE_RETRY_AFTER_SECONDS} seconds`);
}
