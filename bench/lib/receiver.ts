import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  url: string;
  caFile: string;
  /** Arrival times (ms) of each distinct delivery, by X-Webhook-Id + subscription path. */
  arrivals: number[];
  close(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1, made with openssl into `dir`. */
export function makeCertificate(dir: string): { keyFile: string; certFile: string } {
  const keyFile = join(dir, 'receiver-key.pem');
  const certFile = join(dir, 'receiver-cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], {
    stdio: 'ignore',
  });
  return { keyFile, certFile };
}

/** A local HTTPS webhook receiver answering 204 at once; counts each delivery once (receivers deduplicate by X-Webhook-Id). */
export async function startReceiver(dir: string): Promise<Receiver> {
  const { keyFile, certFile } = makeCertificate(dir);
  const seen = new Set<string>();
  const arrivals: number[] = [];
  const server = https.createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const key = `${req.url}|${req.headers['x-webhook-id']}`;
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
