import type { Redis } from 'ioredis';
import { createRedis } from '../../common/redis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config, RateLimitCategory } from '../../common/config';
import type { Logger } from '../../common/logger';

const WINDOW_SECONDS = 60;

/** One category's budget for one caller after a request: what the X-RateLimit-* headers report. */
export interface RateLimitStatus {
  category: RateLimitCategory;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1 while a window is open). */
  resetSeconds: number;
  /** Set when this request was refused. */
  refused: boolean;
}

/**
 * Fixed one-minute windows per category and caller (tenant + token subject),
 * in process memory or, with REDIS_URL, in Redis so every gateway instance
 * spends the same budget. If Redis is unreachable, an in-memory limiter with
 * the same limits stands in (per instance) rather than failing every request.
 */
/** A tenant's own per-minute limits (its record's settings); categories not listed use the deployment's. */
export type TenantLimits = Partial<Record<RateLimitCategory, number>>;

export class RateLimits {
  /** One limiter per category and limit: they share the category's counters (same key prefix), so a changed limit keeps the window's count. */
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly redis?: Redis;

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    /** Told of each category that refused a request (metrics). */
    private readonly onRefused: (category: RateLimitCategory) => void = () => {},
  ) {
    if (config.REDIS_URL) {
      this.redis = createRedis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
      this.redis.on('error', (err) => logger.warn({ err: err.message }, 'rate-limit redis error; using per-instance limits until it is back'));
    }
  }

  private limiter(category: RateLimitCategory, points: number): RateLimiterAbstract {
    const key = `${category}:${points}`;
    let limiter = this.limiters.get(key);
    if (limiter) return limiter;
    const keyPrefix = `${this.config.RATE_LIMIT_KEY_PREFIX}:${category}`;
    const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix });
    limiter = this.redis
      ? new RateLimiterRedis({ storeClient: this.redis, points, duration: WINDOW_SECONDS, keyPrefix, rejectIfRedisNotReady: true, insuranceLimiter: memory })
      : memory;
    this.limiters.set(key, limiter);
    return limiter;
  }

  /** Waits for Redis so the first requests already count in the shared store (falls back after `timeoutMs`). */
  async ready(timeoutMs = 5_000): Promise<void> {
    const redis = this.redis;
    if (!redis || redis.status === 'ready') return;
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!connected) this.logger.warn('rate-limit redis not reachable yet; counting per instance until it is');
  }

  limitOf(category: RateLimitCategory, tenant?: TenantLimits): number {
    return tenant?.[category] ?? this.config.rateLimits[category];
  }

  /** Spends one point in each category; all are charged even when one refuses, like separate calls would be. */
  async consume(categories: Iterable<RateLimitCategory>, caller: string, tenant?: TenantLimits): Promise<RateLimitStatus[]> {
    return Promise.all(
      [...new Set(categories)].map(async (category) => {
        const limit = this.limitOf(category, tenant);
        try {
          return this.status(category, limit, await this.limiter(category, limit).consume(caller, 1), false);
        } catch (rejection) {
          if (rejection instanceof RateLimiterRes) {
            this.onRefused(category);
            return this.status(category, limit, rejection, true);
          }
          throw rejection;
        }
      }),
    );
  }

  /** The caller's budget without spending any (for answers refused before their operation ran). */
  async peek(category: RateLimitCategory, caller: string, tenant?: TenantLimits): Promise<RateLimitStatus> {
    const limit = this.limitOf(category, tenant);
    const current = await this.limiter(category, limit).get(caller);
    if (!current) return { category, limit, remaining: limit, resetSeconds: WINDOW_SECONDS, refused: false };
    return this.status(category, limit, current, false);
  }

  async close(): Promise<void> {
    if (this.redis && this.redis.status !== 'end') await this.redis.quit().catch(() => this.redis!.disconnect());
  }

  private status(category: RateLimitCategory, limit: number, res: RateLimiterRes, refused: boolean): RateLimitStatus {
    return {
      category,
      limit,
      remaining: Math.max(0, res.remainingPoints),
      resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
      refused,
    };
  }
}

/** The caller a budget belongs to: tenant and token subject (docs/api.md §7). */
export function callerKey(identity: { tenantId: string; sub: string }): string {
  return `${identity.tenantId}:${identity.sub}`;
}

/**
 * With several categories in one request, the headers report the most
 * constrained one: a refused category with the longest wait, else the one
 * with the fewest points left.
 */
export function mostConstrained(statuses: RateLimitStatus[]): RateLimitStatus | undefined {
  return [...statuses].sort((a, b) => {
    if (a.refused !== b.refused) return a.refused ? -1 : 1;
    if (a.refused) return b.resetSeconds - a.resetSeconds;
    return a.remaining - b.remaining || b.resetSeconds - a.resetSeconds;
  })[0];
}

export function rateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(status.limit),
    'X-RateLimit-Remaining': String(status.remaining),
    'X-RateLimit-Reset': String(status.resetSeconds),
  };
  if (status.refused) headers['Retry-After'] = String(status.resetSeconds);
  return headers;
}

export function rateLimitMessage(status: RateLimitStatus): string {
  const unit = status.resetSeconds === 1 ? 'second' : 'seconds';
  return `Rate limit of ${status.limit} ${status.category} calls per minute exceeded; retry after ${status.resetSeconds} ${unit}`;
}
