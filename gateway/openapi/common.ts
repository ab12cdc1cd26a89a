import { extendZodWithOpenApi, type OpenAPIRegistry, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../../common/errors';
import { ID } from '../rest/params';

// registry.register needs .openapi() on the schemas made here (zod copies methods onto each schema as it is made).
extendZodWithOpenApi(z);

/** Shared parts of the document: the error body (docs/api.md §4), auth, tenant, rate-limit headers (§7). */

export const dateTime = z.iso.datetime({ offset: true }).meta({ example: '2026-11-23T09:30:00.000Z' });
export const pathId = (name: string, example: string) =>
  z
    .string()
    .regex(ID)
    .meta({ param: { name, in: 'path' }, example });
export const pagination = z.strictObject({ limit: z.int(), offset: z.int(), total: z.int() }).meta({ id: 'Pagination' });
export const pagingQuery = {
  limit: z.int().min(1).max(100).optional().meta({ description: 'Page size (default 20).', example: 20 }),
  offset: z.int().min(0).optional().meta({ description: 'Items to skip (default 0).', example: 0 }),
};

const errorCodes = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];
const errorBody = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(errorCodes),
      message: z.string(),
      details: z.array(z.looseObject({ path: z.string().optional(), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error', description: 'Every non-2xx answer of a REST path (docs/api.md §4).' });

const RATE_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per minute in this category.', schema: { type: 'integer' as const } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' as const } },
  'X-RateLimit-Reset': { description: 'Whole seconds until the window resets.', schema: { type: 'integer' as const } },
};
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
/** The rate-limit headers every answer of a budgeted path carries (docs/api.md §7). */
export const rateHeaders: Record<string, { $ref: string }> = Object.fromEntries(Object.keys(RATE_HEADERS).map((name) => [name, headerRef(name)]));

const ERROR_EXAMPLES: Partial<Record<ErrorCode, string>> = {
  VALIDATION_ERROR: 'The request body is invalid',
  TENANT_REQUIRED: 'Name the tenant with the X-Tenant-Id header',
  UNAUTHENTICATED: 'A valid bearer token is required',
  FORBIDDEN: 'You are not allowed to do this',
  NOT_FOUND: "Patient 'p-9999' was not found",
  CONFLICT: 'The appointment is cancelled',
  PAYLOAD_TOO_LARGE: 'The request body is larger than 1 MiB',
  UNSUPPORTED_MEDIA_TYPE: 'Send the body as application/json',
  PATIENT_OPTED_OUT: 'The patient does not accept sms',
  RATE_LIMIT_EXCEEDED: 'Rate limit exceeded for MESSAGES_SEND: retry after 37 seconds',
  INTERNAL_ERROR: 'Internal server error',
  UPSTREAM_ERROR: 'The XDS repository refused the document: XDSUnknownPatientId',
  SERVICE_UNAVAILABLE: 'The database is unavailable',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: malformed body, unknown or invalid fields or query parameters, or no tenant.',
  401: 'No valid bearer token.',
  403: 'The token may not do this, or names a tenant this deployment does not serve.',
  404: 'No such record in the tenant (records of other tenants answer 404 too), or no such route.',
  409: 'Conflict with the current state.',
  412: 'If-Match names a version that is no longer the latest.',
  413: 'The body is over 1 MiB.',
  415: 'The body is not in a media type this path takes.',
  422: 'Understood, but refused by a business rule.',
  429: 'Over the rate limit: retry after `Retry-After` seconds.',
  500: 'Unexpected failure; never a stack trace, SQL or secret.',
  502: "A system CareGraph called on the request's behalf (an external XDS repository) refused it or could not be reached; `details` carry its error codes.",
  503: 'The database is unreachable, or the request deadline passed.',
};

/** Components every area refers to: the error responses, headers and the two ways to authenticate. */
export function registerCommon(registry: OpenAPIRegistry): void {
  registry.register('Error', errorBody);
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An access token with `sub`, `tenants`, `roles` and `exp` (docs/api.md §3). Development: `npm run --silent token -- --tenant demo --role admin`.',
  });
  registry.registerComponent('securitySchemes', 'twilioSignature', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Twilio-Signature',
    description: "Twilio's request signature (SMS_PROVIDER=twilio): HMAC-SHA1 of the public URL and the form fields, keyed with TWILIO_AUTH_TOKEN.",
  });
  registry.registerComponent('parameters', 'TenantId', {
    name: 'X-Tenant-Id',
    in: 'header',
    required: false,
    description: "The tenant of the call; one of the token's tenants. Optional when the token names one tenant (docs/api.md §3).",
    schema: { type: 'string', example: 'demo' },
  });
  for (const [name, header] of Object.entries(RATE_HEADERS)) registry.registerComponent('headers', name, header);
  registry.registerComponent('headers', 'Retry-After', { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'integer' } });
  registry.registerComponent('headers', 'X-Request-Outcome', {
    description: 'On a deadline 503: `not-started` (safe to retry) or `unknown` (a send names its Idempotency-Key to retry with).',
    schema: { type: 'string', enum: ['not-started', 'unknown'] },
  });
  for (const status of Object.keys(STATUS_TEXT).map(Number)) {
    const codes = errorCodes.filter((code) => ERROR_STATUS[code] === status);
    const headers =
      status === 429
        ? { ...rateHeaders, 'Retry-After': headerRef('Retry-After') }
        : status === 503
          ? { 'Retry-After': headerRef('Retry-After'), 'X-Request-Outcome': headerRef('X-Request-Outcome') }
          : status === 401
            ? undefined
            : rateHeaders;
    registry.registerComponent('responses', `Error${status}`, {
      description: `${STATUS_TEXT[status]} Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
      headers,
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/Error' },
          examples: Object.fromEntries(
            codes.filter((c) => ERROR_EXAMPLES[c]).map((code) => [code, { value: { error: { code, message: ERROR_EXAMPLES[code] } } }]),
          ),
        },
      },
    });
  }
}

/** The error answers of an authenticated REST path: the common ones plus those it names. */
export function errors(...statuses: number[]): Record<string, { $ref: string }> {
  const all = [...new Set([400, 401, 403, 429, 500, 503, ...statuses])].sort();
  return Object.fromEntries(all.map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }]));
}

/** A JSON answer with the rate-limit headers. */
export function json(description: string, schema: z.ZodType, example?: unknown, headers: Record<string, unknown> = {}): ResponseConfig {
  return {
    description,
    headers: { ...rateHeaders, ...headers } as ResponseConfig['headers'],
    content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
  };
}

export const jsonBody = (schema: z.ZodType, example: unknown, description?: string) => ({
  required: true,
  description,
  content: { 'application/json': { schema, example } },
});

const tenantParam = { $ref: '#/components/parameters/TenantId' };

/**
 * An operation behind the bearer token, with the common error answers and the
 * optional tenant header (`tenantRequired`: the route declares its own, required).
 */
export function authenticated(route: RouteConfig & { extraErrors?: number[]; tenantRequired?: boolean }): RouteConfig {
  const { extraErrors = [], tenantRequired, ...rest } = route;
  return { ...rest, ...(tenantRequired ? {} : { parameters: [tenantParam] }), responses: { ...rest.responses, ...errors(...extraErrors) } };
}
