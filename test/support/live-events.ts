import WebSocket from 'ws';
import { createClient } from 'graphql-ws';

/** A live `events` subscription of the load tests: what it heard, and how often it (re)connected. */
export interface LiveEvents {
  /** Each MESSAGE_DELIVERED / MESSAGE_FAILED event heard, with when. */
  heard: { id: string; at: number }[];
  /** How often the socket connected: 1, plus one per reconnection. */
  connections(): number;
  /** Errors that ended the subscription (the client does not subscribe again after one). */
  errors: string[];
  dispose(): void | Promise<void>;
}

/**
 * A graphql-ws subscriber through `base` (the load balancer) that reconnects whenever its socket drops, as a
 * browser tab would, and subscribes again on the new socket. Resolves once it is connected.
 */
export async function liveEvents(base: string, token: string, retryAttempts: number): Promise<LiveEvents> {
  let connections = 0;
  const heard: LiveEvents['heard'] = [];
  const errors: string[] = [];
  const client = createClient({
    url: `${base.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: false,
    retryAttempts,
    shouldRetry: () => true,
    retryWait: () => new Promise((resolve) => setTimeout(resolve, 200)),
    on: { connected: () => void connections++ },
    onNonLazyError: () => {},
  });
  client.subscribe<{ events: { id: string } }>(
    { query: 'subscription { events(types: [MESSAGE_DELIVERED, MESSAGE_FAILED]) { id } }' },
    {
      next: (result) => result.data && heard.push({ id: result.data.events.id, at: Date.now() }),
      error: (err) => errors.push(err instanceof Error ? err.message : JSON.stringify(err)),
      complete: () => {},
    },
  );
  for (const deadline = Date.now() + 30_000; connections === 0;) {
    if (Date.now() > deadline) throw new Error(`the subscriber did not connect to ${base} in 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { heard, connections: () => connections, errors, dispose: () => client.dispose() };
}
