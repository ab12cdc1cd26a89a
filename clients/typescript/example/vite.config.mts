import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// `npm run example` (dev server) or `vite build --config example/vite.config.mts` (static files in example/dist).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
