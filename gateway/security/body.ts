import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../../common/errors';

/** CONTRACT §4: bodies over 1 MiB are refused with 413; body parsers take it as their `limit`. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];
const FORM_TYPES = ['application/x-www-form-urlencoded'];

/**
 * Runs before a mount's parsers: a declared length over the limit is refused
 * before a byte is read (chunked bodies are cut off by the parsers' own
 * limit), and a body must be JSON. `forms` admits
 * application/x-www-form-urlencoded too: on every path of the mount (`true`,
 * FHIR's POST _search) or on the listed full paths (provider webhooks).
 * Mounted per API so refusals reach that API's own error handler (FHIR
 * answers OperationOutcome).
 */
export function bodyGuard(options: { forms: boolean | string[] }) {
  const formPaths = new Set(Array.isArray(options.forms) ? options.forms : []);
  return (req: Request, _res: Response, next: NextFunction) => {
    const length = req.headers['content-length'];
    if (length !== undefined && Number(length) > BODY_LIMIT_BYTES) {
      return next(new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB'));
    }
    // An empty POST (`Content-Length: 0`, e.g. a remind without options) needs no type.
    const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
    if (!hasBody) return next();
    const forms = options.forms === true || formPaths.has(req.baseUrl + req.path);
    if (!req.is(forms ? [...JSON_TYPES, ...FORM_TYPES] : JSON_TYPES)) {
      return next(
        new AppError(
          'UNSUPPORTED_MEDIA_TYPE',
          `Request bodies must be ${forms ? 'JSON or a form' : 'JSON'} (Content-Type: application/json), got '${req.headers['content-type'] ?? 'none'}'`,
        ),
      );
    }
    next();
  };
}
