import { randomUUID } from 'node:crypto';
import express, { type Request } from 'express';
import { pinoHttp } from 'pino-http';
import { ApolloServer } from '@apollo/server';
import { ApolloGateway } from '@apollo/gateway';
import { expressMiddleware } from '@as-integrations/express5';
import type { Config } from '../common/config';
import type { Secrets } from '../common/secrets';
import type { Logger } from '../common/logger';
import { createAccessTokenVerifier } from '../common/auth/tokens';
import { cachingAccessTokenVerifier } from '../common/auth/identity-cache';
import { createErrorFormatter, toGraphQLError } from '../common/graphql/errors';
import { AppError } from '../common/errors';
import { listen, serverUrl, type RunningServer } from '../common/http/listen';
import { admittedIdentity, authenticate } from './auth';
import { graphTenantLookup, TenantDirectory } from './tenants/directory';
import type { GatewayContext } from './context';
import { createSubgraphServices } from './subgraph-services';
import type { RunningSubgraph } from '../common/graphql/subgraph-server';
import { errorHandler, notFoundHandler } from './http-errors';
import { healthRoutes, type ReadinessCheck } from './health';
import type { MetricsRegistry } from '../common/metrics/registry';
import { gatewayMetrics, httpMetrics } from './metrics';
import { metricsPlugin } from './plugins/metrics';
import { readSupergraph } from './supergraph';
import { createGraphQLRunner } from './rest/execute';
import { webhookRoutes } from './rest/webhooks';
import { messagingRoutes, SMS_PROVIDER_PATHS, smsProviderRoutes } from './rest/messaging';
import { ehrRoutes } from './rest/ehr';
import { fhirErrorHandler, fhirPublicRoutes, fhirRoutes } from './rest/fhir';
import { OPENEHR_TEXT_PATHS, OPENEHR_XML_PATHS, openEhrErrorHandler, openEhrRoutes } from './rest/openehr';
import { xdsErrorHandler, xdsRoutes } from './rest/xds';
import { adminRoutes } from './admin-static';
import { explorerRoutes } from './explorer-static';
import { openApiRoutes } from './openapi/routes';
import { attachSubscriptionServer } from './subscriptions';
import type { EventBus } from '../common/events/bus';
import { RateLimits } from './ratelimit/limiter';
import { reportBudgetOnEarlyErrors, spendCategory } from './ratelimit/rest';
import { rateLimitPlugin } from './plugins/rate-limit';
import { tenantActivityPlugin } from './plugins/tenant-activity';
import type { TenantActivity } from '../common/activity/tenant-activity';
import { operationGuardPlugin } from './plugins/operation-guard';
import { serviceUnavailablePlugin } from './plugins/service-unavailable';
import { publishedIntrospectionPlugin } from './plugins/introspection';
import { buildSubscriptionSchema } from './subscriptions/schema';
import { queryLimitsRule } from './security/graphql-limits';
import { securityHeaders } from './security/headers';
import { cors } from './security/cors';
import { BODY_LIMIT_BYTES, bodyGuard, refuseDeepGraphQL, refuseDeepJson } from './security/body';
import { deadlinePlugin, requestDeadline } from './security/timeout';
import { createGatewayServer } from './security/server';
import { parsedBodyGuard, requestTargetGuard, storableTextPlugin, storableTextRule, verifyUtf8 } from './security/text';
import { publicBaseUrl } from './public-url';
import { traceRequests } from '../common/telemetry/http';
import { mcpRoutes } from './mcp/server';
import { systemClock, type Clock } from '../common/clock';

export interface GatewayOptions {
  config: Config;
  secrets: Secrets;
  logger: Logger;
  /** The time token expiry is checked against (default: the system clock). */
  clock?: Clock;
  /** Live events mirrored to GraphQL subscriptions. */
  events: EventBus;
  /** Where each subgraph answers, by name (`messaging`, `ehr`). */
  subgraphUrls: Record<string, string>;
  /** Subgraphs of this process, called in-process instead of over HTTP (all-in-one). */
  localSubgraphs?: Record<string, Pick<RunningSubgraph, 'execute'>>;
  /** The process's Prometheus registry, served at /metrics. */
  metrics: MetricsRegistry;
  /** Each tenant's recent calls, errors and callers, for the support desk (common/activity). */
  activity?: TenantActivity;
  /** Extra readiness checks, e.g. the database in the all-in-one process. */
  readiness?: ReadinessCheck[];
  host?: string;
  port?: number;
}

