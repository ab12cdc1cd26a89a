import http from 'node:http';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { IDENTITY_HEADER, required, supergraphWithUrls } from './supergraph';

/** The Hive Gateway runtime with default settings, forwarding the caller's identity header. */
async function main(): Promise<void> {
  const gateway = createGatewayRuntime({
    supergraph: supergraphWithUrls(),
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => ({ [IDENTITY_HEADER]: request.headers.get(IDENTITY_HEADER) }),
    },
  });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the runtime is a request listener that answers its own errors
  const server = http.createServer(gateway);
  server.listen(Number(required('PORT')), '127.0.0.1', () => console.error('hive gateway listening'));
  process.on('SIGTERM', () => {
    server.close();
    void Promise.resolve(gateway.dispose()).then(() => process.exit(0));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
