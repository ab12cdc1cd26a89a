import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { FieldCipher } from '../crypto';
import { createLogger } from '../logger';
import type { PlatformEvent } from './types';
import { RedisEventBus } from './redis-bus';

const REDIS_URL = process.env.TEST_REDIS_URL;
const logger = createLogger('silent');
const cipher = new FieldCipher(randomBytes(32));

const event = (n: number, tenantId = 'demo'): PlatformEvent => ({
  id: `evt_${n}`,
  type: 'message.status',
  timestamp: new Date(Date.UTC(2026, 10, 22, 9, 0, n)).toISOString(),
  data: { messageId: 'm-1', patientId: 'p-1001', channel: 'sms', status: `s${n}` },
  tenantId,
});

/** Resolves with the first `count` events a bus delivers. */
function collect(bus: RedisEventBus, count: number): Promise<PlatformEvent[]> {
  return new Promise((resolve) => {
    const seen: PlatformEvent[] = [];
    const stop = bus.subscribe((e) => {
      seen.push(e);
      if (seen.length === count) {
        stop();
        resolve(seen);
      }
    });
  });
}

(REDIS_URL ? describe : describe.skip)('RedisEventBus (Redis)', () => {
  // A channel of its own, so parallel test files on the same Redis never hear each other.
  const channel = `caregraph:test:${randomUUID()}`;
  let a: RedisEventBus;
  let b: RedisEventBus;
  beforeAll(async () => {
    // Two buses = two processes: separate connections, same deployment channel.
    [a, b] = await Promise.all([RedisEventBus.connect(REDIS_URL!, cipher, logger, channel), RedisEventBus.connect(REDIS_URL!, cipher, logger, channel)]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('delivers a publish on one instance to the listeners of every instance, in order', async () => {
    const onA = collect(a, 50);
    const onB = collect(b, 50);
    const sent = Array.from({ length: 50 }, (_, i) => event(i));
    for (const e of sent) await b.publish(e);
    expect(await onA).toEqual(sent);
    expect(await onB).toEqual(sent);
  });

  it('ignores malformed, unsealed and foreign-key messages on the channel and keeps delivering', async () => {
    const received = collect(a, 1);
    const raw = new Redis(REDIS_URL!);
    try {
      await raw.publish(channel, 'not json');
      await raw.publish(channel, cipher.encrypt(JSON.stringify({ id: 'x' })));
      // An event in clear, or sealed with a key this deployment does not hold, is no event of ours.
      await raw.publish(channel, JSON.stringify(event(98)));
      await raw.publish(channel, new FieldCipher(randomBytes(32)).encrypt(JSON.stringify(event(97))));
    } finally {
      raw.disconnect();
    }
    await b.publish(event(99, 'acme'));
    expect(await received).toEqual([event(99, 'acme')]);
  });

  it('stops delivering to a listener that unsubscribed', async () => {
    const early: PlatformEvent[] = [];
    const stop = a.subscribe((e) => early.push(e));
    const first = collect(a, 1);
    await b.publish(event(1));
    await first;
    stop();
    const second = collect(a, 1);
    await b.publish(event(2));
    await second;
    expect(early.map((e) => e.id)).toEqual(['evt_1']);
  });

  it('closes cleanly and ignores publishes after close', async () => {
    const c = await RedisEventBus.connect(REDIS_URL!, cipher, logger, channel);
    await c.close();
    await expect(c.publish(event(3))).resolves.toBeUndefined();
    await c.close();
  });

  it('fails the start with a readable error when Redis is unreachable', async () => {
    await expect(RedisEventBus.connect('redis://127.0.0.1:1', cipher, logger, channel)).rejects.toThrow(/Cannot connect the event bus to Redis/);
  });
});
