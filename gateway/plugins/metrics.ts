import type { ApolloServerPlugin } from '@apollo/server';
import type { GatewayContext } from '../context';
import type { GatewayMetrics } from '../metrics';

/**
 * Counts every GraphQL operation the gateway answers (over HTTP and from the
 * REST adapters) by operation name, type and the first error's code. Names of
 * documents that never parsed count as 'anonymous'.
 */
export function metricsPlugin(metrics: GatewayMetrics): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ operation, operationName, response, errors }) {
          const single = response.body.kind === 'single' ? response.body.singleResult : undefined;
          const first = single?.errors?.[0] ?? errors?.[0];
          const code = first ? String(first.extensions?.code ?? 'INTERNAL_SERVER_ERROR') : 'none';
          metrics.graphqlOperation(operation ? operationName : null, operation?.operation ?? 'unknown', code);
        },
      };
    },
  };
}
