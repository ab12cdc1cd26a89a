import https from 'node:https';
import { makeCertificate } from '../../scripts/support/certificate';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  url: string;
  caFile: string;
  /** Arrival times (ms) of each distinct delivery, by X-Webhook-Id + subscription path. */
  arrivals: number[];
  close(): Promise<void>;
}

/** A local HTTPS webhook receiver answering 204 at once; counts each delivery once (receivers deduplicate by X-Webhook-Id). */
export async function startReceiver(dir: string): Promise<Receiver> {
  const { key, cert, certFile } = makeCertificate(dir);
  const seen = new Set<string>();
  const arrivals: number[] = [];
  const server = https.createServer({ key, cert }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const key = `${req.url}|${String(req.headers['x-webhook-id'])}`;
      if (!seen.has(key)) {
        seen.add(key);
        arrivals.push(Date.now());
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caFile: certFile,
    arrivals,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
