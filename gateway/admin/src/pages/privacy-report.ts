import { gql } from '../api';
import { field, fill, formatTime, h, table, timeElement } from '../dom';
import { busy, errorLine, heading, showError, type PageContext } from '../page';
import { day, ENTRY_FIELDS, entryCells, flagBadge, privacyNav, type ReviewedEntry } from './privacy';

interface Report {
  tenantId: string;
  from: string;
  to: string;
  generatedAt: string;
  generatedBy: string;
  entries: number;
  patients: number;
  actors: number;
  flagged: number;
  unreviewedFlagged: number;
  flags: Array<{ flag: string; entries: number; unreviewed: number }>;
  unreviewed: ReviewedEntry[];
  reviewsDone: number;
  reviews: Array<{ entryId: string; reviewedBy: string; reviewedAt: string; note: string | null; flags: string[] }>;
  bulkPatients: number;
  bulkWindowMinutes: number;
}

/** The report's own styles, for the downloaded HTML file (the dashboard's stylesheet is not in it). */
const REPORT_CSS = `body{font-family:system-ui,sans-serif;color:#1b1f24;margin:2rem;line-height:1.45}
table{border-collapse:collapse;width:100%;margin:0.5rem 0 1.5rem}th,td{border:1px solid #d0d7de;padding:0.3rem 0.5rem;text-align:left;vertical-align:top}
caption{text-align:left;font-weight:600;padding:0.3rem 0}dl{display:grid;grid-template-columns:max-content 1fr;gap:0.2rem 1rem}dt{font-weight:600}dd{margin:0}
.badge{border:1px solid currentColor;border-radius:999px;padding:0 0.4rem;font-size:0.8rem;margin-right:0.2rem}.muted{color:#57606a}`;

const dayOf = (value: string): string => value.slice(0, 10);

