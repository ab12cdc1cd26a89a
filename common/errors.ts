/**
 * The one error vocabulary of CareGraph (docs/api.md §4). Services throw AppError;
 * subgraphs expose `code` as GraphQL `extensions.code`; the gateway's REST
 * adapters turn the same code back into the HTTP status and the contract body.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  TENANT_REQUIRED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  NOT_ACCEPTABLE: 406,
  CONFLICT: 409,
  GONE: 410,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PATIENT_OPTED_OUT: 422,
  TEMPLATE_VARIABLES_INVALID: 422,
  COMPOSITION_INVALID: 422,
  UNKNOWN_TEMPLATE: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path?: string;
  message: string;
  [key: string]: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details && details.length > 0 ? details : undefined;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return errorBody(this.code, this.message, this.details);
  }
}

export interface ErrorBody {
  error: { code: string; message: string; details?: ErrorDetail[] };
}

export function errorBody(code: string, message: string, details?: ErrorDetail[]): ErrorBody {
  return { error: details && details.length > 0 ? { code, message, details } : { code, message } };
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_STATUS, value);
}

export const notFound = (what: string, id: string) => new AppError('NOT_FOUND', `${what} '${id}' was not found`);
export const validationError = (message: string, details?: ErrorDetail[]) => new AppError('VALIDATION_ERROR', message, details);

/** Turns zod issues into contract `details` entries; each unknown field gets its own entry naming it. */
export function zodDetails(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string; code?: string; keys?: ReadonlyArray<string> }>,
): ErrorDetail[] {
  return issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === 'unrecognized_keys' && issue.keys) return issue.keys.map((key) => ({ path: [...at, key].join('.'), message: 'unknown field' }));
    return [{ path: at.join('.') || '(body)', message: issue.message }];
  });
}
