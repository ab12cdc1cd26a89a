import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface Subscribers {
  count: number;
  /** Receipt times (ms) per event id, one entry per subscriber that got it. */
  receipts: Map<string, { timestamp: number; received: number[] }>;
  errors: string[];
  close(): Promise<void>;
}

const EVENTS = 'subscription { events(types: [MESSAGE_SENT, MESSAGE_DELIVERED]) { id type timestamp } }';

/** `count` graphql-ws clients, each on its own WebSocket, subscribed to the tenant's message events. */
export async function connectSubscribers(wsUrl: string, token: string, count: number): Promise<Subscribers> {
  const receipts: Subscribers['receipts'] = new Map();
  const errors: string[] = [];
  const clients: Client[] = [];
  const connected: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    let onConnected!: () => void;
    let onFailed!: (err: unknown) => void;
    connected.push(new Promise<void>((resolve, reject) => ((onConnected = resolve), (onFailed = reject))));
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}`, tenantId: 'demo' },
      on: { connected: () => onConnected(), closed: (event) => onFailed(new Error(`closed ${(event as { code?: number }).code}`)) },
    });
    client.subscribe<{ events: { id: string; timestamp: string } }>(
      { query: EVENTS },
      {
        next: ({ data, errors: errs }) => {
          const received = Date.now();
          if (errs) errors.push(errs[0].message);
          if (!data) return;
          const entry = receipts.get(data.events.id) ?? { timestamp: Date.parse(data.events.timestamp), received: [] };
          entry.received.push(received);
          receipts.set(data.events.id, entry);
        },
        error: (err) => errors.push(String((err as Error)?.message ?? err)),
        complete: () => {},
      },
    );
    clients.push(client);
    // Connect in waves so the handshake burst stays moderate on a small machine.
    if (i % 100 === 99) await Promise.all(connected.slice(i - 99, i + 1));
  }
  await Promise.all(connected);
  return {
    count,
    receipts,
    errors,
    close: async () => {
      await Promise.all(clients.map(async (c) => c.dispose()));
    },
  };
}
