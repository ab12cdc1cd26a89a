import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../common/paths';

/**
 * The composed schema the gateway serves, checked in and written by
 * `npm run schema:compose` (scripts/compose-supergraph.ts) from the subgraphs'
 * SDL. The gateway reads this file only: it never loads a subgraph's code.
 */
export const SUPERGRAPH_PATH = join(projectRoot(), 'schema', 'supergraph.graphql');

/** The checked-in supergraph the gateway serves (test/supergraph.test.ts keeps it in step with the code). */
export function readSupergraph(): string {
  return readFileSync(SUPERGRAPH_PATH, 'utf8');
}
