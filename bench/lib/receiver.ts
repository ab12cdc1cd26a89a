import https from 'node:https';
import { makeCertificate } from '../../scripts/support/certificate';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';

/** Paths under this prefix answer only after SLOW_ANSWER_MS (the slow endpoint of the webhook bench). */
export const SLOW_PREFIX = '/slow/';
const SLOW_ANSWER_MS = 2000;

export interface Receiver {
  url: string;
  caFile: string;
  /** Answer time (ms) and path of each distinct delivery, by X-Webhook-Id + subscription path. */
  arrivals: Array<{ at: number; path: string }>;
  /** TLS connections accepted so far. */
  connections(): number;
  /** Answers wait (and are not counted) until `release`, so deliveries pile up in the database meanwhile. */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

/**
 * A local HTTPS webhook receiver answering 204 at once (after SLOW_ANSWER_MS
 * under SLOW_PREFIX); counts each delivery once (receivers deduplicate by X-Webhook-Id).
 */
export async function startReceiver(dir: string): Promise<Receiver> {
  const { key, cert, certFile } = makeCertificate(dir);
  const seen = new Set<string>();
  const arrivals: Receiver['arrivals'] = [];
  let held: Array<() => void> | undefined;
  let connections = 0;
  const answer = (path: string, id: string, res: ServerResponse) => {
    const key = `${path}|${id}`;
    if (!seen.has(key)) {
      seen.add(key);
      arrivals.push({ at: Date.now(), path });
    }
    res.writeHead(204).end();
  };
  const server = https.createServer({ key, cert }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      const reply = () => answer(path, String(req.headers['x-webhook-id']), res);
      const delayed = path.startsWith(SLOW_PREFIX) ? () => setTimeout(reply, SLOW_ANSWER_MS) : reply;
      if (held) held.push(delayed);
      else delayed();
    });
  });
  server.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caFile: certFile,
    arrivals,
    connections: () => connections,
    hold: () => {
      held ??= [];
    },
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      for (const reply of waiting) reply();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