export interface RunningGateway extends RunningServer {
  apollo: ApolloServer<GatewayContext>;
}

/** Apollo's guard against fragment bombs, checked before the other validation rules run. */
const MAX_RECURSIVE_SELECTIONS = 100_000;

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const { config, secrets, logger } = options;
  const clock = options.clock ?? systemClock;
  const verifyToken = cachingAccessTokenVerifier(createAccessTokenVerifier(config, secrets, clock), () => clock.now().getTime());
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  const httpServer = createGatewayServer(app, config);

  const supergraphSdl = readSupergraph();
  const metrics = gatewayMetrics(options.metrics);
  const subgraphs = createSubgraphServices({
    subgraphUrls: options.subgraphUrls,
    localSubgraphs: options.localSubgraphs,
    internalKey: secrets.internalKey,
    metrics,
  });
  const gateway = new ApolloGateway({ supergraphSdl, buildService: subgraphs.buildService });
  let supergraphLoaded = false;
  const rateLimits = new RateLimits(config, logger, (category) => metrics.rateLimitRefused(category));
  // Hardening choices are documented in docs/security.md.
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    formatError: createErrorFormatter(logger, { hideSuggestions: config.production }),
    // The process's one shutdown sequence (bin/caregraph.ts) stops this server; Apollo's own
    // SIGINT/SIGTERM handlers raced it and hung it (see there).
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    introspection: !config.production,
    hideSchemaDetailsFromClientErrors: config.production,
    csrfPrevention: true,
    allowBatchedHttpRequests: false,
    parseOptions: { maxTokens: 10_000 },
    maxRecursiveSelections: MAX_RECURSIVE_SELECTIONS,
    validationRules: [
      queryLimitsRule({ maxDepth: config.GRAPHQL_MAX_DEPTH, maxAliases: config.GRAPHQL_MAX_ALIASES, maxCost: config.GRAPHQL_MAX_COST }),
      storableTextRule,
    ],
    plugins: [
      { serverWillStart: async () => void (supergraphLoaded = true) },
      operationGuardPlugin(),
      deadlinePlugin(),
      storableTextPlugin(),
      rateLimitPlugin(rateLimits, supergraphSdl, logger, (identity, categories) => options.activity?.recordCall(identity.tenantId, identity, categories)),
      ...(options.activity ? [tenantActivityPlugin(options.activity)] : []),
      serviceUnavailablePlugin(),
      ...(config.production ? [] : [publishedIntrospectionPlugin(() => publishedSchema)]),
      metricsPlugin(metrics),
    ],
  });
  await apollo.start();
  // The API schema plus Subscription: what introspection and the WebSocket server see.
  const publishedSchema = buildSubscriptionSchema(gateway.schema!);

  // Tenants as records: an unknown or suspended tenant is refused on every surface (docs/tenants.md).
  const tenants = new TenantDirectory(graphTenantLookup(apollo, logger), options.events);
  const contextFor = async (req: Request): Promise<GatewayContext> => {
    const { identity, tenant } = await admittedIdentity(req, tenants);
    const requestId = req.requestId ?? randomUUID();
    return {
      principal: req.principal!,
      identity,
      requestId,
      logger: logger.child({ requestId }),
      rateLimit: {},
      deadline: req.deadline,
      tenantLimits: tenant?.rateLimits,
    };
  };

  app.use(httpMetrics(metrics));
  app.use(traceRequests('gateway'));
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

  app.use(
    healthRoutes(
      options.metrics,
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
  // NUL bytes and invalid UTF-8 are refused for every API here (docs/security.md), before routing and after each body parser.
  app.use(requestTargetGuard());
  const json = [
    express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: ['application/json', 'application/*+json'], verify: verifyUtf8 }),
    refuseDeepJson,
    parsedBodyGuard,
  ];
  if (config.GRAPHQL_EXPLORER ? config.GRAPHQL_EXPLORER === 'true' : !config.production) app.use(explorerRoutes());
  app.use(
    '/graphql',
    authenticate(verifyToken),
    bodyGuard({ forms: false }),
    json,
    refuseDeepGraphQL,
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
  const publicBase = publicBaseUrl(config, () => serverUrl(httpServer, options.host ?? config.HOST));
  const jsonOnly = bodyGuard({ forms: false });
  const reportBudget = reportBudgetOnEarlyErrors(rateLimits, tenants);
  app.use(openApiRoutes(publicBase));
  app.use('/v1', bodyGuard({ forms: SMS_PROVIDER_PATHS }), smsProviderRoutes(run, config, publicBase));
  app.use('/v1', authenticate(verifyToken), json, messagingRoutes(run), webhookRoutes(run), reportBudget);
  app.use('/api/ehr', authenticate(verifyToken), spendCategory('EHR'), jsonOnly, json, ehrRoutes(run), reportBudget);
  // Standards exchange: same auth and GraphQL pipeline, errors in each standard's own shape.
  // Both are APIs of the clinical record, so they spend the EHR budget like /api/ehr.
  const form = [express.urlencoded({ limit: BODY_LIMIT_BYTES, extended: false, verify: verifyUtf8 }), parsedBodyGuard];
  app.use('/fhir/R4', fhirPublicRoutes(publicBase), fhirErrorHandler(logger));
  app.use(
    '/fhir/R4',
    authenticate(verifyToken),
    spendCategory('EHR'),
    bodyGuard({ forms: true }),
    json,
    form,
    fhirRoutes(run, publicBase),
    reportBudget,
    fhirErrorHandler(logger),
  );
  app.use(
    '/openehr/v1',
    authenticate(verifyToken),
    spendCategory('EHR'),
    bodyGuard({ forms: false, xml: OPENEHR_XML_PATHS, text: OPENEHR_TEXT_PATHS }),
    json,
    openEhrRoutes(run, publicBase),
    reportBudget,
    openEhrErrorHandler(logger, publicBase),
  );
  // IHE XDS.b (SOAP 1.2, MTOM): same auth and GraphQL pipeline and EHR budget; every error a SOAP fault.
  app.use('/xds', authenticate(verifyToken), spendCategory('EHR'), xdsRoutes(run), reportBudget, xdsErrorHandler(logger));
  // AI agents: the MCP server, on the same auth, tenancy and GraphQL pipeline (docs/ai-agents.md).
  app.use(mcpRoutes({ config, logger, apollo, contextFor, verifyToken, publicBase, json, version: process.env.npm_package_version ?? '0.1.0' }));
  app.use('/admin', adminRoutes());

  app.use(notFoundHandler);
  app.use(errorHandler(logger));

  const subscriptions = attachSubscriptionServer({
    httpServer,
    apollo,
    schema: publishedSchema,
    events: options.events,
    verifyToken,
    tenants,
    config,
    logger,
    clock,
  });
  metrics.observeSubscriptions(() => subscriptions.active());

  // Shutdown drains the requests in flight for at most SHUTDOWN_GRACE_MS (common/http/listen.ts). WebSocket
  // clients go first: an upgraded socket would keep the HTTP server from closing. Apollo and the subgraph
  // clients stop after the drain: the requests in flight need them until they are answered.
  const running = await listen(httpServer, options.host ?? config.HOST, options.port ?? config.PORT, {
    graceMs: config.SHUTDOWN_GRACE_MS,
    logger,
    beforeDrain: () => subscriptions.close(),
    afterDrain: async () => {
      tenants.close();
      await apollo.stop();
      await subgraphs.close();
    },
  });
  logger.info({ url: running.url }, 'gateway listening');
  return { ...running, apollo };
}
