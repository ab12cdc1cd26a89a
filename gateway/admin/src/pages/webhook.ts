import { gql } from '../api';
import { badge, fill, h, table, timeElement, type Child } from '../dom';
import { busy, errorLine, heading, section, showError, statusLine, type PageContext } from '../page';
import { WEBHOOK_FIELDS, newSecret, type Delivery, type Webhook } from '../types';

const DELIVERY_FIELDS =
  'id eventId eventType payload status attemptCount nextAttemptAt createdAt attempts { attempt at statusCode durationMs success error responseSnippet signature }';
/** While a retry is pending, the log is re-read this often so new attempts show up. */
const PENDING_REFRESH_MS = 3000;
const RECOVERY_FIELDS = 'id status events error';
const RECOVERY_POLL_MS = 1000;
const DAY_MS = 86_400_000;
type Recovery = { id: string; status: 'running' | 'done' | 'failed'; events: number; error: string | null };

/** A time as a datetime-local input shows it: local wall-clock time, to the minute. */
function localInput(at: Date): string {
  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** One subscription: its health, actions (test event, recovery, disable/re-enable, rotate secret, delete) and delivery log. */
export async function webhookPage(ctx: PageContext, id: string): Promise<void> {
  const title = heading('Subscription');
  const details = h('div');
  const actions = h('div', { class: 'actions' });
  const result = statusLine();
  const actionError = errorLine();
  const log = h('div', { class: 'deliveries' });
  const logError = errorLine();
  let webhook: Webhook | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  ctx.onLeave(() => clearTimeout(timer));

  async function loadWebhook(): Promise<void> {
    const data = await gql<{ webhook: Webhook }>(`query ($id: ID!) { webhook(id: $id) { ${WEBHOOK_FIELDS} } }`, { id });
    if (!ctx.active()) return;
    webhook = data.webhook;
    title.textContent = `Subscription ${webhook.url}`;
    fill(details, describe(webhook));
    updateActions(webhook);
  }

  async function loadDeliveries(): Promise<void> {
    clearTimeout(timer);
    try {
      const { webhookDeliveries } = await gql<{ webhookDeliveries: { data: Delivery[]; pagination: { total: number } } }>(
        `query ($id: ID!) { webhookDeliveries(webhookId: $id, limit: 50) { data { ${DELIVERY_FIELDS} } pagination { total } } }`,
        { id },
      );
      if (!ctx.active()) return;
      logError.textContent = '';
      renderDeliveries(webhookDeliveries.data, webhookDeliveries.pagination.total);
      if (webhookDeliveries.data.some((d) => d.status === 'pending')) {
        timer = setTimeout(() => void refresh(), PENDING_REFRESH_MS);
      }
    } catch (err) {
      showError(logError, err);
    }
  }

  async function refresh(): Promise<void> {
    try {
      await loadWebhook();
    } catch (err) {
      showError(actionError, err);
    }
    await loadDeliveries();
  }

  /** Re-renders the log, keeping open entries open and the focus where it was. */
  function renderDeliveries(deliveries: Delivery[], total: number): void {
    const open = new Set([...log.querySelectorAll<HTMLDetailsElement>('details[open]')].map((d) => d.dataset.deliveryId));
    const focused = (document.activeElement as HTMLElement | null)?.closest<HTMLDetailsElement>('details')?.dataset.deliveryId;
    if (deliveries.length === 0) {
      fill(log, h('p', null, 'No deliveries yet. Send a test event to make one.'));
      return;
    }
    fill(
      log,
      h(
        'p',
        { class: 'muted' },
        `${total} deliver${total === 1 ? 'y' : 'ies'}, newest first${total > deliveries.length ? ` (showing ${deliveries.length})` : ''}.`,
      ),
      h(
        'ul',
        { class: 'delivery-list' },
        deliveries.map((d) => h('li', null, deliveryEntry(d, open.has(d.id)))),
      ),
    );
    if (focused) log.querySelector<HTMLElement>(`details[data-delivery-id="${CSS.escape(focused)}"] > summary`)?.focus();
  }

  // Built once and updated in place, so a refresh never takes the focus away from a control.
  const type = h('select', { id: 'test-type', name: 'type' });
  const sendButton = h('button', { type: 'submit' }, 'Send test event');
  const sendHint = h('p', { class: 'hint' });
  const test = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (event: SubmitEvent) => {
        event.preventDefault();
        await act(sendButton, async () => {
          const { sendTestEvent: r } = await gql<{
            sendTestEvent: { eventType: string; success: boolean; statusCode: number | null; durationMs: number; error: string | null; deliveryStatus: string };
          }>('mutation ($id: ID!, $type: String) { sendTestEvent(id: $id, type: $type) { eventType success statusCode durationMs error deliveryStatus } }', {
            id,
            type: type.value,
          });
          const answer = r.statusCode === null ? 'no answer' : `HTTP ${r.statusCode}`;
          return `Test event ${r.eventType}: ${r.success ? 'delivered' : 'failed'} (${answer} in ${r.durationMs} ms${r.error ? `, ${r.error}` : ''}); delivery ${r.deliveryStatus}.`;
        });
      },
    },
    h('label', { for: 'test-type' }, 'Event type'),
    type,
    sendButton,
    sendHint,
  );

  // Recovery: re-send, with their original ids, the events of a window the endpoint never received.
  const since = h('input', { id: 'recover-since', name: 'since', type: 'datetime-local', required: true, value: localInput(new Date(Date.now() - DAY_MS)) });
  const everything = h('input', { id: 'recover-all', name: 'all', type: 'checkbox' });
  const recoverButton = h('button', { type: 'submit' }, 'Re-send missed events');
  const recover = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: async (event: SubmitEvent) => {
        event.preventDefault();
        await act(recoverButton, async () => {
          const { recoverWebhook: started } = await gql<{ recoverWebhook: Recovery }>(
            `mutation ($id: ID!, $input: RecoverWebhookInput!) { recoverWebhook(id: $id, input: $input) { ${RECOVERY_FIELDS} } }`,
            { id, input: { since: new Date(since.value).toISOString(), all: everything.checked } },
          );
          let recovery = started;
          while (recovery.status === 'running' && ctx.active()) {
            result.textContent = `Re-sending: ${recovery.events} event${recovery.events === 1 ? '' : 's'} so far…`;
            await new Promise((resolve) => setTimeout(resolve, RECOVERY_POLL_MS));
            ({ webhookRecovery: recovery } = await gql<{ webhookRecovery: Recovery }>(
              `query ($id: ID!, $webhookId: ID!) { webhookRecovery(id: $id, webhookId: $webhookId) { ${RECOVERY_FIELDS} } }`,
              { id: recovery.id, webhookId: id },
            ));
          }
          if (recovery.status === 'failed') throw new Error(`Recovery stopped after ${recovery.events} events: ${recovery.error ?? 'failed'}`);
          return `Recovery done: ${recovery.events} event${recovery.events === 1 ? ' queued again with its original id' : 's queued again with their original ids'}.`;
        });
      },
    },
    h('label', { for: 'recover-since' }, 'Missed since'),
    since,
    h('label', { class: 'check' }, everything, ' every event of the window, delivered or not'),
    recoverButton,
  );

  const toggle = h('button', {
    type: 'button',
    onclick: () =>
      act(toggle, async () => {
        const status = webhook?.status === 'active' ? 'disabled' : 'active';
        await gql('mutation ($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { id status } }', { id, input: { status } });
        return status === 'active' ? 'Subscription re-enabled: new events will be delivered.' : 'Subscription disabled: pending retries were cancelled.';
      }),
  });

  const secretOut = h('div', { role: 'status', class: 'once' });
  const rotate = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: () =>
        act(rotate, async () => {
          const secret = newSecret();
          await gql('mutation ($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { id } }', { id, input: { secret } });
          fill(
            secretOut,
            h(
              'p',
              null,
              'New signing secret, shown only now. Deliveries from now on are signed with it; the previous secret signs beside it until the overlap (WEBHOOK_SECRET_OVERLAP) ends:',
            ),
            h('p', null, h('code', { class: 'secret', 'data-secret': '' }, secret)),
          );
          return 'Secret rotated.';
        }),
    },
    'Rotate secret',
  );

  const remove = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        if (!confirm(`Delete the subscription to ${webhook?.url ?? id} and its delivery log?`)) return;
        await act(remove, async () => {
          await gql('mutation ($id: ID!) { deleteWebhook(id: $id) }', { id });
          location.hash = '#/webhooks';
          return 'Deleted.';
        });
      },
    },
    'Delete subscription',
  );

  fill(
    actions,
    h('h3', null, 'Send a test event'),
    test,
    h('h3', null, 'Re-send what this endpoint missed'),
    recover,
    h('h3', null, 'Status and secret'),
    h('div', { class: 'button-row' }, toggle, rotate, remove),
    secretOut,
  );

  function updateActions(w: Webhook): void {
    const chosen = type.value;
    fill(
      type,
      w.events.map((e) => h('option', { value: e }, e)),
    );
    if (w.events.includes(chosen)) type.value = chosen;
    sendButton.disabled = w.status !== 'active';
    sendHint.textContent = w.status === 'active' ? '' : 'Re-enable the subscription to send test events.';
    recoverButton.disabled = w.status !== 'active';
    toggle.textContent = w.status === 'active' ? 'Disable' : 'Re-enable';
    toggle.className = w.status === 'active' ? 'secondary' : '';
  }

  /** Runs an action, reports its outcome in the status line, and re-reads the subscription and its log. */
  async function act(button: HTMLButtonElement, action: () => Promise<string>): Promise<void> {
    actionError.textContent = '';
    result.textContent = '';
    try {
      const message = await busy(button, action);
      if (!ctx.active()) return;
      result.textContent = message;
      await refresh();
    } catch (err) {
      showError(actionError, err);
    }
  }

  const refreshButton = h('button', { type: 'button', class: 'secondary', onclick: () => busy(refreshButton, loadDeliveries) }, 'Refresh');
  fill(
    ctx.main,
    h('p', null, h('a', { href: '#/webhooks' }, '← All subscriptions')),
    title,
    details,
    section('Actions', 'actions-title', actions, result, actionError),
    section('Delivery attempts', 'log-title', h('div', { class: 'button-row' }, refreshButton), logError, log),
  );
  ctx.onEvent((event) => {
    if (event.type === 'WEBHOOK_DISABLED' && event.data.webhookId === id) void refresh();
  });
  await loadWebhook();
  await loadDeliveries();
}

