import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import { authHeaders, type ConnectionOptions } from './graphql';
import type { paths } from './rest/openapi';

export type { paths } from './rest/openapi';
export type RestClient = Client<paths>;

/**
 * The REST API (`/v1`, `/api/ehr`, …) typed from schema/openapi.json: paths,
 * parameters, bodies and answers are checked at compile time. A thin
 * openapi-fetch client: `GET`, `POST`, … resolve with `{ data }` or
 * `{ error }` (the API's error body, docs/api.md) and the raw `response`.
 */
export function createRestClient(options: ConnectionOptions): RestClient {
  const client = createFetchClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: options.fetch });
  const auth: Middleware = {
    async onRequest({ request }) {
      for (const [name, value] of Object.entries(await authHeaders(options))) request.headers.set(name, value);
      return request;
    },
  };
  client.use(auth);
  return client;
}
