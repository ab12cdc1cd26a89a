import type { NextFunction, Request, Response } from 'express';

/** API responses are data, never documents: nothing may be framed, sniffed, scripted or referred. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * Security headers on every gateway response (the helmet set an API needs,
 * without the dependency). Static pages served beside the API (dashboard)
 * set their own Content-Security-Policy, which replaces this one.
 */
export function securityHeaders(options: { tls: boolean; production: boolean }) {
  return (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    res.setHeader('X-DNS-Prefetch-Control', 'off');
    res.setHeader('X-Permitted-Cross-Domain-Policies', 'none');
    // Health data must not linger in shared or browser caches.
    res.setHeader('Cache-Control', 'no-store');
    // GET /graphql in a browser loads scripts (the explorer, which sets its own policy, or Apollo's landing page outside production).
    if (options.production || !(req.method === 'GET' && req.path === '/graphql')) res.setHeader('Content-Security-Policy', API_CSP);
    if (options.tls) res.setHeader('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    next();
  };
}
