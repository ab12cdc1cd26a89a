import { createElement } from 'react';
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

createRoot(document.getElementById('explorer')!).render(
  createElement(GraphiQL, {
    fetcher,
    defaultHeaders: DEFAULT_HEADERS,
    defaultQuery: DEFAULT_QUERY,
    defaultEditorToolsVisibility: 'headers',
    // Tokens stay out of localStorage.
    shouldPersistHeaders: false,
  }),
);
