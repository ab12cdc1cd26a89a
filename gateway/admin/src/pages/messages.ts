import { gql } from '../api';
import { badge, field, fill, formatTime, h, timeElement } from '../dom';
import type { LiveEvent } from '../live';
import { busy, errorLine, heading, section, showError, statusLine, type PageContext } from '../page';
import { MESSAGE_FIELDS, type Message, type Template } from '../types';

/** Status order: a late event never moves a row backwards (docs/api.md §5). */
const RANK: Record<string, number> = { scheduled: 0, queued: 1, sending: 2, sent: 3, delivered: 4, failed: 4, cancelled: 4 };
/** Until a worker claims it, a message can be taken back. */
const CANCELLABLE = new Set(['scheduled', 'queued']);
const FEED_LIMIT = 50;

/**
 * The live message log: the latest messages, kept current by the `events`
 * subscription (new messages appear and statuses change without reload),
 * the raw event feed, and a form to send a message and watch it move.
 */
export async function messagesPage(ctx: PageContext): Promise<void> {
  const [{ messages }, { templates }] = await Promise.all([
    gql<{ messages: { data: Message[] } }>(`query { messages(limit: 20) { data { ${MESSAGE_FIELDS} } } }`),
    gql<{ templates: { data: Template[] } }>('query { templates { data { id name channel language variables { name type required } } } }'),
  ]);
  if (!ctx.active()) return;

  const rows = new Map<string, HTMLTableRowElement>();
  const tbody = h('tbody');
  const emptyRow = h('tr', null, h('td', { colspan: 6 }, 'No messages yet.'));
  const feed = h('ol', { class: 'feed', 'aria-live': 'polite', 'aria-relevant': 'additions' });
  const logError = errorLine();

  function cancelButton(m: Message): HTMLButtonElement {
    const button = h(
      'button',
      {
        type: 'button',
        class: 'secondary small',
        'aria-label': `Cancel message ${m.id}`,
        onclick: async () => {
          logError.textContent = '';
          try {
            const { cancelMessage } = await busy(button, () =>
              gql<{ cancelMessage: Message }>(`mutation ($id: ID!) { cancelMessage(id: $id) { ${MESSAGE_FIELDS} } }`, { id: m.id }),
            );
            if (ctx.active()) upsert(cancelMessage);
          } catch (err) {
            showError(logError, err);
          }
        },
      },
      'Cancel',
    );
    return button;
  }

  function renderRow(m: Message): HTMLTableRowElement {
    const status = h(
      'td',
      { 'data-label': 'Status', class: 'status-cell', 'data-status': m.status },
      badge(m.status),
      m.error ? h('span', { class: 'muted' }, ` ${m.error}`) : null,
      m.sendAt && m.status === 'scheduled' ? h('span', { class: 'muted' }, ' for ', timeElement(m.sendAt)) : null,
      CANCELLABLE.has(m.status) ? [' ', cancelButton(m)] : null,
    );
    return h(
      'tr',
      { 'data-message-id': m.id },
      h('td', { 'data-label': 'Created' }, timeElement(m.createdAt)),
      h('td', { 'data-label': 'Message' }, h('code', { class: 'wrap' }, m.id)),
      h('td', { 'data-label': 'Patient' }, m.patientId),
      h('td', { 'data-label': 'Channel · template' }, `${m.channel} · ${m.templateId}`),
      status,
      h('td', { 'data-label': 'Updated', class: 'updated-cell' }, timeElement(m.updatedAt)),
    );
  }

  function upsert(m: Message, highlight = true): void {
    const existing = rows.get(m.id);
    if (existing) {
      const current = existing.querySelector<HTMLElement>('.status-cell')!.dataset.status ?? 'queued';
      if ((RANK[m.status] ?? 0) < (RANK[current] ?? 0)) return;
      const row = renderRow(m);
      existing.replaceWith(row);
      rows.set(m.id, row);
      if (highlight) row.classList.add('changed');
      return;
    }
    emptyRow.remove();
    const row = renderRow(m);
    rows.set(m.id, row);
    tbody.prepend(row);
    if (highlight) row.classList.add('changed');
  }

  for (const m of [...messages.data].reverse()) upsert(m, false);
  if (rows.size === 0) tbody.append(emptyRow);

  async function onEvent(event: LiveEvent): Promise<void> {
    const data = event.data;
    feed.prepend(
      h(
        'li',
        null,
        h('time', { datetime: event.timestamp }, formatTime(event.timestamp)),
        ' ',
        h('code', null, event.type),
        ' ',
        String(data.messageId ?? data.appointmentId ?? data.webhookId ?? ''),
        data.status ? ` → ${String(data.status)}` : '',
      ),
    );
    while (feed.children.length > FEED_LIMIT) feed.lastElementChild?.remove();

    const messageId = typeof data.messageId === 'string' ? data.messageId : undefined;
    if (!messageId || !event.type.startsWith('MESSAGE_') || event.type === 'MESSAGE_RESPONSE') return;
    const known = rows.get(messageId);
    if (known && typeof data.status === 'string') {
      // The event carries the new status; the row keeps its other fields.
      const cells = known.querySelectorAll('td');
      upsert({
        id: messageId,
        patientId: String(data.patientId ?? cells[2].textContent),
        channel: String(data.channel ?? ''),
        templateId: cells[3].textContent?.split(' · ')[1] ?? '',
        status: data.status,
        error: typeof data.error === 'string' ? data.error : null,
        sendAt: null,
        createdAt: known.querySelector('time')?.getAttribute('datetime') ?? event.timestamp,
        updatedAt: event.timestamp,
      });
      return;
    }
    // A message we have not seen (sent from elsewhere): read it once.
    try {
      const { message } = await gql<{ message: Message }>(`query ($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} } }`, { id: messageId });
      if (ctx.active()) upsert(message);
    } catch {
      // Not readable with this token (e.g. another patient's): the feed still shows the event.
    }
  }
  ctx.onEvent((event) => void onEvent(event));

  fill(
    ctx.main,
    heading('Messages'),
    h(
      'p',
      { class: 'lead' },
      'The latest messages of this tenant. New messages and status changes arrive live from the ',
      h('code', null, 'events'),
      ' subscription, without reloading.',
    ),
    section(
      'Send a message',
      'send-title',
      sendForm(templates.data, (m) => upsert(m)),
    ),
    section(
      'Message log',
      'log-title',
      h(
        'table',
        { class: 'data', id: 'message-log' },
        h('caption', null, 'Latest messages, newest first'),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Created', 'Message', 'Patient', 'Channel · template', 'Status', 'Updated'].map((label) => h('th', { scope: 'col' }, label)),
          ),
        ),
        tbody,
      ),
      logError,
    ),
    section(
      'Live events',
      'feed-title',
      h('p', { class: 'muted' }, 'Every event of this tenant as it happens (newest first; announced to screen readers).'),
      feed,
    ),
  );
}

