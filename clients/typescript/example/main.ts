// A tiny page on the client package: sign in with a token, list messages (GraphQL),
// and keep each row's status live (graphql-ws subscription). `npm run example` serves it.
import { createGraphQLClient, createSubscriptionClient, MessagesDocument, MessageStatusChangedDocument, type SubscriptionClient } from '../src';

const form = document.querySelector<HTMLFormElement>('#sign-in')!;
const state = document.querySelector<HTMLElement>('#state')!;
const rows = document.querySelector<HTMLTableSectionElement>('#messages')!;
(form.elements.namedItem('api') as HTMLInputElement).value = new URLSearchParams(location.search).get('api') ?? location.origin;

let live: SubscriptionClient | undefined;

/** The row of a message, created at the top when it is new. */
function row(id: string, patientId: string, channel: string): HTMLTableRowElement {
  let tr = rows.querySelector<HTMLTableRowElement>(`tr[data-message-id="${CSS.escape(id)}"]`);
  if (!tr) {
    tr = document.createElement('tr');
    tr.dataset.messageId = id;
    for (const text of [id, patientId, channel, '']) tr.appendChild(document.createElement('td')).textContent = text;
    rows.prepend(tr);
  }
  return tr;
}

function show(message: { id: string; patientId: string; channel?: string; status: string }): void {
  const tr = row(message.id, message.patientId, message.channel ?? '');
  tr.dataset.status = message.status;
  tr.cells[3].textContent = message.status;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  void connect(new FormData(form));
});

async function connect(data: FormData): Promise<void> {
  const options = { baseUrl: String(data.get('api')), token: String(data.get('token')), tenantId: String(data.get('tenant') ?? '') || undefined };
  await live?.dispose();
  rows.replaceChildren();
  state.textContent = 'Loading…';
  try {
    const { messages } = await createGraphQLClient(options).request(MessagesDocument, { limit: 20 });
    messages.data.slice().reverse().forEach(show);
  } catch (err) {
    state.textContent = `Error: ${(err as Error).message}`;
    return;
  }
  live = createSubscriptionClient({ ...options, onStateChange: (s) => ((state.dataset.state = s), (state.textContent = s === 'connected' ? 'Live' : s)) });
  live.subscribe(
    MessageStatusChangedDocument,
    {},
    {
      next: ({ data, errors }) => {
        if (data) show(data.messageStatusChanged);
        if (errors) state.textContent = `Error: ${errors[0].message}`;
      },
      error: (err) => (state.textContent = `Disconnected: ${err instanceof Error ? err.message : 'closed'}`),
    },
  );
}
