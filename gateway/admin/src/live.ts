import { createClient, type Client } from 'graphql-ws';
import type { Session } from './session';

/** An event as the `events` subscription sends it (the webhook body, type in upper snake case). */
export interface LiveEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export type LiveState = 'connecting' | 'live' | 'offline' | 'refused';
type Listener = (event: LiveEvent) => void;

/**
 * One graphql-ws connection per signed-in tab, authenticated in
 * connection_init (docs/api.md §3), carrying one `events` subscription that
 * every page listens to. Reconnects by itself, except when the token is refused.
 */
export class Live {
  private readonly client: Client;
  private readonly listeners = new Set<Listener>();
  private stop: (() => void) | undefined;

  constructor(
    session: Session,
    private readonly onState: (state: LiveState, detail?: string) => void,
    onUnauthenticated: (reason: string) => void,
  ) {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    this.client = createClient({
      url: `${scheme}://${location.host}/graphql`,
      connectionParams: () => ({ authorization: `Bearer ${session.token}`, ...(session.tenantId ? { tenantId: session.tenantId } : {}) }),
      retryAttempts: Infinity,
      shouldRetry: (event) => !isRefusal(event),
      on: {
        connecting: () => onState('connecting'),
        connected: () => onState('live'),
        closed: (event) => {
          if (isRefusal(event)) {
            const reason = (event as CloseEvent).reason;
            if ((event as CloseEvent).code === 4401) onUnauthenticated(reason);
            else onState('refused', reason);
          } else onState('offline');
        },
      },
    });
  }

  start(): void {
    this.stop = this.client.subscribe<{ events: LiveEvent }>(
      { query: 'subscription { events { id type timestamp data } }' },
      {
        next: ({ data }) => {
          if (data?.events) for (const listener of this.listeners) listener(data.events);
        },
        error: (err) => this.onState('refused', Array.isArray(err) ? err.map((e) => e.message).join('; ') : String((err as CloseEvent).reason ?? err)),
        complete: () => {},
      },
    );
  }

  /** Listens to every event; returns the function that stops listening. */
  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.stop?.();
    this.listeners.clear();
    await this.client.dispose();
  }
}

/** Close codes that retrying cannot fix: a refused token or tenant (see docs/subscriptions.md). */
function isRefusal(event: unknown): boolean {
  const code = (event as CloseEvent | undefined)?.code;
  return code === 4401 || code === 4403 || code === 4400;
}
