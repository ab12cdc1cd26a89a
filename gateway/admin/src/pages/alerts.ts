import { gql } from '../api';
import { fill, h, table, timeElement } from '../dom';
import { errorLine, heading, loadList, type PageContext } from '../page';
import type { Alert } from '../types';

/** Alerts raised by the platform, e.g. a webhook subscription disabled after its last retry failed. */
export async function alertsPage(ctx: PageContext): Promise<void> {
  const area = h('div');
  const error = errorLine();

  const load = () =>
    loadList(ctx, area, error, {
      read: async () =>
        (await gql<{ alerts: { data: Alert[] } }>('query { alerts(limit: 100) { data { id type webhookId message url reason createdAt } } }')).alerts.data,
      empty: 'No alerts.',
      render: (alerts) =>
        table(
          'Alerts, newest first',
          [
            { label: 'When', cell: (a) => timeElement(a.createdAt) },
            { label: 'Type', cell: (a) => h('code', null, a.type) },
            {
              label: 'Subscription',
              cell: (a) => (a.webhookId ? h('a', { href: `#/webhooks/${encodeURIComponent(a.webhookId)}`, class: 'url' }, a.url ?? a.webhookId) : '—'),
            },
            { label: 'Reason', cell: (a) => a.reason ?? a.message },
          ],
          alerts,
          (a) => ({ 'data-alert-id': a.id }),
        ),
    });

  fill(
    ctx.main,
    heading('Alerts'),
    h(
      'p',
      { class: 'lead' },
      'A webhook subscription whose last retry failed is disabled and raises an alert here. Open the subscription to see why and to re-enable it. New alerts appear live.',
    ),
    error,
    area,
  );
  ctx.onEvent((event) => {
    if (event.type === 'WEBHOOK_DISABLED') void load();
  });
  await load();
}
