import { dirname, join } from 'node:path';
import { Router, type Response } from 'express';
import type { PublicBase } from '../public-url';
import { openApiDocument } from './document';

/** Swagger UI's prebuilt files, served from the installed package: no CDN, works offline. */
const SWAGGER_UI = dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'text/javascript',
  'favicon-32x32.png': 'image/png',
};

// Relative URLs, so the page also works below a PUBLIC_URL path prefix.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>CareGraph REST API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an online validator.
const INIT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/**
 * Swagger UI builds its own styles at run time (inline style attributes and
 * <style> elements), hence 'unsafe-inline' for styles only; scripts are this
 * origin's files, and "Try it out" calls this origin.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `/openapi.json`, `/openapi.yaml` and the reference page `/docs` (no token needed).
 * The document's server URL follows the PUBLIC_URL rules (gateway/public-url.ts).
 */
export function openApiRoutes(publicBase: PublicBase): Router {
  const router = Router();
  // Made on first request, not at start: generating it takes a few hundred milliseconds.
  let document: ReturnType<typeof openApiDocument> | undefined;
  const forServer = (url: string) => ({ ...(document ??= openApiDocument()), servers: [{ url }] });
  const docs = (res: Response) => res.setHeader('Content-Security-Policy', DOCS_CSP);

  router.get('/openapi.json', (req, res) => {
    res.json(forServer(publicBase(req)));
  });
  router.get('/openapi.yaml', async (req, res) => {
    // Loaded on first use: the YAML library is a tenth of a second of every start-up otherwise.
    const { stringify } = await import('yaml');
    res.type('application/yaml').send(stringify(forServer(publicBase(req)), { aliasDuplicateObjects: false }));
  });
  router.get('/docs', (req, res) => {
    // '/docs/' would resolve the page's relative URLs below it.
    if (req.originalUrl.split('?')[0].endsWith('/')) return res.redirect(301, '../docs');
    docs(res);
    res.type('html').send(PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('text/javascript').send(INIT);
  });
  router.get('/docs/:asset', (req, res, next) => {
    const type = ASSETS[req.params.asset];
    if (!type) return next();
    docs(res);
    res.type(type).sendFile(join(SWAGGER_UI, req.params.asset));
  });
  return router;
}
