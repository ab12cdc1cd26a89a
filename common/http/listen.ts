import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as TlsServer } from 'node:tls';

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

/** Binds a server and returns how to reach it and how to stop it (draining first). */
export async function listen(server: Server, host: string, port: number, beforeClose?: () => Promise<void>): Promise<RunningServer> {
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
      if (beforeClose) await beforeClose();
      if (server.listening) {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      server.closeAllConnections?.();
    },
  };
}
