import { gql } from '../api';
import { badge, field, fill, h, table, timeElement } from '../dom';
import { busy, errorLine, heading, loadList, section, showError, type PageContext } from '../page';
import { WEBHOOK_EVENT_TYPES } from '../../../../common/events/types';
import { WEBHOOK_FIELDS, type Webhook } from '../types';

/** The subscriptions with their health, and the form to add one. */
export async function webhooksPage(ctx: PageContext): Promise<void> {
  const listArea = h('div', { class: 'list-area' });
  const listError = errorLine();

  const load = () =>
    loadList(ctx, listArea, listError, {
      read: async () => (await gql<{ webhooks: { data: Webhook[] } }>(`query { webhooks { data { ${WEBHOOK_FIELDS} } } }`)).webhooks.data,
      empty: 'No subscriptions yet. Add one below.',
      render: (webhooks) =>
        table(
          'Webhook subscriptions of this tenant',
          [
            { label: 'Endpoint', cell: (w) => h('a', { href: `#/webhooks/${encodeURIComponent(w.id)}`, class: 'url' }, w.url) },
            { label: 'Status', cell: (w) => badge(w.status) },
            {
              label: 'Events',
              cell: (w) =>
                h(
                  'ul',
                  { class: 'tags' },
                  w.events.map((e) => h('li', null, e)),
                ),
            },
            { label: 'Failure streak', cell: (w) => (w.failureStreak > 0 ? h('strong', { class: 'bad' }, String(w.failureStreak)) : '0') },
            {
              label: 'Last failure',
              cell: (w) => (w.lastFailureAt ? [timeElement(w.lastFailureAt), h('br'), h('span', { class: 'muted' }, w.lastFailureError ?? '')] : '—'),
            },
            { label: 'Created', cell: (w) => timeElement(w.createdAt) },
          ],
          webhooks,
          (w) => ({ 'data-webhook-id': w.id }),
        ),
    });

  const url = h('input', { type: 'url', name: 'url', required: true, placeholder: 'https://example.com/hooks/caregraph', autocomplete: 'off' });
  const secret = h('input', { type: 'text', name: 'secret', minlength: 16, maxlength: 1024, autocomplete: 'off', spellcheck: 'false' });
  const boxes = WEBHOOK_EVENT_TYPES.map((type) =>
    h('input', { type: 'checkbox', name: 'events', value: type, id: `event-${type.replace('.', '-')}`, checked: type.startsWith('message.') }),
  );
  const createError = errorLine();
  const created = h('div', { role: 'status', class: 'once' });
  const submit = h('button', { type: 'submit' }, 'Create subscription');
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (event: SubmitEvent) => {
        event.preventDefault();
        createError.textContent = '';
        const events = boxes.filter((b) => b.checked).map((b) => b.value);
        if (events.length === 0) {
          createError.textContent = 'Choose at least one event type.';
          boxes[0].focus();
          return;
        }
        // Left empty, the server generates the secret and returns it in this answer only.
        const given = secret.value.trim();
        try {
          const { createWebhook } = await busy(submit, () =>
            gql<{ createWebhook: Webhook & { secret: string | null } }>(
              `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { id url secret } }`,
              {
                input: { url: url.value.trim(), events, ...(given ? { secret: given } : {}) },
              },
            ),
          );
          const signingSecret = createWebhook.secret ?? given;
          fill(
            created,
            h(
              'p',
              null,
              'Created ',
              h('a', { href: `#/webhooks/${encodeURIComponent(createWebhook.id)}` }, createWebhook.url),
              '. Its signing secret is shown only now; store it with the receiver:',
            ),
            h('p', null, h('code', { class: 'secret', 'data-secret': '' }, signingSecret)),
          );
          form.reset();
          await load();
        } catch (err) {
          showError(createError, err);
        }
      },
    },
    field('Endpoint URL', url, 'https:// only, and it must not resolve to an internal address (unless the server allows insecure targets).'),
    h(
      'fieldset',
      null,
      h('legend', null, 'Events'),
      h(
        'div',
        { class: 'checks' },
        boxes.map((box) => h('label', { for: box.id, class: 'check' }, box, ' ', box.value)),
      ),
    ),
    field('Signing secret (optional)', secret, 'At least 16 characters. Leave empty to generate one.'),
    submit,
    createError,
  );

  fill(
    ctx.main,
    heading('Webhook subscriptions'),
    h(
      'p',
      { class: 'lead' },
      'Endpoints that receive signed events. Open one to see its delivery attempts, send a test event, re-enable it or rotate its secret.',
    ),
    section('Subscriptions', 'subs-title', listError, listArea),
    section('New subscription', 'new-title', form, created),
  );
  ctx.onEvent((event) => {
    if (event.type === 'WEBHOOK_DISABLED') void load();
  });
  await load();
}
