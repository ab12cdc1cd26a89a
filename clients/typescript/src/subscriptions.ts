import { createClient, type Client, type ExecutionResult } from 'graphql-ws';
import { print } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { tokenOf, type ConnectionOptions } from './graphql';

export interface SubscriptionOptions extends Omit<ConnectionOptions, 'fetch'> {
  /** How many reconnects in a row before giving up (default: Infinity; a refused token or tenant never retries). */
  retryAttempts?: number;
  /** First reconnect delay in ms, doubled per attempt up to `maxRetryDelayMs`, with jitter (default 500). */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** A WebSocket implementation where there is no global one (Node < 22: the `ws` package). */
  webSocketImpl?: unknown;
  /** Called with each connection state change, e.g. to show "live" in a page. */
  onStateChange?: (state: 'connecting' | 'connected' | 'closed', detail?: unknown) => void;
}

/** Close codes after which reconnecting cannot help: bad request (4400), forbidden tenant or role (4403). */
const FATAL_CLOSE_CODES = new Set([4400, 4403]);
const closeCode = (event: unknown) => (typeof event === 'object' && event !== null && 'code' in event ? Number(event.code) : undefined);

export interface Observer<T> {
  next(value: T): void;
  error?(error: unknown): void;
  complete?(): void;
}

export interface SubscriptionClient {
  /** Starts a typed subscription; returns the function that stops it. */
  subscribe<TResult, TVariables extends Record<string, unknown>>(
    document: TypedDocumentNode<TResult, TVariables>,
    variables: TVariables,
    observer: Observer<ExecutionResult<TResult>>,
  ): () => void;
  /** Closes the socket and every subscription on it. */
  dispose(): Promise<void>;
  /** The underlying graphql-ws client. */
  raw: Client;
}

/**
 * GraphQL subscriptions over graphql-ws (docs/subscriptions.md). Network drops
 * reconnect with exponential backoff and the subscriptions resume on the new
 * socket. The token is asked for on every connect: when the server closes a
 * session whose token expired (4401, which graphql-ws itself treats as final),
 * each subscription starts again on a new socket with a fresh token, with the
 * same backoff and attempt limit.
 */
export function createSubscriptionClient(options: SubscriptionOptions): SubscriptionClient {
  const base = options.retryDelayMs ?? 500;
  const max = options.maxRetryDelayMs ?? 30_000;
  const attempts = options.retryAttempts ?? Infinity;
  const backoff = (retries: number) => {
    const delay = Math.min(max, base * 2 ** retries);
    return delay / 2 + Math.random() * (delay / 2);
  };
  // Re-authentications since the last accepted connection_init.
  let reauths = 0;
  const url = options.baseUrl.replace(/^http/, 'ws').replace(/\/+$/, '') + '/graphql';
  const client = createClient({
    url,
    webSocketImpl: options.webSocketImpl,
    lazy: true,
    connectionParams: async () => ({ authorization: `Bearer ${await tokenOf(options)}`, ...(options.tenantId ? { tenantId: options.tenantId } : {}) }),
    retryAttempts: attempts,
    retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, backoff(retries))),
    // graphql-ws retries only on network-like closes by default; an expired token (4401) is worth a retry too, with a fresh token.
    shouldRetry: (event) => !FATAL_CLOSE_CODES.has(closeCode(event) ?? 0),
    on: {
      connecting: () => options.onStateChange?.('connecting'),
      connected: () => {
        reauths = 0;
        options.onStateChange?.('connected');
      },
      closed: (event) => options.onStateChange?.('closed', event),
    },
  });
  return {
    raw: client,
    subscribe(document, variables, observer) {
      const payload = { query: print(document), variables };
      let stop: () => void = () => {};
      let stopped = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const start = () => {
        stop = client.subscribe(payload, {
          next: (value) => observer.next(value as never),
          error: (error) => {
            if (!stopped && closeCode(error) === 4401 && reauths < attempts) {
              timer = setTimeout(start, backoff(reauths++));
              return;
            }
            observer.error?.(error);
          },
          complete: () => observer.complete?.(),
        });
      };
      start();
      return () => {
        stopped = true;
        clearTimeout(timer);
        stop();
      };
    },
    dispose: async () => client.dispose(),
  };
}
