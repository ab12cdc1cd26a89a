import http from 'node:http';
import { randomUUID } from 'node:crypto';
import express, { type Request } from 'express';
import { pinoHttp } from 'pino-http';
import { ApolloServer } from '@apollo/server';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import type { Config } from '../common/config';
import type { Secrets } from '../common/secrets';
import type { Logger } from '../common/logger';
import { createAccessTokenVerifier } from '../common/auth/tokens';
import { createErrorFormatter, toGraphQLError } from '../common/graphql/errors';
import { AppError } from '../common/errors';
import { listen, type RunningServer } from '../common/http/listen';
import { authenticate, identityOf } from './auth';
import type { GatewayContext } from './context';
import { createSubgraphServices } from './subgraph-services';
import type { RunningSubgraph } from '../common/graphql/subgraph-server';
import { errorHandler, notFoundHandler } from './http-errors';
import { createMetricsRegistry, healthRoutes, type ReadinessCheck } from './health';
import { readSupergraph } from './supergraph';
import { createGraphQLRunner } from './rest/execute';
import { webhookRoutes } from './rest/webhooks';
import { messagingRoutes, smsProviderRoutes } from './rest/messaging';
import { ehrRoutes } from './rest/ehr';
import { fhirErrorHandler, fhirRoutes } from './rest/fhir';
import { openEhrErrorHandler, openEhrRoutes } from './rest/openehr';
import { adminRoutes } from './admin-static';
import { attachSubscriptionServer } from './subscriptions';
import type { EventBus } from '../common/events/bus';

export interface GatewayOptions {
  config: Config;
  secrets: Secrets;
  logger: Logger;
  /** Live events mirrored to GraphQL subscriptions. */
  events: EventBus;
  /** Where each subgraph answers, by name (`messaging`, `ehr`). */
  subgraphUrls: Record<string, string>;
  /** Subgraphs of this process, called in-process instead of over HTTP (all-in-one). */
  localSubgraphs?: Record<string, Pick<RunningSubgraph, 'execute'>>;
  /** Extra readiness checks, e.g. the database in the all-in-one process. */
  readiness?: ReadinessCheck[];
  host?: string;
  port?: number;
}

export interface RunningGateway extends RunningServer {
  apollo: ApolloServer<GatewayContext>;
}

const BODY_LIMIT = '1mb';

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { config, secrets, logger } = options;
  const verifyToken = createAccessTokenVerifier(config, secrets);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  const httpServer = http.createServer(app);

  const subgraphs = createSubgraphServices({ subgraphUrls: options.subgraphUrls, localSubgraphs: options.localSubgraphs, internalKey: secrets.internalKey });
  const gateway = new ApolloGateway({ supergraphSdl: readSupergraph(), buildService: subgraphs.buildService });
  let supergraphLoaded = false;
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    formatError: createErrorFormatter(logger),
    includeStacktraceInErrorResponses: false,
    introspection: !config.production,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      { serverWillStart: async () => void (supergraphLoaded = true) },
    ],
  });
  await apollo.start();

  const contextFor = async (req: Request): Promise<GatewayContext> => {
    const identity = identityOf(req);
    const requestId = req.requestId ?? randomUUID();
    return { principal: req.principal!, identity, requestId, logger: logger.child({ requestId }) };
  };

  app.use((req, res, next) => {
    const incoming = req.headers['x-request-id'];
    req.requestId = typeof incoming === 'string' && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', req.requestId);
    next();
  });
  app.use(
    pinoHttp({
      logger,
      genReqId: (req) => (req as Request).requestId!,
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/metrics' },
      serializers: {
        req: (req) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    }),
  );

  const registry = createMetricsRegistry();
  app.use(
    healthRoutes(
      registry,
      [
        {
          name: 'supergraph',
          check: async () => {
            if (!supergraphLoaded) throw new Error('supergraph not loaded');
          },
        },
        ...(options.readiness ?? []),
      ],
      logger,
    ),
  );

  const json = express.json({ limit: BODY_LIMIT, strict: true, type: ['application/json', 'application/*+json'] });
  app.use(
    '/graphql',
    json,
    authenticate(verifyToken),
    expressMiddleware(apollo, {
      context: async ({ req }) => {
        try {
          return await contextFor(req);
        } catch (err) {
          throw err instanceof AppError ? toGraphQLError(err) : err;
        }
      },
    }),
  );

  const run = createGraphQLRunner(apollo, contextFor);
  app.use('/v1', smsProviderRoutes(run, config));
  app.use('/v1', json, authenticate(verifyToken), messagingRoutes(run));
  app.use('/v1', json, authenticate(verifyToken), webhookRoutes(run));
  app.use('/api/ehr', json, authenticate(verifyToken), ehrRoutes(run));
  // Standards exchange: same auth and GraphQL pipeline, errors in each standard's own shape.
  const form = express.urlencoded({ limit: BODY_LIMIT, extended: false });
  app.use('/fhir/R4', json, form, authenticate(verifyToken), fhirRoutes(run), fhirErrorHandler(logger));
  app.use('/openehr/v1', json, authenticate(verifyToken), openEhrRoutes(run), openEhrErrorHandler(logger));
  app.use('/admin', adminRoutes());

  app.use(notFoundHandler);
  app.use(errorHandler(logger));

  const subscriptions = attachSubscriptionServer({ httpServer, apollo, apiSchema: gateway.schema!, events: options.events, verifyToken, config, logger });

  // WebSocket clients first: an upgraded socket would keep the HTTP server from closing.
  const running = await listen(httpServer, options.host ?? config.HOST, options.port ?? config.PORT, async () => {
    await subscriptions.close();
    await apollo.stop();
    await subgraphs.close();
  });
  logger.info({ url: running.url }, 'gateway listening');
  return { ...running, apollo };
}
