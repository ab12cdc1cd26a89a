import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { execute, Kind, OperationTypeNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { GatewayContext } from '../context';

/** An operation that reads only the schema: every root selection is `__schema`, `__type` or `__typename`. */
function introspectsOnly(operation: OperationDefinitionNode): boolean {
  return (
    operation.operation === OperationTypeNode.QUERY && operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && s.name.value.startsWith('__'))
  );
}

/**
 * Introspection on POST /graphql answers from the published schema (the
 * API schema plus the Subscription type served over graphql-ws), so
 * explorers and code generators see subscriptions too. Federation's query
 * planner knows no Subscription, so only schema-only operations take this
 * path; everything else runs through the gateway as before. Installed only
 * where introspection is on (Apollo's own rule refuses it elsewhere first).
 */
export function publishedIntrospectionPlugin(publishedSchema: () => GraphQLSchema): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async responseForOperation({ operation, document, request }) {
          if (!introspectsOnly(operation)) return null;
          const result = await execute({ schema: publishedSchema(), document, operationName: request.operationName, variableValues: request.variables });
          const singleResult = { data: result.data, ...(result.errors && { errors: result.errors.map((error) => error.toJSON()) }) };
          return { http: { headers: new HeaderMap() }, body: { kind: 'single', singleResult } };
        },
      };
    },
  };
}
