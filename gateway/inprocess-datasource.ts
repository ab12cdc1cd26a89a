import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import type { RunningSubgraph } from '../common/graphql/subgraph-server';
import type { GatewayContext } from './context';

/**
 * The all-in-one process's path from gateway to subgraph: the query plan's
 * fetch runs on the subgraph's schema in this process, with the subgraph's
 * context built from the identity the gateway already verified. No HTTP, no
 * JSON round trip, no identity token; errors are formatted by the subgraph's
 * formatter exactly as over HTTP, so codes reach clients unchanged.
 */
export class InProcessDataSource implements GraphQLDataSource<GatewayContext> {
  constructor(private readonly subgraph: Pick<RunningSubgraph, 'execute'>) {}

  async process({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<GatewayGraphQLResponse> {
    if (!context?.identity) throw new Error('in-process subgraph call without a caller identity');
    const result = await this.subgraph.execute(
      { query: request.query!, variables: request.variables, operationName: request.operationName },
      // The gateway's own deadline object: a write a subgraph begins is seen by the gateway's timer.
      { identity: context.identity, requestId: context.requestId, deadline: context.deadline },
    );
    return result;
  }
}
