import { join } from 'node:path';
import { printSchema, type GraphQLSchema } from 'graphql';
import { Supergraph } from '@apollo/federation-internals';
import { projectRoot } from '../common/paths';
import { buildSubscriptionSchema } from './subscriptions/schema';

/**
 * The client-facing schema: what POST /graphql serves (the supergraph's API
 * schema) plus the Subscription type the gateway serves over graphql-ws.
 * `npm run schema:compose` writes it beside the supergraph; client code
 * generation reads this file, never the supergraph (which has federation's
 * join directives and no subscriptions).
 */
export const API_SCHEMA_PATH = join(projectRoot(), 'schema', 'api.graphql');

/** The API schema of a supergraph, as @apollo/gateway derives it (federation's own code, not our reading of it). */
function apiSchemaOf(supergraphSdl: string): GraphQLSchema {
  return Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema();
}

/** The SDL of schema/api.graphql for a supergraph (test/published-schema.test.ts keeps the file in step). */
export function publishedSchemaSdl(supergraphSdl: string): string {
  return `${printSchema(buildSubscriptionSchema(apiSchemaOf(supergraphSdl)))}\n`;
}
