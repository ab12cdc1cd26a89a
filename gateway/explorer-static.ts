import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type Request, type Response, type NextFunction } from 'express';
import { projectRoot } from '../common/paths';
import { contentSecurityPolicy } from './admin-static';
import { notFoundHandler } from './http-errors';

/** Where `vite build` writes the explorer (gateway/explorer/vite.config.mts). */
const EXPLORER_DIST = join(projectRoot(), 'dist', 'explorer');
/** The explorer's scripts and styles, under the path its build names (vite `base`). */
const EXPLORER_ASSETS_PATH = '/graphql/explorer';

function pageHeaders(req: Request, res: Response): void {
  res.setHeader('Content-Security-Policy', contentSecurityPolicy(req, { dataFonts: true }));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}

/**
 * The GraphQL explorer (GraphiQL, built from npm packages into dist/explorer):
 * GET /graphql from a browser (Accept prefers text/html) gets the page, with no
 * token needed for it; every operation it runs carries the headers the user
 * pastes in its headers editor. Other GET /graphql requests (GraphQL over GET)
 * pass on. Before `npm run build` has made the files, nothing changes.
 */
export function explorerRoutes(dir = EXPLORER_DIST): Router {
  const router = Router();
  const index = join(dir, 'index.html');
  router.get('/graphql', (req: Request, res: Response, next: NextFunction) => {
    if (req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) !== 'text/html' || !existsSync(index)) return next();
    pageHeaders(req, res);
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  router.use(EXPLORER_ASSETS_PATH, (req, res, next) => {
    pageHeaders(req, res);
    next();
  });
  router.use(
    EXPLORER_ASSETS_PATH,
    express.static(dir, { index: false, setHeaders: (res) => res.setHeader('Cache-Control', 'public, max-age=31536000, immutable') }),
    notFoundHandler,
  );
  return router;
}
