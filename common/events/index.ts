import type { Config } from '../config';
import { FieldCipher } from '../crypto';
import type { Logger } from '../logger';
import type { Secrets } from '../secrets';
import { InProcessEventBus, type EventBus } from './bus';
import { RedisEventBus } from './redis-bus';

export * from './types';
export type { EventBus } from './bus';

/**
 * The process's live event bus: in-process unless REDIS_URL is set, then Redis pub/sub shared by all instances,
 * its messages sealed with the encryption key (the previous keys still open them during a rotation).
 */
export async function createEventBus(
  config: Pick<Config, 'REDIS_URL' | 'REDIS_EVENTS_CHANNEL' | 'PREVIOUS_ENCRYPTION_KEYS'>,
  secrets: Pick<Secrets, 'encryptionKey'>,
  logger: Logger,
): Promise<EventBus> {
  if (config.REDIS_URL) {
    const cipher = new FieldCipher(secrets.encryptionKey, config.PREVIOUS_ENCRYPTION_KEYS);
    return RedisEventBus.connect(config.REDIS_URL, cipher, logger, config.REDIS_EVENTS_CHANNEL);
  }
  return new InProcessEventBus();
}
