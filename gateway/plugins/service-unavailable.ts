import type { ApolloServerPlugin } from '@apollo/server';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../common/db/unavailable';
import type { GatewayContext } from '../context';

/**
 * A GraphQL answer carrying SERVICE_UNAVAILABLE (a subgraph could not reach
 * its database) gets the Retry-After header a REST client would get, with
 * the error's own `retryAfter` seconds.
 */
export function serviceUnavailablePlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single' || response.http.headers.has('retry-after')) return;
          const unavailable = response.body.singleResult.errors?.find((error) => error.extensions?.code === 'SERVICE_UNAVAILABLE');
          if (!unavailable) return;
          const seconds = unavailable.extensions?.retryAfter;
          response.http.headers.set('retry-after', String(typeof seconds === 'number' ? seconds : DATABASE_RETRY_AFTER_SECONDS));
        },
      };
    },
  };
}
