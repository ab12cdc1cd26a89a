import type { Config } from '../config';
import type { Logger } from '../logger';
import { InProcessEventBus, type EventBus } from './bus';
import { RedisEventBus } from './redis-bus';

export * from './types';
export type { EventBus } from './bus';

/** The process's live event bus: in-process unless REDIS_URL is set, then Redis pub/sub shared by all instances. */
export async function createEventBus(config: Pick<Config, 'REDIS_URL' | 'REDIS_EVENTS_CHANNEL'>, logger: Logger): Promise<EventBus> {
  if (config.REDIS_URL) return RedisEventBus.connect(config.REDIS_URL, logger, config.REDIS_EVENTS_CHANNEL);
  return new InProcessEventBus();
}