function sendForm(templates: Template[], onSent: (m: Message) => void): HTMLFormElement {
  const patient = h('input', { type: 'text', name: 'patientId', required: true, value: 'p-1001', autocomplete: 'off' });
  const template = h(
    'select',
    { name: 'templateId', required: true },
    templates.map((t, i) => h('option', { value: String(i) }, `${t.name} (${t.id}, ${t.language})`)),
  );
  const channel = h('select', { name: 'channel' }, h('option', { value: 'sms' }, 'SMS'), h('option', { value: 'email' }, 'Email'));
  const sendAt = h('input', { type: 'datetime-local', name: 'sendAt' });
  const variables = h('div', { class: 'variables' });
  const result = statusLine();
  const error = errorLine();
  const submit = h('button', { type: 'submit' }, 'Send message');
  let inputs: Array<{ name: string; input: HTMLInputElement }> = [];

  function renderVariables(): void {
    const chosen = templates[Number(template.value)];
    if (chosen) channel.value = chosen.channel === 'email' ? 'email' : 'sms';
    inputs = (chosen?.variables ?? []).map((v) => {
      const type = v.type === 'date' ? 'date' : v.type === 'time' ? 'time' : 'text';
      return { name: v.name, input: h('input', { type, name: `var-${v.name}`, required: v.required, autocomplete: 'off' }) };
    });
    fill(
      variables,
      inputs.length === 0
        ? null
        : h(
            'fieldset',
            null,
            h('legend', null, 'Template variables'),
            inputs.map(({ name, input }) => field(`${name}${input.required ? '' : ' (optional)'}`, input)),
          ),
    );
  }
  template.addEventListener('change', renderVariables);
  renderVariables();

  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (event: SubmitEvent) => {
        event.preventDefault();
        result.textContent = '';
        error.textContent = '';
        const chosen = templates[Number(template.value)];
        if (!chosen) return;
        const values = Object.fromEntries(inputs.filter(({ input }) => input.value !== '').map(({ name, input }) => [name, input.value]));
        try {
          const { sendMessage } = await busy(submit, () =>
            gql<{ sendMessage: Message }>(`mutation ($input: SendMessageInput!) { sendMessage(input: $input) { ${MESSAGE_FIELDS} } }`, {
              input: {
                patientId: patient.value.trim(),
                templateId: chosen.id,
                channel: channel.value,
                variables: values,
                // The browser's local time, as the instant it names.
                ...(sendAt.value ? { sendAt: new Date(sendAt.value).toISOString() } : {}),
              },
            }),
          );
          onSent(sendMessage);
          result.textContent = `Message ${sendMessage.id} ${sendMessage.status}; watch its status in the log below.`;
        } catch (err) {
          showError(error, err);
        }
      },
    },
    h(
      'div',
      { class: 'grid' },
      field('Patient id', patient, 'Demo: p-1001 delivers, p-1002 fails, p-1003 has SMS off.'),
      field('Template', template),
      field('Channel', channel),
      field('Send at (optional)', sendAt, 'Empty: now. Otherwise 1 minute to 35 days ahead; it can be cancelled until then.'),
    ),
    variables,
    submit,
    result,
    error,
  );
  return form;
}
