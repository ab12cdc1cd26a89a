import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../../common/errors';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../common/json-depth';
import { documentNestsDeeperThan } from './graphql-limits';

/** docs/api.md §4: bodies over 1 MiB are refused with 413; body parsers take it as their `limit`. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPES = ['application/json', 'application/*+json'];
const FORM_TYPES = ['application/x-www-form-urlencoded'];
const XML_TYPES = ['application/xml', 'text/xml'];
const TEXT_TYPES = ['text/plain'];

/**
 * Runs before a mount's parsers: a declared length over the limit is refused
 * before a byte is read (chunked bodies are cut off by the parsers' own
 * limit), and a body must be JSON. `forms` admits
 * application/x-www-form-urlencoded too: on every path of the mount (`true`,
 * FHIR's POST _search) or on the listed full paths (provider webhooks).
 * Mounted per API so refusals reach that API's own error handler (FHIR
 * answers OperationOutcome). `xml` admits XML on the listed (or matching) paths
 * below the mount (openEHR's operational template upload and compositions), `text` plain text on the
 * paths below the mount that match (openEHR's stored query definitions).
 */
export function bodyGuard(options: { forms: boolean | string[]; xml?: Array<string | RegExp>; text?: RegExp[] }) {
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
    const path = req.path.replace(/\/$/, '');
    const xml = (options.xml ?? []).some((p) => (typeof p === 'string' ? p === path : p.test(path)));
    const text = (options.text ?? []).some((pattern) => pattern.test(path));
    if (!req.is([...JSON_TYPES, ...(forms ? FORM_TYPES : []), ...(xml ? XML_TYPES : []), ...(text ? TEXT_TYPES : [])])) {
      const kinds = forms ? 'JSON or a form' : xml ? 'JSON or XML' : text ? 'JSON or plain text' : 'JSON';
      return next(
        new AppError(
          'UNSUPPORTED_MEDIA_TYPE',
          `Request bodies must be ${kinds} (Content-Type: application/json${xml ? ' or application/xml' : text ? ' or text/plain' : ''}), got '${req.headers['content-type'] ?? 'none'}'`,
        ),
      );
    }
    next();
  };
}

const tooDeep = (what: string) => new AppError('VALIDATION_ERROR', `${what} nests deeper than ${MAX_JSON_DEPTH} levels`);

/**
 * Runs after a JSON parser: a body nested deeper than MAX_JSON_DEPTH is
 * refused before anything walks it (validation, serialisation and hashing
 * recurse per level, and 1 MiB of `[` is 500,000 levels).
 */
export function refuseDeepJson(req: Request, _res: Response, next: NextFunction) {
  if (req.body !== undefined && nestsDeeperThan(req.body, MAX_JSON_DEPTH)) return next(tooDeep('The request body'));
  next();
}

/**
 * /graphql, after the JSON parser: the document's own nesting (value literals,
 * selection sets), and on GET the JSON of the `variables` and `extensions`
 * parameters, which Apollo parses from the query string.
 */
export function refuseDeepGraphQL(req: Request, _res: Response, next: NextFunction) {
  const params = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown> | undefined;
  if (typeof params?.query === 'string' && documentNestsDeeperThan(params.query, MAX_JSON_DEPTH)) return next(tooDeep('The GraphQL document'));
  if (req.method === 'GET') {
    for (const name of ['variables', 'extensions']) {
      const text = req.query[name];
      if (typeof text !== 'string') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        continue; // Apollo answers malformed JSON itself.
      }
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return next(tooDeep(`The ${name} parameter`));
    }
  }
  next();
}
