import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, Kind, OperationTypeNode, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { RateLimitCategory } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { GatewayContext } from '../context';
import { categoryTable } from '../ratelimit/categories';
import { callerKey, mostConstrained, rateLimitHeaders, rateLimitMessage, type RateLimits } from '../ratelimit/limiter';

const ROOT_TYPE = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' } as const;

/**
 * The one place requests are counted (docs/api.md §7): every GraphQL operation,
 * whether it came over HTTP or from a REST adapter, spends one point in each
 * category its root fields touch, once it is known to be a valid operation.
 */
export function rateLimitPlugin(
  limits: RateLimits,
  supergraphSdl: string,
  logger: Logger,
  /** Told of every counted call (the tenant's activity record for the support desk). */
  onCounted: (identity: GatewayContext['identity'], categories: RateLimitCategory[]) => void = () => {},
): ApolloServerPlugin<GatewayContext> {
  const { table, unclassified } = categoryTable(supergraphSdl);
  if (unclassified.length > 0) {
    logger.warn({ fields: unclassified.map((f) => `${f.type}.${f.name}`) }, 'root fields without a rate-limit category are not limited');
  }

  return {
    async serverWillStart() {
      await limits.ready();
      return { serverWillStop: () => limits.close() };
    },
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, document, contextValue }) {
          // Spend nothing for operations the guard refuses (none resolved, subscriptions over HTTP) and internal executions.
          if (!operation || operation.operation === OperationTypeNode.SUBSCRIPTION || !contextValue.identity || !contextValue.rateLimit) return;
          const categories = contextValue.rateLimitCategory ? [contextValue.rateLimitCategory] : operationCategories(operation, document, table);
          if (categories.length === 0) return;
          onCounted(contextValue.identity, categories);
          const status = mostConstrained(await limits.consume(categories, callerKey(contextValue.identity), contextValue.tenantLimits));
          contextValue.rateLimit.status = status;
          if (status?.refused) {
            throw new GraphQLError(rateLimitMessage(status), {
              extensions: {
                code: 'RATE_LIMIT_EXCEEDED',
                retryAfter: status.resetSeconds,
                // willSendResponse adds the X-RateLimit-* and Retry-After headers to this answer too.
                http: { status: 429 },
              },
            });
          }
        },
        async willSendResponse({ contextValue, response }) {
          const status = contextValue.rateLimit?.status;
          if (!status) return;
          for (const [name, value] of Object.entries(rateLimitHeaders(status))) response.http.headers.set(name.toLowerCase(), value);
        },
      };
    },
  };
}

/** The categories of an operation's root fields, fragments on the root type included. */
export function operationCategories(operation: OperationDefinitionNode, document: DocumentNode, table: Map<string, RateLimitCategory>): RateLimitCategory[] {
  const rootType = ROOT_TYPE[operation.operation];
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
  const categories = new Set<RateLimitCategory>();
  const seen = new Set<string>();
  const visit = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const category = table.get(`${rootType}.${selection.name.value}`);
        if (category) categories.add(category);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet);
      } else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) visit(fragment);
      }
    }
  };
  visit(operation.selectionSet);
  return [...categories];
}
