import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, OperationTypeNode } from 'graphql';
import type { GatewayContext } from '../context';

const refuse = (message: string) => new GraphQLError(message, { extensions: { code: 'VALIDATION_ERROR', http: { status: 400 } } });

/**
 * Requests the gateway's executor would otherwise fail with an internal
 * error are refused as client mistakes: an operation name that names no
 * operation (or none given for a document with several), and subscriptions,
 * which are served over WebSocket, not over HTTP.
 */
export function operationGuardPlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, request }) {
          if (!operation) {
            throw refuse(
              request.operationName ? `Unknown operation named "${request.operationName}"` : 'The document has several operations: name one in operationName',
            );
          }
          if (operation.operation === OperationTypeNode.SUBSCRIPTION)
            throw refuse('Subscriptions are served over WebSocket (graphql-transport-ws) at /graphql');
        },
      };
    },
  };
}
