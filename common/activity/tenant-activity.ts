import type { Redis } from 'ioredis';
import { createRedis } from '../redis';
import type { Config } from '../config';
import type { Logger } from '../logger';

/**
 * A bounded, short-lived record of each tenant's API activity for the support
 * desk: calls counted per rate-limit category in the current minute (all of the
 * tenant's callers together), the latest errors its calls answered, and who
 * called lately. Written by the gateway, read by the messaging service. In
 * memory for one process; in Redis with REDIS_URL, so every instance writes
 * and reads one record. Nothing here is patient data: codes, operation names,
 * token subjects.
 */
export interface TenantActivity {
  recordCall(tenantId: string, caller: { sub: string; roles: string[] }, categories: readonly string[]): void;
  recordError(tenantId: string, error: ApiErrorEntry): void;
  read(tenantId: string): Promise<ActivitySnapshot>;
  close(): Promise<void>;
}

export interface ApiErrorEntry {
  at: string;
  code: string;
  message: string;
  /** The GraphQL operation name or root fields (REST paths run one operation each). */
  operation: string;
  sub: string;
  requestId: string;
}

export interface ActivitySnapshot {
  /** Calls counted this minute per category, by all of the tenant's callers. */
  usage: { category: string; count: number }[];
  recentErrors: ApiErrorEntry[];
  recentCallers: { sub: string; roles: string[]; lastSeenAt: string }[];
}

/** How many errors and callers are kept per tenant, and for how long. */
export const MAX_ERRORS = 50;
export const MAX_CALLERS = 100;
const KEEP_SECONDS = 24 * 60 * 60;
const WINDOW_MS = 60_000;

const windowOf = (at: number) => Math.floor(at / WINDOW_MS);

export function createTenantActivity(
  config: Pick<Config, 'REDIS_URL' | 'RATE_LIMIT_KEY_PREFIX'>,
  logger: Logger,
  now: () => number = Date.now,
): TenantActivity {
  return config.REDIS_URL ? new RedisTenantActivity(config.REDIS_URL, `${config.RATE_LIMIT_KEY_PREFIX}:activity`, logger, now) : new MemoryTenantActivity(now);
}

export class MemoryTenantActivity implements TenantActivity {
  private readonly tenants = new Map<
    string,
    { window: number; usage: Map<string, number>; errors: ApiErrorEntry[]; callers: Map<string, { roles: string[]; lastSeenAt: number }> }
  >();

  constructor(private readonly now: () => number = Date.now) {}

  private of(tenantId: string) {
    let tenant = this.tenants.get(tenantId);
    if (!tenant) {
      tenant = { window: windowOf(this.now()), usage: new Map(), errors: [], callers: new Map() };
      this.tenants.set(tenantId, tenant);
    }
    const window = windowOf(this.now());
    if (tenant.window !== window) {
      tenant.window = window;
      tenant.usage.clear();
    }
    return tenant;
  }

  recordCall(tenantId: string, caller: { sub: string; roles: string[] }, categories: readonly string[]): void {
    const tenant = this.of(tenantId);
    for (const category of categories) tenant.usage.set(category, (tenant.usage.get(category) ?? 0) + 1);
    tenant.callers.delete(caller.sub);
    tenant.callers.set(caller.sub, { roles: caller.roles, lastSeenAt: this.now() });
    if (tenant.callers.size > MAX_CALLERS) tenant.callers.delete(tenant.callers.keys().next().value!);
  }

  recordError(tenantId: string, error: ApiErrorEntry): void {
    const errors = this.of(tenantId).errors;
    errors.unshift(error);
    errors.length = Math.min(errors.length, MAX_ERRORS);
  }

  async read(tenantId: string): Promise<ActivitySnapshot> {
    const tenant = this.of(tenantId);
    const since = this.now() - KEEP_SECONDS * 1000;
    return {
      usage: [...tenant.usage].map(([category, count]) => ({ category, count })),
      recentErrors: tenant.errors.filter((e) => Date.parse(e.at) >= since),
      recentCallers: [...tenant.callers]
        .filter(([, c]) => c.lastSeenAt >= since)
        .reverse()
        .map(([sub, c]) => ({ sub, roles: c.roles, lastSeenAt: new Date(c.lastSeenAt).toISOString() })),
    };
  }

  async close(): Promise<void> {}
}

/** Keys per tenant: a hash of this minute's counts, a capped list of errors, a sorted set of callers by last call. */
class RedisTenantActivity implements TenantActivity {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.redis = createRedis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    this.redis.on('error', (err) => logger.warn({ err: err.message }, 'tenant activity redis error; support desk activity is incomplete until it is back'));
  }

  private key(tenantId: string, what: string): string {
    return `${this.prefix}:${tenantId}:${what}`;
  }

  /** Best effort: the record serves the support desk, never the request. */
  private run(what: string, commands: Promise<unknown>): void {
    commands.catch((err: Error) => this.logger.debug({ err: err.message }, `tenant activity: ${what} not recorded`));
  }

  recordCall(tenantId: string, caller: { sub: string; roles: string[] }, categories: readonly string[]): void {
    const usage = this.key(tenantId, `usage:${windowOf(this.now())}`);
    const callers = this.key(tenantId, 'callers');
    const multi = this.redis.multi();
    for (const category of categories) multi.hincrby(usage, category, 1);
    multi.expire(usage, 120);
    multi.zadd(callers, this.now(), JSON.stringify({ sub: caller.sub, roles: caller.roles }));
    multi.zremrangebyrank(callers, 0, -(MAX_CALLERS + 1));
    multi.expire(callers, KEEP_SECONDS);
    this.run('call', multi.exec());
  }

  recordError(tenantId: string, error: ApiErrorEntry): void {
    const errors = this.key(tenantId, 'errors');
    this.run(
      'error',
      this.redis
        .multi()
        .lpush(errors, JSON.stringify(error))
        .ltrim(errors, 0, MAX_ERRORS - 1)
        .expire(errors, KEEP_SECONDS)
        .exec(),
    );
  }

  async read(tenantId: string): Promise<ActivitySnapshot> {
    const since = this.now() - KEEP_SECONDS * 1000;
    const [usage, errors, callers] = await Promise.all([
      this.redis.hgetall(this.key(tenantId, `usage:${windowOf(this.now())}`)),
      this.redis.lrange(this.key(tenantId, 'errors'), 0, MAX_ERRORS - 1),
      this.redis.zrevrangebyscore(this.key(tenantId, 'callers'), '+inf', since, 'WITHSCORES'),
    ]);
    const recentCallers: ActivitySnapshot['recentCallers'] = [];
    for (let i = 0; i < callers.length; i += 2) {
      const { sub, roles } = JSON.parse(callers[i]) as { sub: string; roles: string[] };
      recentCallers.push({ sub, roles, lastSeenAt: new Date(Number(callers[i + 1])).toISOString() });
    }
    return {
      usage: Object.entries(usage).map(([category, count]) => ({ category, count: Number(count) })),
      recentErrors: errors.map((e) => JSON.parse(e) as ApiErrorEntry),
      recentCallers,
    };
  }

  async close(): Promise<void> {
    if (this.redis.status !== 'end') await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
