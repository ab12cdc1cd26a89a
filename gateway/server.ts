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
import { cachingAccessTokenVerifier } from '../common/auth/identity-cache';
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
import { RateLimits } from './ratelimit/limiter';
import { reportBudgetOnEarlyErrors, spendCategory } from './ratelimit/rest';
import { rateLimitPlugin } from './plugins/rate-limit';
import { operationGuardPlugin } from './plugins/operation-guard';
import { queryLimitsRule } from './security/graphql-limits';
import { securityHeaders } from './security/headers';
import { cors } from './security/cors';
import { BODY_LIMIT_BYTES, bodyGuard } from './security/body';
import { requestDeadline } from './security/timeout';
import { createGatewayServer } from './security/server';

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

/** Paths that accept form bodies besides JSON (the SMS provider's inbound webhook posts a form). */
const FORM_PATHS = ['/v1/inbound/sms', '/v1/providers/twilio/status'];
/** Apollo's guard against fragment bombs, checked before the other validation rules run. */
const MAX_RECURSIVE_SELECTIONS = 100_000;

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { config, secrets, logger } = options;
  const verifyToken = cachingAccessTokenVerifier(createAccessTokenVerifier(config, secrets));
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  const httpServer = createGatewayServer(app, config);

  const supergraphSdl = readSupergraph();
  const subgraphs = createSubgraphServices({ subgraphUrls: options.subgraphUrls, localSubgraphs: options.localSubgraphs, internalKey: secrets.internalKey });
  const gateway = new ApolloGateway({ supergraphSdl, buildService: subgraphs.buildService });
  let supergraphLoaded = false;
  const rateLimits = new RateLimits(config, logger);
  // Hardening choices are documented in docs/security.md.
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    formatError: createErrorFormatter(logger),
    includeStacktraceInErrorResponses: false,
    introspection: !config.production,
    csrfPrevention: true,
    allowBatchedHttpRequests: false,
    parseOptions: { maxTokens: 10_000 },
    maxRecursiveSelections: MAX_RECURSIVE_SELECTIONS,
    validationRules: [queryLimitsRule({ maxDepth: config.GRAPHQL_MAX_DEPTH, maxAliases: config.GRAPHQL_MAX_ALIASES, maxCost: config.GRAPHQL_MAX_COST })],
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      { serverWillStart: async () => void (supergraphLoaded = true) },
      operationGuardPlugin(),
      rateLimitPlugin(rateLimits, supergraphSdl, logger),
    ],
  });
  await apollo.start();

  const contextFor = async (req: Request): Promise<GatewayContext> => {
    const identity = identityOf(req);
    const requestId = req.requestId ?? randomUUID();
    return { principal: req.principal!, identity, requestId, logger: logger.child({ requestId }), rateLimit: {} };
  };

  app.use(securityHeaders({ tls: Boolean(config.TLS_CERT_FILE), production: config.production }));
  app.use(requestDeadline(config.REQUEST_TIMEOUT_MS));
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

  app.use(cors(config.CORS_ORIGINS));
  const json = express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: ['application/json', 'application/*+json'] });
  app.use(
    '/graphql',
    authenticate(verifyToken),
    bodyGuard({ forms: false }),
    json,
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
  const jsonOnly = bodyGuard({ forms: false });
  const reportBudget = reportBudgetOnEarlyErrors(rateLimits);
  app.use('/v1', bodyGuard({ forms: FORM_PATHS }), smsProviderRoutes(run, config));
  app.use('/v1', authenticate(verifyToken), json, messagingRoutes(run), webhookRoutes(run), reportBudget);
  app.use('/api/ehr', authenticate(verifyToken), spendCategory('EHR'), jsonOnly, json, ehrRoutes(run), reportBudget);
  // Standards exchange: same auth and GraphQL pipeline, errors in each standard's own shape.
  // Both are APIs of the clinical record, so they spend the EHR budget like /api/ehr.
  const form = express.urlencoded({ limit: BODY_LIMIT_BYTES, extended: false });
  app.use('/fhir/R4', authenticate(verifyToken), spendCategory('EHR'), bodyGuard({ forms: true }), json, form, fhirRoutes(run), reportBudget, fhirErrorHandler(logger));
  app.use('/openehr/v1', authenticate(verifyToken), spendCategory('EHR'), jsonOnly, json, openEhrRoutes(run), reportBudget, openEhrErrorHandler(logger));
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
