import http from 'node:http';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import { AppError } from '../errors';
import type { Logger } from '../logger';
import type { Identity } from '../auth/principal';
import { IDENTITY_HEADER } from '../auth/tokens';
import { DEADLINE_HEADER, Deadline } from '../deadline';
import { IdentityTokenVerifier } from '../auth/identity-cache';
import { createErrorFormatter, toGraphQLError } from './errors';
import { LocalExecutor } from './local-executor';
import { SharedReads, type ReadAccount } from './shared-reads';
import { listen, type RunningServer } from '../http/listen';
import { metricsHandler } from '../metrics/http';
import { Counter, defineOnce, type MetricsRegistry } from '../metrics/registry';
import { traceRequests } from '../telemetry/http';

export interface BaseContext {
  identity: Identity;
  requestId: string;
  logger: Logger;
  /** The client request's deadline, when the call comes from one (services check it before they write). */
  deadline?: Deadline;
}

export interface SubgraphServerOptions<Ctx extends BaseContext> {
  name: string;
  schema: GraphQLSchema;
  internalKey: Uint8Array;
  logger: Logger;
  host: string;
  port: number;
  /** On shutdown, how long requests in flight may take before their connections are closed (default: no bound). */
  shutdownGraceMs?: number;
  /** Builds the per-request context (services, DataLoaders) for a verified caller. */
  createContext: (base: BaseContext) => Ctx;
  /** Production: error messages name no schema elements ("Did you mean …"). */
  production?: boolean;
  /** The process's Prometheus registry, served at GET /metrics beside /healthz. */
  metrics: MetricsRegistry;
  /** What a request's execution read and changed; given, identical in-process reads in flight share one execution (SharedReads). */
  readAccount?: (context: Ctx) => ReadAccount;
}

/** One GraphQL request to a subgraph, as the gateway's query plan sends it. */
export interface SubgraphRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/** The subgraph's response, errors already formatted exactly as its HTTP endpoint formats them. */
export interface SubgraphResponse {
  data?: Record<string, unknown> | null;
  errors?: ReadonlyArray<GraphQLFormattedError>;
}

export interface RunningSubgraph extends RunningServer {
  /**
   * Runs a request in this process, for a caller this process already
   * vouches for (a client the gateway authenticated, or messaging acting as
   * its reserved identity): the same schema, context factory and error formatting as
   * the HTTP endpoint, without HTTP, JSON, identity signing or Apollo's
   * request pipeline (see LocalExecutor).
   */
  execute(request: SubgraphRequest, caller: { identity: Identity; requestId: string; deadline?: Deadline }): Promise<SubgraphResponse>;
}

/**
 * Serves one subgraph over HTTP at /graphql. Only callers holding an identity
 * signed by the gateway get in: the subgraph never trusts client headers.
 */
export async function startSubgraphServer<Ctx extends BaseContext>(options: SubgraphServerOptions<Ctx>): Promise<RunningSubgraph> {
  const identities = new IdentityTokenVerifier(options.internalKey);
  const formatError = createErrorFormatter(options.logger, { hideSuggestions: options.production });
  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);
  const apollo = new ApolloServer<Ctx>({
    schema: options.schema,
    formatError,
    // No cache hints in these schemas, and the cache-control plugin would wrap every field resolver to compute them.
    plugins: [ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginCacheControlDisabled()],
    csrfPrevention: true,
    // The process's one shutdown sequence (bin/caregraph.ts) stops this server; Apollo's own
    // SIGINT/SIGTERM handlers raced it and hung it (see there).
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    hideSchemaDetailsFromClientErrors: options.production ?? false,
  });
  await apollo.start();
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', subgraph: options.name });
  });
  app.get('/metrics', metricsHandler(options.metrics));
  app.use(
    '/graphql',
    traceRequests(`subgraph ${options.name}`),
    express.json({ limit: '1mb' }),
    expressMiddleware(apollo, {
      context: async ({ req }) => {
        const header = req.headers[IDENTITY_HEADER];
        if (typeof header !== 'string') {
          throw toGraphQLError(new AppError('UNAUTHENTICATED', 'Subgraphs are reached through the gateway'));
        }
        let identity: Identity;
        try {
          identity = await identities.verify(header);
        } catch (err) {
          throw toGraphQLError(err as AppError);
        }
        const requestId = (req.headers['x-request-id'] as string | undefined) ?? randomUUID();
        const deadline = Deadline.fromHeader(req.headers[DEADLINE_HEADER]);
        return options.createContext({ identity, requestId, logger: options.logger.child({ requestId }), deadline });
      },
    }),
  );
  const running = await listen(httpServer, options.host, options.port, {
    graceMs: options.shutdownGraceMs,
    logger: options.logger,
    afterDrain: () => apollo.stop(),
  });
  options.logger.info({ url: running.url }, `${options.name} subgraph listening`);
  const local = new LocalExecutor(options.schema, formatError);
  const contextOf = ({ identity, requestId, deadline }: Parameters<RunningSubgraph['execute']>[1]) =>
    options.createContext({ identity, requestId, logger: options.logger.child({ requestId }), deadline });
  const sharedFetches = defineOnce(
    options.metrics,
    'subgraph-shared-reads',
    (registry) =>
      new Counter({
        name: 'caregraph_subgraph_shared_reads_total',
        help: 'Subgraph reads answered from an identical read in flight for the same identity, by subgraph',
        labelNames: ['subgraph'],
        registers: [registry],
      }),
  );
  const shared = new SharedReads((requests) => sharedFetches.inc({ subgraph: options.name }, requests));
  const { readAccount } = options;
  const execute: RunningSubgraph['execute'] = (request, caller) => {
    if (!readAccount || !local.isQuery(request)) return local.run(request, contextOf(caller));
    return shared.run(request, caller, async () => {
      const context = contextOf(caller);
      return { response: await local.run(request, context), account: readAccount(context) };
    });
  };
  return { ...running, url: `${running.url}/graphql`, execute };
}
