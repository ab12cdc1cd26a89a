import type { NextFunction, Request, Response } from 'express';
import { AppError, errorBody } from '../common/errors';
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailable, isDatabaseUnavailable } from '../common/db/unavailable';
import type { Logger } from '../common/logger';
import { OUTCOME_HEADER, outcomeOf } from '../common/deadline';

/** body-parser's error types, answered in the contract's vocabulary. */
function fromBodyParser(err: { type?: string; status?: number }): AppError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB');
    case 'entity.parse.failed':
      return new AppError('VALIDATION_ERROR', 'The request body is not valid JSON');
    case 'entity.verify.failed':
      return new AppError('VALIDATION_ERROR', 'The request body is not valid UTF-8');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported body encoding or charset (use UTF-8 JSON)');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new AppError('VALIDATION_ERROR', 'The request body could not be read');
    default:
      return undefined;
  }
}

export function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (err && typeof err === 'object' && 'type' in err) return fromBodyParser(err as { type?: string });
  if (err instanceof URIError) return new AppError('VALIDATION_ERROR', 'The request path is not valid');
  if (isDatabaseUnavailable(err)) return databaseUnavailable();
  return undefined;
}

/** A 503 tells the client when to try again (unless a more specific Retry-After is already set). */
export function setRetryAfter(res: Response, error: AppError, seconds: number = DATABASE_RETRY_AFTER_SECONDS): void {
  if (error.code === 'SERVICE_UNAVAILABLE' && !res.headersSent && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(seconds));
}

/** The last express handler: every failure becomes `{"error":{code,message,details?}}` (docs/api.md §4). */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // Answered already (the request deadline's 503): the late handler's failure to write is expected.
    if (res.headersSent && (err as { code?: string })?.code === 'ERR_HTTP_HEADERS_SENT') {
      res.end();
      return;
    }
    let appError = toAppError(err);
    if (!appError) {
      logger.error({ err, requestId: req.requestId, path: req.path }, 'unhandled error');
      appError = new AppError('INTERNAL_ERROR', 'Internal server error');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    setRetryAfter(res, appError);
    const body: Record<string, unknown> = { ...appError.toBody() };
    // GraphQL clients look for `errors`; give them both shapes on /graphql.
    if (req.path === '/graphql') {
      body.errors = [{ message: appError.message, extensions: { code: appError.code } }];
    }
    const outcome = outcomeOf(appError.details);
    if (outcome) res.setHeader(OUTCOME_HEADER, outcome);
    res.status(appError.status).json(body);
  };
}

export function notFoundHandler(req: Request, res: Response) {
  res.status(404).json(errorBody('NOT_FOUND', `No route for ${req.method} ${req.path}`));
}
