import { createElement, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher, type Fetcher } from '@graphiql/toolkit';
import { Kind } from 'graphql';
import 'graphiql/style.css';
import './explorer.css';

// Queries and mutations go to POST /graphql, subscriptions over graphql-ws on the same path.
// The headers editor's contents travel as HTTP headers and as the connection_init payload
// (the gateway reads Authorization and X-Tenant-Id there too).
const graphiqlFetcher = createGraphiQLFetcher({
  url: `${location.origin}/graphql`,
  subscriptionUrl: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
});

// The toolkit picks WebSocket by the operation's name, and GraphiQL leaves the name out when
// the document holds one operation, which sent a named subscription over HTTP: name it here.
const fetcher: Fetcher = (params, options) => {
  const operations = options?.documentAST?.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION) ?? [];
  const only = operations.length === 1 ? operations[0].name?.value : undefined;
  return graphiqlFetcher(params.operationName || !only ? params : { ...params, operationName: only }, options);
};

const DEFAULT_HEADERS = `{
  "Authorization": "Bearer <paste an access token: npm run token>",
  "X-Tenant-Id": "demo"
}`;

const DEFAULT_QUERY = `# Paste a token in the Headers tab below, then run (Ctrl-Enter).
query Messages {
  messages(limit: 5) {
    data { id status channel createdAt }
  }
}
`;

/** The Authorization header of the headers editor's text, once it holds a token rather than the placeholder. */
function pastedAuthorization(headers: string): string | undefined {
  try {
    const parsed = JSON.parse(headers) as Record<string, unknown>;
    const value = Object.entries(parsed).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
    return typeof value === 'string' && /^Bearer [^<\s]+$/.test(value) ? value : undefined;
  } catch {
    return undefined; // Half-typed JSON: wait for the rest.
  }
}

// No schema request before a token is pasted (it could only answer 401, which the Docs pane shows as an
// error); each new token fetches the schema again, with the headers then in the editor.
function Explorer() {
  const [authorization, setAuthorization] = useState(() => pastedAuthorization(DEFAULT_HEADERS));
  const fetcherForToken = useMemo<Fetcher>(() => (params, options) => fetcher(params, options), [authorization]);
  return createElement(GraphiQL, {
    fetcher: fetcherForToken,
    schema: authorization ? undefined : null,
    onEditHeaders: (headers: string) => setAuthorization(pastedAuthorization(headers)),
    defaultHeaders: DEFAULT_HEADERS,
    defaultQuery: DEFAULT_QUERY,
    defaultEditorToolsVisibility: 'headers',
    // Tokens stay out of localStorage.
    shouldPersistHeaders: false,
  });
}

createRoot(document.getElementById('explorer')!).render(createElement(Explorer));
