import type { GraphQLDataSource } from '@apollo/gateway';
import { IdentityTokenSigner } from '../common/auth/identity-cache';
import type { RunningSubgraph } from '../common/graphql/subgraph-server';
import type { GatewayContext } from './context';
import { InProcessDataSource } from './inprocess-datasource';
import { AuthenticatedDataSource, createSubgraphFetcher } from './subgraph-datasource';
import type { GatewayMetrics } from './metrics';
import { inSpan, SpanKind } from '../common/telemetry/tracing';

export interface SubgraphServiceOptions {
  /** Where each subgraph answers over HTTP, by name. */
  subgraphUrls: Record<string, string>;
  /** Subgraphs running in this process (all-in-one): reached without HTTP. */
  localSubgraphs?: Record<string, Pick<RunningSubgraph, 'execute'>>;
  internalKey: Uint8Array;
  metrics: GatewayMetrics;
}

/** The gateway's `buildService`: in-process when the subgraph runs here, else HTTP with keep-alive. */
export function createSubgraphServices(options: SubgraphServiceOptions): {
  buildService: (definition: { name: string }) => GraphQLDataSource<GatewayContext>;
  close(): Promise<void>;
} {
  const signer = new IdentityTokenSigner(options.internalKey);
  let http: ReturnType<typeof createSubgraphFetcher> | undefined;
  return {
    buildService: ({ name }) => {
      const local = options.localSubgraphs?.[name];
      if (local) return measured(name, new InProcessDataSource(local), options.metrics);
      const url = options.subgraphUrls[name];
      if (!url) throw new Error(`No URL configured for subgraph '${name}'`);
      http ??= createSubgraphFetcher();
      return measured(name, new AuthenticatedDataSource(url, signer, http.fetcher), options.metrics);
    },
    close: async () => {
      await http?.close();
    },
  };
}

/** Times each fetch of the query plan, records its outcome (errors in the answer, or no answer) and traces it (a CLIENT span whose context the HTTP data source sends on). */
function measured(name: string, source: GraphQLDataSource<GatewayContext>, metrics: GatewayMetrics): GraphQLDataSource<GatewayContext> {
  return {
    process: (options) =>
      inSpan(`fetch ${name}`, { kind: SpanKind.CLIENT, attributes: { 'caregraph.subgraph': name } }, async () => {
        const started = performance.now();
        const seconds = () => (performance.now() - started) / 1000;
        try {
          const response = await source.process(options);
          metrics.subgraphFetch(name, response.errors?.length ? 'graphql_error' : 'ok', seconds());
          return response;
        } catch (err) {
          metrics.subgraphFetch(name, 'error', seconds());
          throw err;
        }
      }),
  };
}
