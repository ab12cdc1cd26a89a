import type { ApolloServer } from '@apollo/server';
import type { Request } from 'express';
import { AppError, isErrorCode, type ErrorDetail } from '../../common/errors';
import type { GatewayContext } from '../context';
import { setRateLimitHeaders } from '../ratelimit/rest';
import { setRetryAfter } from '../http-errors';

export type GraphQLRunner = <T = any>(req: Request, query: string, variables?: Record<string, unknown>) => Promise<T>;

/**
 * REST adapters speak to the federated graph exactly as a GraphQL client
 * would, through the gateway's own pipeline (auth context, plugins, limits),
 * and turn the first GraphQL error back into the contract's error.
 */
export function createGraphQLRunner(apollo: ApolloServer<GatewayContext>, contextFor: (req: Request) => Promise<GatewayContext>): GraphQLRunner {
  return async <T>(req: Request, query: string, variables?: Record<string, unknown>) => {
    const contextValue = await contextFor(req);
    contextValue.rateLimitCategory = req.rateLimitCategory;
    const response = await apollo.executeOperation<Record<string, unknown>>({ query, variables }, { contextValue });
    // The budget this operation spent, on the REST answer whether it succeeds or not (docs/api.md §7).
    if (contextValue.rateLimit?.status && req.res) setRateLimitHeaders(req.res, contextValue.rateLimit.status);
    if (response.body.kind !== 'single') throw new AppError('INTERNAL_ERROR', 'Unexpected incremental response');
    const { data, errors } = response.body.singleResult;
    if (errors && errors.length > 0) {
      const first = errors[0];
      const code = first.extensions?.code;
      const details = first.extensions?.details as ErrorDetail[] | undefined;
      const error = new AppError(isErrorCode(code) ? code : 'INTERNAL_ERROR', isErrorCode(code) ? first.message : 'Internal server error', details);
      // Every REST surface (/v1, /api/ehr, FHIR, openEHR) answers through here: a 503 carries Retry-After.
      const retryAfter = first.extensions?.retryAfter;
      if (req.res) setRetryAfter(req.res, error, typeof retryAfter === 'number' ? retryAfter : undefined);
      throw error;
    }
    return data as T;
  };
}
