import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { composeSupergraph, SUPERGRAPH_PATH } from '../gateway/supergraph';

/** `npm run schema:compose`: writes the composed supergraph SDL the gateway serves. */
composeSupergraph()
  .then((sdl) => {
    writeFileSync(SUPERGRAPH_PATH, sdl);
    console.log(`wrote ${relative(process.cwd(), SUPERGRAPH_PATH)} (${sdl.length} bytes)`);
  })
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
