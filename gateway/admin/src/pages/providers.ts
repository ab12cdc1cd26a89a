import { fill, h, table, badge } from '../dom';
import { errorLine, heading, showError, type PageContext } from '../page';

/** One channel provider as this process's /metrics shows it. */
interface ProviderRow {
  provider: string;
  channel: string;
  state: 'closed' | 'half-open' | 'open';
  sends: Record<string, number>;
}

const STATES = ['closed', 'half-open', 'open'] as const;
const OUTCOMES = ['sent', 'rejected', 'failed', 'skipped'];
const SAMPLE = /^(caregraph_provider_circuit_state|caregraph_provider_sends_total)\{([^}]*)\} (\S+)$/;
const REFRESH_MS = 5000;

/** The breaker gauge and send counters of the text exposition format, one row per provider and channel. */
function parseMetrics(text: string): ProviderRow[] {
  const rows = new Map<string, ProviderRow>();
  for (const line of text.split('\n')) {
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...match[2].matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const key = `${labels.channel}/${labels.provider}`;
    const row = rows.get(key) ?? { provider: labels.provider, channel: labels.channel, state: 'closed', sends: {} };
    rows.set(key, row);
    if (match[1] === 'caregraph_provider_circuit_state') row.state = STATES[Number(match[3])] ?? 'closed';
    else row.sends[labels.outcome] = Number(match[3]);
  }
  return [...rows.values()];
}

/**
 * The channel providers' circuit breakers and sends, read from /metrics of the process serving the dashboard
 * (in the all-in-one process, the delivery worker's); refreshed every few seconds.
 */
export async function providersPage(ctx: PageContext): Promise<void> {
  const area = h('div');
  const error = errorLine();
  const load = async () => {
    try {
      const response = await fetch('/metrics');
      if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
      const rows = parseMetrics(await response.text());
      if (!ctx.active()) return;
      error.textContent = '';
      fill(
        area,
        rows.length === 0
          ? h('p', null, 'No delivery worker runs in this process: its breakers are on its own /metrics.')
          : table(
              'Channel providers in failover order, with their circuit breakers',
              [
                { label: 'Channel', cell: (r) => r.channel },
                { label: 'Provider', cell: (r) => h('code', null, r.provider) },
                { label: 'Circuit', cell: (r) => badge(r.state) },
                ...OUTCOMES.map((outcome) => ({ label: outcome[0].toUpperCase() + outcome.slice(1), cell: (r: ProviderRow) => String(r.sends[outcome] ?? 0) })),
              ],
              rows,
              (r) => ({ 'data-provider': r.provider, 'data-channel': r.channel, 'data-circuit': r.state }),
            ),
      );
    } catch (err) {
      showError(error, err);
    }
  };
  fill(
    ctx.main,
    heading('Providers'),
    h(
      'p',
      { class: 'lead' },
      'Each channel tries its providers in order. A provider whose circuit is open is skipped until its cool-down has passed, then one send probes it. Sent, rejected (the recipient or the message), failed (the provider) and skipped sends are counted since this process started.',
    ),
    error,
    area,
  );
  const timer = setInterval(() => void load(), REFRESH_MS);
  ctx.onLeave(() => clearInterval(timer));
  await load();
}
