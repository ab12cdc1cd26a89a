import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// GraphiQL, bundled from npm at build time and served by the gateway at GET /graphql (gateway/explorer-static.ts): no CDN.
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/graphql/explorer/',
  build: {
    outDir: fileURLToPath(new URL('../../dist/explorer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No inline data: URLs (the CSP allows the explorer's own files only).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 4096,
  },
});