function renderReport(report: Report): HTMLElement {
  const count = (n: number, of: number, what: string) => (n < of ? `${what} (the newest ${n} of ${of})` : what);
  return h(
    'article',
    { class: 'report card', 'aria-labelledby': 'report-title' },
    h('h2', { id: 'report-title' }, `Access-log review report — tenant ${report.tenantId}, ${dayOf(report.from)} to ${dayOf(report.to)}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Tenant'),
      h('dd', null, report.tenantId),
      h('dt', null, 'Period'),
      h('dd', null, timeElement(report.from), ' to ', timeElement(report.to)),
      h('dt', null, 'Generated'),
      h('dd', null, timeElement(report.generatedAt), ' by ', h('code', null, report.generatedBy)),
      h('dt', null, 'Reads of patient data'),
      h('dd', { 'data-count': 'entries' }, String(report.entries)),
      h('dt', null, 'Patients read'),
      h('dd', { 'data-count': 'patients' }, String(report.patients)),
      h('dt', null, 'Actors'),
      h('dd', { 'data-count': 'actors' }, String(report.actors)),
      h('dt', null, 'Flagged entries'),
      h('dd', { 'data-count': 'flagged' }, String(report.flagged)),
      h('dt', null, 'Flagged, not yet reviewed'),
      h('dd', { 'data-count': 'unreviewed' }, String(report.unreviewedFlagged)),
      h('dt', null, 'Reviews done in the period'),
      h('dd', { 'data-count': 'reviews' }, String(report.reviewsDone)),
      h('dt', null, 'Bulk read'),
      h('dd', null, `${report.bulkPatients} or more patients within ${report.bulkWindowMinutes} minutes either side of an entry`),
    ),
    table(
      'Entries per flag',
      [
        { label: 'Flag', cell: (f) => flagBadge(f.flag) },
        { label: 'Entries', cell: (f) => String(f.entries) },
        { label: 'Not yet reviewed', cell: (f) => String(f.unreviewed) },
      ],
      report.flags,
      (f) => ({ 'data-flag': f.flag.toLowerCase() }),
    ),
    report.unreviewed.length === 0
      ? h('p', null, 'Every flagged entry of the period is reviewed.')
      : table(count(report.unreviewed.length, report.unreviewedFlagged, 'Flagged entries not yet reviewed'), entryCells(), report.unreviewed, (e) => ({
          'data-entry-id': e.id,
        })),
    report.reviews.length === 0
      ? h('p', null, 'No review was done in the period.')
      : table(
          count(report.reviews.length, report.reviewsDone, 'Reviews done in the period'),
          [
            { label: 'Reviewed', cell: (r) => timeElement(r.reviewedAt) },
            { label: 'By', cell: (r) => h('code', null, r.reviewedBy) },
            { label: 'Entry', cell: (r) => h('code', { class: 'wrap' }, r.entryId) },
            { label: 'Flags', cell: (r) => (r.flags.length > 0 ? r.flags.map((f) => flagBadge(f.toUpperCase())) : 'none') },
            { label: 'Note', cell: (r) => r.note ?? '—' },
          ],
          report.reviews,
          (r) => ({ 'data-entry-id': r.entryId }),
        ),
  );
}

/** A standalone HTML document of the report (its text as the dashboard shows it, its own styles), to archive. */
function reportDocument(article: HTMLElement, title: string): string {
  const copy = article.cloneNode(true) as HTMLElement;
  // Times as the reader saw them, with their exact instant kept in the datetime attribute.
  for (const time of copy.querySelectorAll('time')) time.textContent = formatTime(time.getAttribute('datetime'));
  const escaped = title.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escaped}</title><style>${REPORT_CSS}</style></head><body>${copy.outerHTML}</body></html>\n`;
}

/**
 * The periodic review report of the tenant (NEN 7513) for a period: counts per flag, the flagged entries not yet
 * reviewed and the reviews done. Printable (the dashboard's print styles show the report alone) and downloadable
 * as one HTML file. `#/privacy/report/<from>/<to>` opens it for that period.
 */
export async function privacyReportPage(ctx: PageContext, fromParam?: string, toParam?: string): Promise<void> {
  const today = new Date();
  const from = h('input', {
    type: 'date',
    name: 'from',
    required: true,
    value: fromParam ?? day(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1))),
  });
  const to = h('input', { type: 'date', name: 'to', required: true, value: toParam ?? day(today) });
  const area = h('div');
  const error = errorLine();
  const submit = h('button', { type: 'submit' }, 'Make report');

  async function load(): Promise<void> {
    error.textContent = '';
    try {
      const { accessReviewReport: report } = await busy(submit, () =>
        gql<{ accessReviewReport: Report }>(
          `query ($from: String!, $to: String!) {
            accessReviewReport(from: $from, to: $to) {
              tenantId from to generatedAt generatedBy entries patients actors flagged unreviewedFlagged
              flags { flag entries unreviewed } unreviewed { ${ENTRY_FIELDS} } reviewsDone
              reviews { entryId reviewedBy reviewedAt note flags } bulkPatients bulkWindowMinutes
            }
          }`,
          { from: from.value, to: to.value },
        ),
      );
      if (!ctx.active()) return;
      const article = renderReport(report);
      const title = `Access-log review report ${report.tenantId} ${dayOf(report.from)} to ${dayOf(report.to)}`;
      const download = h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            const url = URL.createObjectURL(new Blob([reportDocument(article, title)], { type: 'text/html' }));
            const link = h('a', { href: url, download: `access-review-${report.tenantId}-${dayOf(report.from)}-${dayOf(report.to)}.html` });
            document.body.append(link);
            link.click();
            link.remove();
            setTimeout(() => URL.revokeObjectURL(url), 10_000);
          },
        },
        'Download HTML',
      );
      fill(area, h('div', { class: 'button-row no-print' }, h('button', { type: 'button', onclick: () => window.print() }, 'Print'), download), article);
    } catch (err) {
      showError(error, err);
    }
  }

  fill(
    ctx.main,
    heading('Privacy: review report'),
    privacyNav('#/privacy/report'),
    h('p', { class: 'lead no-print' }, "The periodic review of this tenant's access log, for the period you choose, from the live data."),
    h(
      'form',
      {
        class: 'card inline-form no-print',
        onsubmit: (event: SubmitEvent) => {
          event.preventDefault();
          history.replaceState(null, '', `#/privacy/report/${from.value}/${to.value}`);
          void load();
        },
      },
      field('From', from),
      field('To (included)', to),
      submit,
    ),
    error,
    area,
  );
  if (fromParam && toParam) await load();
}
