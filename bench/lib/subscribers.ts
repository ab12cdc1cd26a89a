import { readFileSync } from 'node:fs';
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

/**
 * `count` graphql-ws clients, each on its own WebSocket, subscribed to the tenant's message events; spread
 * round robin over `wsUrls` (one URL per gateway process).
 */
export async function connectSubscribers(wsUrls: string[], token: string, count: number): Promise<Subscribers> {
  const receipts: Subscribers['receipts'] = new Map();
  const errors: string[] = [];
  const clients: Client[] = [];
  const connected: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    let onConnected!: () => void;
    let onFailed!: (err: unknown) => void;
    connected.push(new Promise<void>((resolve, reject) => ((onConnected = resolve), (onFailed = reject))));
    const client = createClient({
      url: wsUrls[i % wsUrls.length],
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

/**
 * Why `count` client sockets to `gateways` processes would not fit on this machine, or undefined when they fit:
 * each socket is a file descriptor here and in its gateway (children inherit this process's limit, which Node
 * raises to the hard limit at start), and each connection to one gateway takes an ephemeral port of its own.
 */
export function socketHeadroomProblem(count: number, gateways: number): string | undefined {
  const limit = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? Infinity);
  // Headroom for the process's own files, database and HTTP connections.
  if (limit < count + 1024) return `open-file limit ${limit} < ${count + 1024} (raise it with ulimit -n)`;
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const perGateway = Math.ceil(count / gateways);
  if (high - low + 1 < perGateway + 1024) return `ephemeral port range ${low}-${high} is smaller than ${perGateway + 1024} (net.ipv4.ip_local_port_range)`;
  return undefined;
}
