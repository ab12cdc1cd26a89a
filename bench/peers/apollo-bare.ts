import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { IDENTITY_HEADER, required, supergraphWithUrls } from './supergraph';

/**
 * The peer "a team would assemble by default": @apollo/gateway in
 * @apollo/server's standalone server, default settings, plus the minimum to
 * be authorised by the subgraphs (forward the caller's identity header).
 */
interface Context {
  identity?: string;
}

async function main(): Promise<void> {
  const gateway = new ApolloGateway({
    supergraphSdl: supergraphWithUrls(),
    buildService: ({ url }) =>
      new RemoteGraphQLDataSource<Context>({
        url,
        willSendRequest({ request, context }) {
          if (context.identity) request.http?.headers.set(IDENTITY_HEADER, context.identity);
        },
      }),
  });
  const server = new ApolloServer<Context>({ gateway });
  const { url } = await startStandaloneServer(server, {
    listen: { port: Number(required('PORT')), host: '127.0.0.1' },
    context: async ({ req }) => ({ identity: req.headers[IDENTITY_HEADER] as string | undefined }),
  });
  process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
  console.error(`bare apollo gateway at ${url}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
