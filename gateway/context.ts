import type { Identity, Principal } from '../common/auth/principal';
import type { Logger } from '../common/logger';
import type { RateLimitCategory } from '../common/config';
import type { RateLimitStatus, TenantLimits } from './ratelimit/limiter';
import type { Deadline } from '../common/deadline';

/** What the gateway knows about one request, for GraphQL resolution and REST adapters alike. */
export interface GatewayContext {
  principal: Principal;
  identity: Identity;
  requestId: string;
  logger: Logger;
  /** The request's deadline, passed on to every subgraph call; absent on internal executions. */
  deadline?: Deadline;
  /** Signed identity header for subgraphs, made once per request and reused for every subgraph fetch. */
  identityToken?: Promise<string>;
  /** Forced by the REST mount: everything under `/api/ehr` is EHR, whichever root fields it reads (docs/api.md §7). */
  rateLimitCategory?: RateLimitCategory;
  /**
   * Present on client calls (GraphQL over HTTP, REST), which the rate-limit plugin counts; it stores the
   * caller's budget there for the X-RateLimit-* headers (a holder: Apollo shallow-copies the context).
   * Internal executions (subscription updates pushed by the server) have none and are not counted.
   */
  rateLimit?: { status?: RateLimitStatus };
  /** The tenant's own per-minute limits (from its record), overriding the deployment's. */
  tenantLimits?: TenantLimits;
}
