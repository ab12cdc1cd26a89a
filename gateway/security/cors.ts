import type { NextFunction, Request, Response } from 'express';

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Tenant-Id',
  'Idempotency-Key',
  'X-Change-Reason',
  'If-Match',
  'X-Request-Id',
  'Apollo-Require-Preflight',
  'X-Apollo-Operation-Name',
].join(', ');
const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'X-Request-Id',
  'Location',
  'ETag',
  'X-Request-Outcome',
  'Idempotency-Key',
].join(', ');

/**
 * CORS for an explicit allowlist of origins (CORS_ORIGINS; none by default,
 * so browsers on other origins cannot call the API). Calls authenticate with
 * bearer tokens, not cookies, so credentials are never allowed.
 */
export function cors(origins: string[]) {
  const allowed = new Set(origins);
  return (req: Request, res: Response, next: NextFunction) => {
    if (allowed.size === 0) return next();
    res.append('Vary', 'Origin');
    const origin = req.headers.origin;
    if (!origin || !allowed.has(origin)) return next();
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    next();
  };
}
