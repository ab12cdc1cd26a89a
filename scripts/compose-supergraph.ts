import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { SUPERGRAPH_PATH } from '../gateway/supergraph';
import { API_SCHEMA_PATH, publishedSchemaSdl } from '../gateway/published-schema';
import { composeSupergraph } from './supergraph-composition';

/**
 * `npm run schema:compose`: writes the composed supergraph SDL the gateway
 * serves and, from it, the client-facing schema (schema/api.graphql: the
 * API schema plus Subscription) that introspection returns and client code
 * generation reads.
 */
composeSupergraph()
  .then((sdl) => {
    const api = publishedSchemaSdl(sdl);
    writeFileSync(SUPERGRAPH_PATH, sdl);
    writeFileSync(API_SCHEMA_PATH, api);
    for (const [path, text] of [
      [SUPERGRAPH_PATH, sdl],
      [API_SCHEMA_PATH, api],
    ])
      console.log(`wrote ${relative(process.cwd(), path)} (${text.length} bytes)`);
  })
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
