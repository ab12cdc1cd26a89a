import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { composeSupergraph, SUPERGRAPH_PATH } from '../gateway/supergraph';

describe('schema/supergraph.graphql', () => {
  it('matches what the subgraphs compose to (run `npm run schema:compose` after a schema change)', async () => {
    expect(readFileSync(SUPERGRAPH_PATH, 'utf8')).toBe(await composeSupergraph());
  });
});
