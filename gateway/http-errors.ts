import type { NextFunction, Request, Response } from 'express';
import { AppError, errorBody } from '../common/errors';
import type { Logger } from '../common/logger';

/** body-parser's error types, answered in the contract's vocabulary. */
function fromBodyParser(err: { type?: string; status?: number }): AppError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB');
    case 'entity.parse.failed':
      return new AppError('VALIDATION_ERROR', 'The request body is not valid JSON');
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
  return undefined;
}

/** The last express handler: every failure becomes `{"error":{code,message,details?}}` (CONTRACT §4). */
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
    const body: Record<string, unknown> = { ...appError.toBody() };
    // GraphQL clients look for `errors`; give them both shapes on /graphql.
    if (req.path === '/graphql') {
      body.errors = [{ message: appError.message, extensions: { code: appError.code } }];
    }
    res.status(appError.status).json(body);
  };
}

export function notFoundHandler(req: Request, res: Response) {
  res.status(404).json(errorBody('NOT_FOUND', `No route for ${req.method} ${req.path}`));
}
