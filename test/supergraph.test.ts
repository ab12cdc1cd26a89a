import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { SUPERGRAPH_PATH } from '../gateway/supergraph';
import { API_SCHEMA_PATH, publishedSchemaSdl } from '../gateway/published-schema';
import { composeSupergraph } from '../scripts/supergraph-composition';

describe('checked-in schemas (run `npm run schema:compose` after a schema change)', () => {
  it('schema/supergraph.graphql matches what the subgraphs compose to', async () => {
    expect(readFileSync(SUPERGRAPH_PATH, 'utf8')).toBe(await composeSupergraph());
  });

  it('schema/api.graphql is the supergraph API schema plus Subscription', () => {
    const api = readFileSync(API_SCHEMA_PATH, 'utf8');
    expect(api).toBe(publishedSchemaSdl(readFileSync(SUPERGRAPH_PATH, 'utf8')));
    expect(api).toMatch(/^type Subscription \{$/m);
    expect(api).not.toContain('@join__');
  });
});
