import type { GraphQLDataSource } from '@apollo/gateway';
import { IdentityTokenSigner } from '../common/auth/identity-cache';
import type { RunningSubgraph } from '../common/graphql/subgraph-server';
import type { GatewayContext } from './context';
import { InProcessDataSource } from './inprocess-datasource';
import { AuthenticatedDataSource, createSubgraphFetcher } from './subgraph-datasource';

export interface SubgraphServiceOptions {
  /** Where each subgraph answers over HTTP, by name. */
  subgraphUrls: Record<string, string>;
  /** Subgraphs running in this process (all-in-one): reached without HTTP. */
  localSubgraphs?: Record<string, Pick<RunningSubgraph, 'execute'>>;
  internalKey: Uint8Array;
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
      if (local) return new InProcessDataSource(local);
      const url = options.subgraphUrls[name];
      if (!url) throw new Error(`No URL configured for subgraph '${name}'`);
      http ??= createSubgraphFetcher();
      return new AuthenticatedDataSource(url, signer, http.fetcher);
    },
    close: async () => {
      await http?.close();
    },
  };
}
