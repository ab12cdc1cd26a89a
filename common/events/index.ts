import type { Config } from '../config';
import type { Logger } from '../logger';
import { InProcessEventBus, type EventBus } from './bus';

export * from './types';
export type { EventBus } from './bus';

/** The process's live event bus: in-process unless REDIS_URL is set (Redis pub/sub: see issue on subscriptions). */
export async function createEventBus(config: Pick<Config, 'REDIS_URL'>, _logger: Logger): Promise<EventBus> {
  return new InProcessEventBus();
}
