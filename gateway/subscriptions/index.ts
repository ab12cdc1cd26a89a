import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExecutionArgs, GraphQLError, GraphQLSchema } from 'graphql';
import { WebSocketServer } from 'ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { Context } from 'graphql-ws';
import type { ApolloServer } from '@apollo/server';
import type { Config } from '../../common/config';
import type { EventBus } from '../../common/events/bus';
import type { Logger } from '../../common/logger';
import type { Clock } from '../../common/clock';
import type { AccessTokenVerifier } from '../../common/auth/tokens';
import { createErrorFormatter } from '../../common/graphql/errors';
import { errorBody } from '../../common/errors';
import type { GatewayContext } from '../context';
import { graphQLError, prepareOperation, type SubscriptionPlan } from './plan';
import { authenticateConnection, closeFor, closeOnExpiry, type Session } from './session';
import { EventResults, messageStatusStream } from './streams';
import { ConnectionRateLimiter } from './rate';
import type { TenantDirectory } from '../tenants/directory';

const SUBSCRIPTIONS_PATH = '/graphql';
/** Largest client message (connection_init, subscribe); ws closes the socket with 1009 beyond it. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** How long shutdown waits for clients to answer the close handshake before dropping them. */
const CLOSE_GRACE_MS = 3000;

export interface SubscriptionServerOptions {
  httpServer: Server;
  apollo: ApolloServer<GatewayContext>;
  /** The published schema: the supergraph's API schema plus Subscription (see buildSubscriptionSchema). */
  schema: GraphQLSchema;
  events: EventBus;
  verifyToken: AccessTokenVerifier;
  /** Refuses connections of unknown or suspended tenants, and tells of suspensions (their sockets are closed). */
  tenants: TenantDirectory;
  /** When a connection's token expires. */
  clock: Clock;
  config: Pick<Config, 'SUBSCRIPTIONS_MAX_PER_CONNECTION' | 'SUBSCRIPTIONS_CONNECTIONS_PER_MINUTE' | 'production'>;
  logger: Logger;
}

interface OperationContext {
  session: Session;
  plan: SubscriptionPlan;
  /** The document, operation and variables as the client sent them: equal keys select equal results. */
  documentKey: string;
}

/**
 * GraphQL subscriptions over WebSocket (graphql-transport-ws) on the
 * gateway's own HTTP server: @apollo/gateway has none. Returns the shutdown
 * hook, which closes every socket (1001) and the WebSocket server.
 */
export function attachSubscriptionServer(options: SubscriptionServerOptions): { close(): Promise<void>; active(): number } {
  const { httpServer, apollo, events, verifyToken, config, clock } = options;
  const logger = options.logger.child({ component: 'subscriptions' });
  const schema = options.schema;
  const formatError = createErrorFormatter(logger, { hideSuggestions: config.production });
  const format = (errors: readonly GraphQLError[]) => errors.map((error) => formatError(error.toJSON(), error));
  const sessions = new WeakMap<Context<any, Extra>, Session>();
  // Connections accepted and not yet closed: their graphql-ws contexts hold the live subscriptions (metrics).
  const open = new Set<Context<any, Extra>>();
  const limiter = new ConnectionRateLimiter(config.SUBSCRIPTIONS_CONNECTIONS_PER_MINUTE);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const eventResults = new EventResults();

  const server = useServer<Record<string, unknown>>(
    {
      isProd: config.production,
      onConnect: async (ctx) => {
        try {
          const session = await authenticateConnection(verifyToken, ctx.connectionParams, options.tenants);
          sessions.set(ctx, session);
          open.add(ctx);
          closeOnExpiry(session, ctx.extra.socket, clock);
          return true;
        } catch (err) {
          const { code, reason } = closeFor(err);
          if (code === 4500) logger.error({ err }, 'connection_init failed');
          ctx.extra.socket.close(code, reason);
          return false;
        }
      },
      onClose: (ctx) => {
        open.delete(ctx);
        clock.clearTimeout(sessions.get(ctx)?.expiry);
      },
      onSubscribe: (ctx, _id, payload) => {
        const session = sessions.get(ctx)!;
        // graphql-ws has already registered this id, so the count includes it.
        if (Object.keys(ctx.subscriptions).length > config.SUBSCRIPTIONS_MAX_PER_CONNECTION) {
          return [graphQLError('RATE_LIMIT_EXCEEDED', `At most ${config.SUBSCRIPTIONS_MAX_PER_CONNECTION} subscriptions per connection`)];
        }
        const prepared = prepareOperation(schema, session.identity, payload);
        if (Array.isArray(prepared)) return prepared;
        const documentKey = JSON.stringify([payload.query, prepared.operationName ?? null, prepared.variableValues ?? null]);
        const contextValue: OperationContext = { session, plan: prepared.plan, documentKey };
        return { schema, document: prepared.document, operationName: prepared.operationName, variableValues: prepared.variableValues, contextValue };
      },
      subscribe: (args: ExecutionArgs) => {
        const { session, plan, documentKey } = args.contextValue as OperationContext;
        if (plan.field === 'messageStatusChanged') return messageStatusStream({ bus: events, apollo, logger }, session, plan);
        return eventResults.stream(args, documentKey, events, session, plan);
      },
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: format(result.errors) } : undefined),
      onError: (_ctx, _id, _payload, errors) => format(errors),
    },
    wss,
  );

  // A suspension (announced by any instance) ends the tenant's live subscriptions too, not only its new calls.
  const stopWatchingTenants = options.tenants.onChange((tenantId, status) => {
    if (status === 'active') return;
    for (const ctx of open) {
      if (sessions.get(ctx)?.identity.tenantId === tenantId) ctx.extra.socket.close(4403, `FORBIDDEN: Tenant '${tenantId}' is suspended`);
    }
  });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const path = (request.url ?? '/').split('?')[0];
    if (path !== SUBSCRIPTIONS_PATH) return refuse(socket, 404, errorBody('NOT_FOUND', `No WebSocket endpoint at ${path}`));
    const wait = limiter.take(request.socket.remoteAddress ?? 'unknown');
    if (wait > 0) {
      return refuse(socket, 429, errorBody('RATE_LIMIT_EXCEEDED', `Too many WebSocket connections from this address; retry after ${wait} seconds`), {
        'Retry-After': String(wait),
      });
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      wss.emit('connection', ws, request);
      // ws has already closed the socket (1009 for an oversized message, or the peer is gone); graphql-ws would
      // print each such client mistake to the console, so the logger takes them instead.
      ws.removeAllListeners('error');
      ws.on('error', (err) => logger.debug({ err: err.message }, 'WebSocket client error'));
    });
  };
  httpServer.on('upgrade', onUpgrade);

  let closing: Promise<void> | undefined;
  const close = async () => {
    httpServer.off('upgrade', onUpgrade);
    stopWatchingTenants();
    // Clients that do not answer the close handshake in time are dropped, so shutdown never hangs on them.
    const force = setTimeout(() => {
      for (const client of wss.clients) client.terminate();
    }, CLOSE_GRACE_MS);
    try {
      await server.dispose();
    } finally {
      clearTimeout(force);
    }
  };
  return {
    close: () => (closing ??= close()),
    active: () => [...open].reduce((sum, ctx) => sum + Object.keys(ctx.subscriptions).length, 0),
  };
}

function refuse(socket: Duplex, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  const head = [
    `HTTP/1.1 ${status} ${status === 429 ? 'Too Many Requests' : 'Not Found'}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(text)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${text}`);
}
