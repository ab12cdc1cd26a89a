import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { AppError, isErrorCode } from '../errors';
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable, isDatabaseUnavailable } from '../db/unavailable';
import type { Logger } from '../logger';

/** Apollo's own codes for bad documents and variables, folded into the contract's vocabulary. */
const CLIENT_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'BAD_REQUEST',
]);

/**
 * formatError for every GraphQL server of CareGraph: AppErrors keep their
 * code and details, client mistakes become VALIDATION_ERROR, an unreachable
 * database becomes SERVICE_UNAVAILABLE (with `retryAfter` seconds), and
 * anything unexpected is logged and answered as INTERNAL_ERROR without internals.
 */
export function createErrorFormatter(logger: Logger, options: { hideSuggestions?: boolean } = {}) {
  const format = formatWith(logger);
  if (!options.hideSuggestions) return format;
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const result = format(formatted, error);
    return { ...result, message: withoutSuggestions(result.message) };
  };
}

/**
 * graphql-js appends "Did you mean …?" with the names of fields, arguments,
 * types and enum values a caller got wrong: in production that maps the
 * schema for someone without introspection, so it is cut from every message.
 */
function withoutSuggestions(message: string): string {
  return message.replace(/\s*Did you mean .+\?$/, '');
}

function formatWith(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (original instanceof AppError) {
      return {
        message: original.message,
        path: formatted.path,
        locations: formatted.locations,
        extensions: { code: original.code, ...(original.details ? { details: original.details } : {}) },
      };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && isErrorCode(code)) {
      // Already in the contract's vocabulary (for example passed on from a subgraph).
      return { ...formatted, extensions: pick(formatted.extensions!, ['code', 'details', 'retryAfter']) };
    }
    if ((typeof code === 'string' && CLIENT_ERROR_CODES.has(code)) || isClientHttpError(original)) {
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { code: 'VALIDATION_ERROR' } };
    }
    if (isDatabaseUnavailable(original)) {
      logger.warn({ err: original }, 'database unavailable');
      const unavailable = databaseUnavailable();
      return { message: unavailable.message, path: formatted.path, extensions: { code: unavailable.code, retryAfter: DATABASE_RETRY_AFTER_SECONDS } };
    }
    logger.error({ err: original }, 'unexpected GraphQL error');
    return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_ERROR' } };
  };
}

/** Apollo refuses some requests (bad APQ version or hash) with an HTTP 4xx but no code. */
function isClientHttpError(error: unknown): boolean {
  const status = error instanceof GraphQLError ? (error.extensions?.http as { status?: number } | undefined)?.status : undefined;
  return typeof status === 'number' && status >= 400 && status < 500;
}

function pick(source: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

/** An AppError as a GraphQLError carrying an HTTP status (for errors thrown outside resolvers). */
export function toGraphQLError(error: AppError): GraphQLError {
  return new GraphQLError(error.message, {
    extensions: { code: error.code, http: { status: error.status }, ...(error.details ? { details: error.details } : {}) },
  });
}
