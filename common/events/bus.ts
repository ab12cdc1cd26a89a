import { EventEmitter } from 'node:events';
import type { PlatformEvent } from './types';

/**
 * Live fan-out of committed events to whoever listens in this deployment
 * (GraphQL subscriptions). Not the durable path: webhooks read the outbox.
 * In-process by default; Redis pub/sub when REDIS_URL is set, so a subscriber
 * on gateway A hears an event committed on instance B.
 */
export interface EventBus {
  publish(event: PlatformEvent): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(listener: (event: PlatformEvent) => void): () => void;
  close(): Promise<void>;
}

export class InProcessEventBus implements EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every GraphQL subscription is a listener; the default cap of 10 is a leak warning, not a limit we want.
    this.emitter.setMaxListeners(0);
  }

  async publish(event: PlatformEvent): Promise<void> {
    this.emitter.emit('event', event);
  }

  subscribe(listener: (event: PlatformEvent) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
