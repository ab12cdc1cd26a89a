import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../common/config';
import { createGatewayServer } from './server';

describe('createGatewayServer', () => {
  it('keeps idle connections longer than clients and proxies do, and says so in the Keep-Alive hint', async () => {
    const server = createGatewayServer((_req, res) => res.end('ok'), loadConfig({}));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      await res.text();
      // Node's default (timeout=5) let a client reuse a connection the server was closing: ECONNRESET.
      expect(res.headers.get('keep-alive')).toBe('timeout=65');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