function describe(w: Webhook): HTMLElement {
  const rows: Array<[string, Child]> = [
    ['Status', badge(w.status)],
    ['Endpoint', h('span', { class: 'url' }, w.url)],
    [
      'Events',
      h(
        'ul',
        { class: 'tags' },
        w.events.map((e) => h('li', null, e)),
      ),
    ],
    [
      'Failure streak',
      w.failureStreak > 0 ? h('strong', { class: 'bad' }, `${w.failureStreak} failed attempt${w.failureStreak === 1 ? '' : 's'} in a row`) : 'none',
    ],
    ['Last failure', w.lastFailureAt ? [timeElement(w.lastFailureAt), ' — ', w.lastFailureError ?? ''] : '—'],
    ['Created', timeElement(w.createdAt)],
    ['Id', h('code', null, w.id)],
  ];
  if (w.status === 'disabled') rows.splice(1, 0, ['Disabled', [timeElement(w.disabledAt), ' — ', w.disabledReason ?? '']]);
  return h(
    'dl',
    { class: 'facts', id: 'webhook-facts' },
    rows.map(([label, value]) => [h('dt', null, label), h('dd', null, value)]),
  );
}

function deliveryEntry(d: Delivery, open: boolean): HTMLDetailsElement {
  const last = d.attempts[d.attempts.length - 1];
  const summary = [
    h('span', { class: 'event-type' }, d.eventType),
    ' ',
    badge(d.status),
    ` ${d.attemptCount} attempt${d.attemptCount === 1 ? '' : 's'}`,
    last ? ` · last: ${last.statusCode === null ? 'no answer' : `HTTP ${last.statusCode}`}` : '',
    ' · ',
    timeElement(d.createdAt),
  ];
  return h(
    'details',
    { 'data-delivery-id': d.id, open },
    h('summary', null, summary),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Event id'),
      h('dd', null, h('code', null, d.eventId)),
      h('dt', null, 'Next attempt'),
      h('dd', null, d.nextAttemptAt ? timeElement(d.nextAttemptAt) : '—'),
    ),
    d.attempts.length === 0
      ? h('p', null, 'No attempt made yet.')
      : table(
          `Attempts of event ${d.eventId}`,
          [
            { label: '#', cell: (a) => String(a.attempt) },
            { label: 'At', cell: (a) => timeElement(a.at) },
            { label: 'Status code', cell: (a) => (a.statusCode === null ? 'none' : String(a.statusCode)) },
            { label: 'Duration', cell: (a) => `${a.durationMs} ms` },
            { label: 'Result', cell: (a) => badge(a.success ? 'succeeded' : 'failed') },
            { label: 'Error', cell: (a) => a.error ?? '—' },
            { label: 'Response', cell: (a) => (a.responseSnippet ? h('code', { class: 'wrap' }, a.responseSnippet) : '—') },
            { label: 'X-Webhook-Signature', cell: (a) => (a.signature ? h('code', { class: 'wrap signature' }, a.signature) : 'not sent') },
          ],
          d.attempts,
          (a) => ({ 'data-attempt': a.attempt }),
        ),
    h('p', { class: 'payload-label' }, 'Payload (the exact body sent and signed):'),
    h('pre', { class: 'payload', tabindex: '0', 'aria-label': `Payload of event ${d.eventId}` }, d.payload),
  );
}
