import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { Logger } from '../logger';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** How a listening server is reached: its scheme, host (`localhost` for a wildcard bind) and port. */
export function serverUrl(server: Server, host: string): string {
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `${server instanceof TlsServer ? 'https' : 'http'}://${shownHost}:${address.port}`;
}

interface ListenOptions {
  /** How long `close` waits for the requests in flight before it cuts their connections (default: no bound). */
  graceMs?: number;
  /** Run by `close` before the drain: what would keep connections open (WebSocket clients). */
  beforeDrain?: () => Promise<void>;
  /** Run by `close` after the drain: what the requests in flight needed until they were answered. */
  afterDrain?: () => Promise<void>;
  /** Where a drain that ran out of grace is reported. */
  logger?: Logger;
}

/** Binds a server and returns how to reach it and how to stop it (draining first: see `drainable`). */
export async function listen(server: Server, host: string, port: number, options: ListenOptions = {}): Promise<RunningServer> {
  const drain = drainable(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: serverUrl(server, host),
    port: address.port,
    close: async () => {
      await options.beforeDrain?.();
      const cut = await drain(options.graceMs ?? Infinity);
      if (cut > 0) options.logger?.warn({ requests: cut, graceMs: options.graceMs }, 'shutdown grace over: connections of requests still in flight cut');
      await options.afterDrain?.();
    },
  };
}

/**
 * A stop that answers every request it carried out, so a restart never leaves a client guessing whether its
 * request was done. The listener closes (new connections are refused, and a refused request was never
 * begun); an idle kept-alive connection is destroyed, not half-closed, so a request arriving on it is never
 * read (a half-closed one would still be read and carried out, its answer lost); a request in flight is
 * answered with `Connection: close`, and its connection closes once the answer is out. Resolves once every
 * connection is gone, with the number of requests whose connections were cut when `graceMs` ran out.
 */
function drainable(server: Server): (graceMs: number) => Promise<number> {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  // Ahead of the application's listener, so the header is set before any handler can answer.
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    inFlight.add(res);
    if (draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      inFlight.delete(res);
      // An answer whose headers had gone out before the drain left its connection kept alive: close it now.
      if (draining) server.closeIdleConnections();
    });
  });
  return async (graceMs) => {
    draining = true;
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    // close() stops listening and destroys the idle connections; its callback waits for all the others.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = Number.isFinite(graceMs) ? new Promise<'over'>((resolve) => (timer = setTimeout(() => resolve('over'), graceMs))) : undefined;
    const outcome = await Promise.race([closed, ...(graceOver ? [graceOver] : [])]);
    clearTimeout(timer);
    if (outcome !== 'over') return 0;
    const cut = inFlight.size;
    server.closeAllConnections();
    await closed;
    return cut;
  };
}
