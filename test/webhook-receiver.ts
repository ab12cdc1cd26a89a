import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCertificate } from '../scripts/support/certificate';

/**
 * A real HTTPS webhook receiver for tests, with a self-signed certificate for
 * 127.0.0.1/localhost made by openssl. `caFile` is what the platform trusts
 * (WEBHOOK_CA_FILE). Each path answers as its behaviour says (default 200).
 */
interface ReceivedHook {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  at: number;
  /** The TLS connection it came over, numbered from 1 in order of acceptance. */
  connection: number;
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (for timeouts). */
  hang?: boolean;
  /** Answer only once this settles (a slow endpoint the test lets go). */
  after?: Promise<unknown>;
}

export interface Receiver {
  origin: string;
  caFile: string;
  url(path: string): string;
  /** Sets how a path answers; the function sees the number of the request to that path (1-based). */
  behave(path: string, answer: (n: number, hook: ReceivedHook) => Answer): void;
  received(path?: string): ReceivedHook[];
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const dir = mkdtempSync(join(tmpdir(), 'caregraph-receiver-'));
  const { key, cert, certFile } = makeCertificate(dir);
  const hooks: ReceivedHook[] = [];
  const behaviours = new Map<string, (n: number, hook: ReceivedHook) => Answer>();
  const counts = new Map<string, number>();
  const connectionIds = new WeakMap<object, number>();
  let connections = 0;
  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const path = req.url ?? '/';
      const hook: ReceivedHook = { path, headers: req.headers, raw, body, at: Date.now(), connection: connectionIds.get(req.socket) ?? 0 };
      hooks.push(hook);
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      const answer = behaviours.get(path)?.(n, hook) ?? { status: 200, body: 'ok' };
      if (answer.hang) return;
      const reply = () => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? '');
      };
      if (answer.after) void answer.after.then(reply);
      else reply();
    });
  });
  server.on('secureConnection', (socket) => connectionIds.set(socket, ++connections));
  // Idle connections stay open a minute (Node's default is 5 s, which the sender's pool follows): on a loaded
  // machine a pause between deliveries must not replace a connection, or counting connections would not show reuse.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    caFile: certFile,
    url: (path) => `${origin}${path}`,
    behave: (path, answer) => void behaviours.set(path, answer),
    received: (path) => hooks.filter((h) => path === undefined || h.path === path),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a receiver does (see docs/webhooks.md): constant-time comparison of the recomputed signature. */
export function verifySignature(secret: string, raw: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(raw).digest('hex'), 'utf8');
  const given = Buffer.from(header, 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
