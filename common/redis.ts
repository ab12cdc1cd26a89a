import { Redis, type RedisOptions } from 'ioredis';

/**
 * Where the platform's Redis is (REDIS_URL): one server (`redis://`, `rediss://`)
 * or a master found through Redis Sentinel,
 * `redis+sentinel://[:password@]host:port[,host:port…]/<master name>[/<db>]`,
 * which the clients follow to the new master after a failover (docs/deploy.md).
 */
type RedisTarget =
  { kind: 'server'; url: string } | { kind: 'sentinel'; sentinels: { host: string; port: number }[]; name: string; password?: string; db?: number };

const SENTINEL = /^redis\+sentinel:\/\/(?:(?::([^@]*))@)?([^/@]+)\/([^/?#]+)(?:\/(\d+))?\/?$/;
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** Parses REDIS_URL; throws an Error that says what is wrong. */
export function parseRedisUrl(value: string): RedisTarget {
  if (value.startsWith('redis+sentinel:')) {
    const match = SENTINEL.exec(value);
    if (!match) throw new Error('must be redis+sentinel://host:port[,host:port…]/<master name>[/<db>]');
    const [, password, hosts, name, db] = match;
    const sentinels = hosts.split(',').map((item) => {
      const hostPort = HOST_PORT.exec(item.trim());
      if (!hostPort || Number(hostPort[2]) < 1 || Number(hostPort[2]) > 65535) throw new Error(`'${item}' is not a sentinel host:port`);
      return { host: hostPort[1].replace(/^\[|\]$/g, ''), port: Number(hostPort[2]) };
    });
    return {
      kind: 'sentinel',
      sentinels,
      name: decodeURIComponent(name),
      ...(password ? { password: decodeURIComponent(password) } : {}),
      ...(db ? { db: Number(db) } : {}),
    };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`is not a URL (got '${value}')`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new Error('must start with redis://, rediss:// or redis+sentinel://');
  return { kind: 'server', url: value };
}

/**
 * The one way the platform makes a Redis connection (event bus, rate limits, tenant
 * activity). With Sentinel, ioredis asks the sentinels for the master on every
 * (re)connect and checks the role of the server it reaches, so a reconnect after a
 * failover lands on the new master; `retryStrategy` also paces the asking.
 */
export function createRedis(url: string, options: RedisOptions): Redis {
  const target = parseRedisUrl(url);
  if (target.kind === 'server') return new Redis(url, options);
  return new Redis({
    ...options,
    sentinels: target.sentinels,
    name: target.name,
    password: target.password,
    db: target.db,
    sentinelRetryStrategy: options.retryStrategy ?? ((attempt: number) => Math.min(attempt * 100, 2000)),
    // A switch the Sentinels announce (+switch-master) drops the connection to the old master at once.
    failoverDetector: true,
    // A demoted master answers READONLY to writes: reconnect, which asks the sentinels again.
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
  });
}
