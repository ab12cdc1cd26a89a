import type { Redis } from 'ioredis';
import type { FieldCipher } from '../crypto';
import { createRedis } from '../redis';
import type { Logger } from '../logger';
import type { EventBus } from './bus';
import type { PlatformEvent } from './types';

const DEFAULT_EVENTS_CHANNEL = 'caregraph:events';

/**
 * Redis pub/sub bus: one publishing and one subscribed connection per
 * process, one channel per deployment. Every local listener hears events
 * through Redis, its own publishes included, so all instances see one order
 * per publisher. Each message is the whole event as JSON sealed with the
 * platform's encryption key (AES-256-GCM, the cipher of data at rest): a reply's
 * text, a patient id or an appointment time is clinical or personal, and Redis
 * is outside what the key protects, so anyone who can SUBSCRIBE there reads
 * only ciphertext. A message that does not open with the key is dropped.
 */
export class RedisEventBus implements EventBus {
  private readonly listeners = new Set<(event: PlatformEvent) => void>();
  private closed = false;

  private constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly channel: string,
    private readonly cipher: FieldCipher,
    private readonly logger: Logger,
  ) {
    subscriber.on('message', (received: string, message: string) => {
      if (received !== this.channel) return;
      const event = parseEvent(message, cipher);
      if (!event) {
        this.logger.warn({ channel: this.channel }, 'ignored a malformed event on the Redis bus');
        return;
      }
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch (err) {
          this.logger.error({ err, eventId: event.id }, 'event listener failed');
        }
      }
    });
  }

  /** Connects both connections and subscribes before returning, so no publish after start is missed. */
  static async connect(url: string, cipher: FieldCipher, logger: Logger, channel = DEFAULT_EVENTS_CHANNEL): Promise<RedisEventBus> {
    let started = false;
    const options = {
      lazyConnect: true,
      // No reconnect loop while starting (a failed start must leave no timers behind); afterwards, back off up to 2 s.
      retryStrategy: (attempt: number) => (started ? Math.min(attempt * 100, 2000) : null),
      // A publish while Redis is unreachable fails at once instead of piling up in memory.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectionName: 'caregraph-events',
    };
    const publisher = createRedis(url, options);
    // The subscriber must queue its SUBSCRIBE across reconnects; ioredis re-subscribes on its own.
    const subscriber = createRedis(url, { ...options, enableOfflineQueue: true, maxRetriesPerRequest: null });
    const log = logger.child({ component: 'redis-event-bus' });
    for (const connection of [publisher, subscriber]) {
      connection.on('error', (err: Error) => log.warn({ err: err.message }, 'Redis event bus connection error'));
    }
    try {
      // allSettled: neither connection may still be dialling when we give up on a failed start.
      const results = await Promise.allSettled([publisher.connect(), subscriber.connect()]);
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      await subscriber.subscribe(channel);
      started = true;
    } catch (err) {
      for (const connection of [publisher, subscriber]) if (connection.status !== 'end') connection.disconnect();
      throw new Error(`Cannot connect the event bus to Redis: ${(err as Error).message}`, { cause: err });
    }
    return new RedisEventBus(publisher, subscriber, channel, cipher, log);
  }

  /** A lost publish costs a live update, never a webhook (the outbox is durable): log it, do not fail the caller. */
  async publish(event: PlatformEvent): Promise<void> {
    if (this.closed) return;
    try {
      await this.publisher.publish(this.channel, this.cipher.encrypt(JSON.stringify(event)));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, eventId: event.id, type: event.type }, 'event not published on Redis');
    }
  }

  subscribe(listener: (event: PlatformEvent) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await Promise.all([quit(this.subscriber), quit(this.publisher)]);
  }
}

async function quit(connection: Redis): Promise<void> {
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}

/** The event a message seals; undefined when it is not sealed with a key we hold (or not an event). */
function parseEvent(message: string, cipher: FieldCipher): PlatformEvent | undefined {
  try {
    const value = JSON.parse(cipher.decrypt(message)) as PlatformEvent;
    const ok =
      typeof value === 'object' &&
      value !== null &&
      typeof value.id === 'string' &&
      typeof value.type === 'string' &&
      typeof value.timestamp === 'string' &&
      typeof value.tenantId === 'string' &&
      typeof value.data === 'object' &&
      value.data !== null;
    return ok ? value : undefined;
  } catch {
    return undefined;
  }
}
