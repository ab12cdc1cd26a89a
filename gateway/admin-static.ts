import { join } from 'node:path';
import express, { Router, type Request } from 'express';
import { projectRoot } from '../common/paths';

/** Where `vite build` writes the dashboard (see gateway/admin/vite.config.ts). */
const ADMIN_DIST = join(projectRoot(), 'dist', 'admin');

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/**
 * Scripts, styles and images from the page's own origin only, and
 * connections to the same origin (fetch to /graphql and the graphql-ws
 * socket: 'self' does not cover ws:/wss: in every browser, so the host is
 * named; an unexpected Host header just leaves it out). `dataFonts` admits
 * fonts inlined as data: URLs in the page's own stylesheet (GraphiQL's).
 */
export function contentSecurityPolicy(req: Request, options: { dataFonts?: boolean } = {}): string {
  const host = req.headers.host;
  const sockets = host && HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    ...(options.dataFonts ? ["font-src 'self' data:"] : []),
    `connect-src 'self'${sockets}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The admin dashboard's static files at /admin (docs/api.md §3: no token needed
 * for them; every API call the dashboard makes carries the user's token).
 * Hashed assets are cached for good; index.html is revalidated on each load.
 * Before `npm run build` has made the files, /admin answers the API's 404.
 */
export function adminRoutes(dir = ADMIN_DIST): Router {
  const router = Router();
  router.use((req, res, next) => {
    res.setHeader('Content-Security-Policy', contentSecurityPolicy(req));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    next();
  });
  router.use(
    express.static(dir, {
      index: 'index.html',
      setHeaders: (res, path) => {
        res.setHeader('Cache-Control', path.includes(`${join('admin', 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  return router;
}
