import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The checked-in supergraph with its placeholder subgraph URLs replaced by where the subgraphs answer. */
export function supergraphWithUrls(): string {
  const sdl = readFileSync(join(__dirname, '..', '..', '..', 'schema', 'supergraph.graphql'), 'utf8');
  return sdl
    .replace('http://messaging.subgraph.internal/graphql', required('MESSAGING_URL'))
    .replace('http://ehr.subgraph.internal/graphql', required('EHR_URL'));
}

export function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

/** The subgraphs admit only callers with a signed identity: the one header a peer gateway must pass on. */
export const IDENTITY_HEADER = 'x-caregraph-identity';
