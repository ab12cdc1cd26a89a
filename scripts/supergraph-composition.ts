import { composeServices } from '@apollo/composition';
import gql from 'graphql-tag';
import { buildMessagingSchema, MESSAGING_SUBGRAPH } from '../subgraphs/messaging';
import { buildEhrSchema, EHR_SUBGRAPH } from '../subgraphs/ehr';

/** Placeholder URLs in the checked-in supergraph; the gateway maps subgraph names to real addresses. */
const PLACEHOLDER_URL = (name: string) => `http://${name}.subgraph.internal/graphql`;

/**
 * Composes both subgraphs' SDL, as `npm run schema:compose` writes it to
 * schema/supergraph.graphql. Development time only: it builds the subgraphs'
 * schemas from their resolvers, which the gateway never loads.
 */
export async function composeSupergraph(): Promise<string> {
  const [messaging, ehr] = await Promise.all([buildMessagingSchema(), buildEhrSchema()]);
  const result = composeServices([
    { name: EHR_SUBGRAPH, url: PLACEHOLDER_URL(EHR_SUBGRAPH), typeDefs: gql(ehr.sdl) },
    { name: MESSAGING_SUBGRAPH, url: PLACEHOLDER_URL(MESSAGING_SUBGRAPH), typeDefs: gql(messaging.sdl) },
  ]);
  if (result.errors) {
    throw new Error(`Supergraph composition failed:\n${result.errors.map((e) => `  - ${e.message}`).join('\n')}`);
  }
  return result.supergraphSdl;
}
