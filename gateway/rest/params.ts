import type { Request } from 'express';
import { validationError, type ErrorDetail } from '../../common/errors';

/** Path ids: printable, bounded, no traversal; anything else is a 400, not a lookup. */
export const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export function pathId(req: Request, name: string): string {
  const value = req.params[name];
  if (typeof value !== 'string' || !ID.test(value)) {
    throw validationError(`'${name}' is not a valid identifier`, [{ path: name, message: 'expected 1-128 letters, digits, _ . : -' }]);
  }
  return value;
}

/** Reads one optional query parameter, refusing repeats (`?limit=1&limit=2`). */
export function queryParam(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw validationError(`Query parameter '${name}' must be given once`, [{ path: name, message: 'repeated or nested' }]);
  return value;
}

/** Whole non-negative integers in query strings; '', '1.5', 'abc', '-1' are rejected with a detail. */
export function queryInt(req: Request, name: string, details: ErrorDetail[]): number | undefined {
  const raw = queryParam(req, name);
  if (raw === undefined) return undefined;
  if (!/^-?\d{1,9}$/.test(raw)) {
    details.push({ path: name, message: `${name} must be an integer` });
    return undefined;
  }
  return Number(raw);
}

/** Refuses query parameters a path does not know, so typos are not silently ignored. */
export function onlyQueryParams(req: Request, allowed: string[]): void {
  const unknown = Object.keys(req.query).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw validationError(
      `Unknown query parameter(s): ${unknown.join(', ')}`,
      unknown.map((key) => ({ path: key, message: 'unknown parameter' })),
    );
  }
}

/** `limit` and `offset` of a list path as whole numbers (their ranges are the service's rule); 400 naming both when malformed. */
export function queryPaging(req: Request): { limit?: number; offset?: number } {
  const details: ErrorDetail[] = [];
  const limit = queryInt(req, 'limit', details);
  const offset = queryInt(req, 'offset', details);
  if (details.length > 0) throw validationError('Invalid query parameters', details);
  return { limit, offset };
}

/** The version an If-Match names: `W/"3"`, `"3"` and `3` all give `3`; undefined when absent. */
export function ifMatch(req: Request): string | undefined {
  const value = req.headers['if-match'];
  return typeof value === 'string' && value.trim() ? value.trim().replace(/^W\//, '').replace(/^"|"$/g, '') : undefined;
}

/** X-Change-Reason → the audit record's reason (docs/api.md §8). */
export function changeReason(req: Request): string | undefined {
  const value = req.headers['x-change-reason'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 1000) {
    throw validationError('X-Change-Reason must be 1..1000 characters', [{ path: 'X-Change-Reason', message: 'invalid header' }]);
  }
  return value.trim();
}

/** Whether the request carries a body at all (a length above zero or a chunked one). */
export function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}
