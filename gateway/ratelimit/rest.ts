import type { NextFunction, Request, Response } from 'express';
import type { RateLimitCategory } from '../../common/config';
import { admittedIdentity } from '../auth';
import type { TenantDirectory } from '../tenants/directory';
import { restPathCategory } from './categories';
import { callerKey, rateLimitHeaders, type RateLimits, type RateLimitStatus } from './limiter';

declare module 'express-serve-static-core' {
  interface Request {
    /** Category every operation of this request spends, whatever its root fields (see GatewayContext). */
    rateLimitCategory?: RateLimitCategory;
  }
}

/** Marks a REST mount whose operations all spend one category (`/api/ehr/*` → EHR, docs/api.md §7). */
export function spendCategory(category: RateLimitCategory) {
  return (req: Request, _res: Response, next: NextFunction) => {
    req.rateLimitCategory = category;
    next();
  };
}

export function setRateLimitHeaders(res: Response, status: RateLimitStatus): void {
  res.set(rateLimitHeaders(status));
}

/**
 * Error middleware for REST mounts: an answer refused before its GraphQL
 * operation ran (bad parameters, bad body) spends nothing but still reports
 * the caller's budget, so every response of these paths carries the headers.
 * Unauthenticated or tenant-less calls (and refused tenants) have no budget to report.
 */
export function reportBudgetOnEarlyErrors(limits: RateLimits, tenants: TenantDirectory) {
  return async (err: unknown, req: Request, res: Response, next: NextFunction) => {
    try {
      if (!res.headersSent && !res.getHeader('X-RateLimit-Limit') && req.principal) {
        const category = req.rateLimitCategory ?? restPathCategory(req.method, req.baseUrl + req.path);
        if (category) {
          const { identity, tenant } = await admittedIdentity(req, tenants);
          setRateLimitHeaders(res, await limits.peek(category, callerKey(identity), tenant?.rateLimits));
        }
      }
    } catch {
      // No tenant (or no store): the error itself is the answer.
    }
    next(err);
  };
}
