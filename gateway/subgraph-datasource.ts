import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { IDENTITY_HEADER, signIdentity } from '../common/auth/tokens';
import type { GatewayContext } from './context';

/**
 * Forwards each subgraph fetch with the caller's identity, signed with the
 * internal key, and the request id for log correlation.
 */
export class AuthenticatedDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  constructor(url: string, private readonly internalKey: Uint8Array) {
    super({ url });
  }

  override async willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<void> {
    if (!context?.identity || !request.http) return;
    context.identityToken ??= signIdentity(this.internalKey, context.identity);
    request.http.headers.set(IDENTITY_HEADER, await context.identityToken);
    request.http.headers.set('x-request-id', context.requestId);
  }
}
