import { GraphQLSchema, specifiedDirectives } from 'graphql';
import gql from 'graphql-tag';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { buildSchema, createResolversMap, type NonEmptyArray } from 'type-graphql';

const FEDERATION_LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable", "@external", "@requires", "@provides"])';

type ResolverClass = abstract new (...args: any[]) => unknown;
export type ReferenceResolvers = Record<string, { __resolveReference: (reference: any, context: any) => unknown }>;

export interface FederatedSchema {
  schema: GraphQLSchema;
  /** The subgraph SDL with federation directives, as composition sees it. */
  sdl: string;
}

/**
 * type-graphql writes the types and resolvers; @apollo/subgraph turns them into a
 * federation subgraph. Entity types carry `@Directive('@key(fields: "id")')` and
 * their `__resolveReference` comes in `referenceResolvers`.
 */
export async function buildFederatedSchema(options: {
  resolvers: NonEmptyArray<ResolverClass>;
  orphanedTypes?: ResolverClass[];
  referenceResolvers?: ReferenceResolvers;
}): Promise<FederatedSchema> {
  const typeSchema = await buildSchema({
    resolvers: options.resolvers,
    orphanedTypes: options.orphanedTypes,
    skipCheck: true,
    directives: [...specifiedDirectives],
    validate: false,
  });
  const sdl = `${FEDERATION_LINK}\n\n${printSchemaWithDirectives(typeSchema)}`;
  const resolverMap = createResolversMap(typeSchema) as Record<string, any>;
  for (const [typeName, reference] of Object.entries(options.referenceResolvers ?? {})) {
    resolverMap[typeName] = { ...(resolverMap[typeName] ?? {}), ...reference };
  }
  const schema = buildSubgraphSchema([{ typeDefs: gql(sdl), resolvers: resolverMap }]);
  return { schema, sdl };
}
