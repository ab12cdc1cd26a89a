import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The dashboard is served by the gateway at /admin from dist/admin (gateway/admin-static.ts).
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/admin/',
  publicDir: 'public',
  build: {
    outDir: fileURLToPath(new URL('../../dist/admin', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No inline data: URLs (the CSP allows the dashboard's own files only).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
