import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import type { RequestListener } from 'node:http';
import type { Config } from '../../common/config';
import { errorBody } from '../../common/errors';

/** Node's own limit sits a little above the per-request deadline, which then answers first with the contract body. */
const NODE_TIMEOUT_MARGIN_MS = 5_000;
const HEADERS_TIMEOUT_MS = 20_000;
/**
 * How long an idle keep-alive connection stays open: longer than proxies keep
 * theirs (60 s is the usual load-balancer default), and clients that read the
 * Keep-Alive hint (undici) close a second or two before it. Either way the peer
 * that reuses a connection is the one that closes it; with Node's 5 s a request
 * sent just as the server closed the connection failed with ECONNRESET.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * The gateway's listener: HTTPS with TLS 1.3 as the minimum when
 * TLS_CERT_FILE/TLS_KEY_FILE are set, plain HTTP otherwise (for a TLS
 * proxy in front). Requests the HTTP parser refuses (bad header bytes,
 * oversized headers) still get the contract's JSON body.
 */
export function createGatewayServer(app: RequestListener, config: Config): http.Server {
  const server: http.Server = config.TLS_CERT_FILE
    ? https.createServer({ cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE!), minVersion: 'TLSv1.3' }, app)
    : http.createServer(app);
  server.requestTimeout = config.REQUEST_TIMEOUT_MS + NODE_TIMEOUT_MARGIN_MS;
  server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, server.requestTimeout);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket));
  return server;
}

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  const [status, reason] = timedOut ? [503, 'Service Unavailable'] : [400, 'Bad Request'];
  const body = JSON.stringify(
    timedOut
      ? errorBody('SERVICE_UNAVAILABLE', 'The request was not received in time')
      : errorBody('VALIDATION_ERROR', err.code === 'HPE_HEADER_OVERFLOW' ? 'The request headers are too large' : 'The request is not valid HTTP'),
  );
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}
