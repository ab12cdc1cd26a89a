import { gql } from '../api';
import { field, fill, h, table, timeElement, type Child } from '../dom';
import { busy, errorLine, heading, section, showError, statusLine, type PageContext } from '../page';

/** The flags of the privacy review (AccessFlag in the API), with what each means to the reader. */
const FLAGS: Array<{ value: string; label: string; means: string }> = [
  { value: 'OUTSIDE_TREATMENT', label: 'outside treatment', means: 'no known grounds, or treatment grounds without an appointment with the patient' },
  { value: 'BREAK_GLASS', label: 'break-glass', means: 'declared as emergency treatment' },
  { value: 'BULK', label: 'bulk', means: 'the actor read 10 or more patients within 5 minutes' },
  { value: 'AGENT', label: 'agent', means: 'an AI agent, an integration, or on behalf of someone else' },
];

export const flagBadge = (flag: string): HTMLElement => {
  const known = FLAGS.find((f) => f.value === flag);
  return h('span', { class: `badge badge-flag badge-flag-${flag.toLowerCase()}`, title: known?.means ?? flag }, known?.label ?? flag);
};

export interface ReviewedEntry {
  id: string;
  at: string;
  actor: string;
  roles: string[];
  responsibleUser: string | null;
  patientId: string;
  action: string;
  entityType: string;
  entityId: string;
  dataCategory: string | null;
  grounds: string | null;
  purpose: string | null;
  client: string | null;
  tool: string | null;
  flags: string[];
  review: { reviewedBy: string; reviewedAt: string; note: string | null } | null;
}

export const ENTRY_FIELDS =
  'id at actor roles responsibleUser patientId action entityType entityId dataCategory grounds purpose client tool flags review { reviewedBy reviewedAt note }';

/** The links between the privacy pages. */
export function privacyNav(current: string): HTMLElement {
  const links = [
    { hash: '#/privacy', label: 'Access log review' },
    { hash: '#/privacy/consents', label: 'Consents' },
    { hash: '#/privacy/rights', label: 'Erasure requests and legal holds' },
    { hash: '#/privacy/report', label: 'Review report' },
  ];
  return h(
    'nav',
    { 'aria-label': 'Privacy', class: 'subnav no-print' },
    h(
      'ul',
      null,
      links.map((link) => h('li', null, h('a', { href: link.hash, ...(link.hash === current ? { 'aria-current': 'page' } : {}) }, link.label))),
    ),
  );
}

/** The columns an entry shows, in the review and in the report. */
export function entryCells(): Array<{ label: string; cell: (e: ReviewedEntry) => Child }> {
  return [
    { label: 'When', cell: (e) => timeElement(e.at) },
    {
      label: 'Actor',
      cell: (e) => [
        h('code', null, e.actor),
        h('span', { class: 'muted' }, ` ${e.roles.join(', ')}`),
        e.responsibleUser && e.responsibleUser !== e.actor ? [h('br'), h('span', { class: 'muted' }, `for ${e.responsibleUser}`)] : null,
      ],
    },
    { label: 'Patient', cell: (e) => h('code', null, e.patientId) },
    {
      label: 'What',
      cell: (e) => [`${e.action} ${e.dataCategory ?? e.entityType}`, h('br'), h('code', { class: 'muted wrap' }, `${e.entityType} ${e.entityId}`)],
    },
    { label: 'Grounds · purpose', cell: (e) => `${e.grounds ?? 'unknown'} · ${e.purpose ?? '—'}` },
    { label: 'Client', cell: (e) => (e.client ? [h('code', null, e.client), e.tool ? h('span', { class: 'muted' }, ` ${e.tool}`) : null] : '—') },
    { label: 'Flags', cell: (e) => (e.flags.length > 0 ? h('span', { class: 'flags' }, e.flags.map(flagBadge)) : h('span', { class: 'muted' }, 'none')) },
  ];
}

const PAGE_SIZE = 50;

/** YYYY-MM-DD of a date, in UTC (the API's date bounds are UTC days). */
export const day = (date: Date): string => date.toISOString().slice(0, 10);

/**
 * The privacy officer's review of the tenant's access log (NEN 7513): every read of patient data with its
 * flags, filtered, and entries marked reviewed with a note (the review is recorded in the audit trail).
 */
export async function privacyLogPage(ctx: PageContext): Promise<void> {
  const today = new Date();
  const from = h('input', { type: 'date', name: 'from', value: day(new Date(today.getTime() - 30 * 86_400_000)) });
  const to = h('input', { type: 'date', name: 'to', value: day(today) });
  const patient = h('input', { type: 'text', name: 'patientId', autocomplete: 'off', spellcheck: 'false' });
  const actor = h('input', { type: 'text', name: 'actor', autocomplete: 'off', spellcheck: 'false' });
  const flag = h(
    'select',
    { name: 'flag' },
    h('option', { value: '' }, 'All entries'),
    h('option', { value: 'ANY' }, 'Any flag'),
    FLAGS.map((f) => h('option', { value: f.value }, `Flag: ${f.label}`)),
  );
  const state = h(
    'select',
    { name: 'reviewed' },
    h('option', { value: '' }, 'Reviewed or not'),
    h('option', { value: 'false', selected: true }, 'Not yet reviewed'),
    h('option', { value: 'true' }, 'Reviewed'),
  );
  const area = h('div', { class: 'list-area' });
  const listError = errorLine();
  const pager = h('div', { class: 'button-row' });
  let offset = 0;
  const selected = new Set<string>();

  const note = h('textarea', { name: 'note', rows: 2, maxlength: 1000 });
  const markButton = h('button', { type: 'submit' }, 'Mark selected reviewed');
  const markStatus = statusLine();
  const markError = errorLine();
  const updateMark = () => {
    markButton.disabled = selected.size === 0;
    markButton.textContent = selected.size > 0 ? `Mark ${selected.size} selected reviewed` : 'Mark selected reviewed';
  };

  const variables = () => ({
    from: from.value || null,
    to: to.value || null,
    patientId: patient.value.trim() || null,
    actor: actor.value.trim() || null,
    flag: flag.value && flag.value !== 'ANY' ? flag.value : null,
    flagged: flag.value === 'ANY' ? true : null,
    reviewed: state.value === '' ? null : state.value === 'true',
    limit: PAGE_SIZE,
    offset,
  });

  async function load(): Promise<void> {
    try {
      const { accessLogReview } = await gql<{ accessLogReview: { data: ReviewedEntry[]; pagination: { total: number; offset: number } } }>(
        `query ($from: String, $to: String, $patientId: ID, $actor: String, $flag: AccessFlag, $flagged: Boolean, $reviewed: Boolean, $limit: Int, $offset: Int) {
          accessLogReview(from: $from, to: $to, patientId: $patientId, actor: $actor, flag: $flag, flagged: $flagged, reviewed: $reviewed, limit: $limit, offset: $offset) {
            data { ${ENTRY_FIELDS} } pagination { total offset }
          }
        }`,
        variables(),
      );
      if (!ctx.active()) return;
      listError.textContent = '';
      selected.clear();
      updateMark();
      const { data, pagination } = accessLogReview;
      const select = (e: ReviewedEntry): Child =>
        e.review
          ? '—'
          : h('input', {
              type: 'checkbox',
              name: 'entry',
              value: e.id,
              'aria-label': `Select entry ${e.id}`,
              onchange: (event: Event) => {
                if ((event.target as HTMLInputElement).checked) selected.add(e.id);
                else selected.delete(e.id);
                updateMark();
              },
            });
      fill(
        area,
        data.length === 0
          ? h('p', null, 'No entries match these filters.')
          : table(
              `Access log, newest first: entries ${pagination.offset + 1}–${pagination.offset + data.length} of ${pagination.total}`,
              [
                { label: 'Select', cell: select },
                ...entryCells(),
                {
                  label: 'Review',
                  cell: (e) =>
                    e.review
                      ? [
                          h('span', { class: 'badge badge-reviewed' }, 'reviewed'),
                          ' ',
                          h('code', null, e.review.reviewedBy),
                          h('br'),
                          timeElement(e.review.reviewedAt),
                          e.review.note ? [h('br'), e.review.note] : null,
                        ]
                      : h('span', { class: 'muted' }, 'not reviewed'),
                },
              ],
              data,
              (e) => ({ 'data-entry-id': e.id, 'data-flags': e.flags.join(' ').toLowerCase() }),
            ),
      );
      fill(
        pager,
        h(
          'button',
          { type: 'button', class: 'secondary', disabled: offset === 0, onclick: () => ((offset = Math.max(0, offset - PAGE_SIZE)), void load()) },
          'Previous',
        ),
        h(
          'button',
          { type: 'button', class: 'secondary', disabled: offset + data.length >= pagination.total, onclick: () => ((offset += PAGE_SIZE), void load()) },
          'Next',
        ),
      );
    } catch (err) {
      showError(listError, err);
    }
  }

  const filters = h(
    'form',
    {
      class: 'card no-print',
      'aria-label': 'Filters',
      onsubmit: (event: SubmitEvent) => {
        event.preventDefault();
        offset = 0;
        markStatus.textContent = '';
        void load();
      },
    },
    h(
      'div',
      { class: 'grid' },
      field('From', from),
      field('To (included)', to),
      field('Patient id', patient),
      field('Actor', actor),
      field('Flag', flag),
      field('Review', state),
    ),
    h('button', { type: 'submit' }, 'Apply filters'),
  );

  const markForm = h(
    'form',
    {
      class: 'card no-print',
      'aria-label': 'Mark reviewed',
      onsubmit: async (event: SubmitEvent) => {
        event.preventDefault();
        markError.textContent = '';
        markStatus.textContent = '';
        const entryIds = [...selected];
        if (entryIds.length === 0) return;
        try {
          const { markAccessLogReviewed } = await busy(markButton, () =>
            gql<{ markAccessLogReviewed: Array<{ entryId: string }> }>(
              'mutation ($entryIds: [ID!]!, $note: String) { markAccessLogReviewed(entryIds: $entryIds, note: $note) { entryId } }',
              { entryIds, note: note.value.trim() || null },
            ),
          );
          if (!ctx.active()) return;
          note.value = '';
          markStatus.textContent = `${markAccessLogReviewed.length} ${markAccessLogReviewed.length === 1 ? 'entry' : 'entries'} marked reviewed.`;
          await load();
        } catch (err) {
          showError(markError, err);
        } finally {
          updateMark();
        }
      },
    },
    field('Review note (optional)', note, 'Recorded with the review in the audit trail. A review is final.'),
    h(
      'div',
      { class: 'button-row' },
      markButton,
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            for (const box of area.querySelectorAll<HTMLInputElement>('input[name="entry"]')) {
              box.checked = true;
              selected.add(box.value);
            }
            updateMark();
          },
        },
        'Select all on this page',
      ),
    ),
    markStatus,
    markError,
  );

  fill(
    ctx.main,
    heading('Privacy: access log review'),
    privacyNav('#/privacy'),
    h(
      'p',
      { class: 'lead' },
      "Every read of a patient's data in this tenant, newest first. Review the flagged entries and mark them reviewed; the access log itself never changes.",
    ),
    section(
      'What the flags mean',
      'flags-title',
      h(
        'dl',
        { class: 'facts' },
        FLAGS.map((f) => [h('dt', null, flagBadge(f.value)), h('dd', null, f.means)]),
      ),
    ),
    filters,
    listError,
    area,
    pager,
    markForm,
  );
  updateMark();
  await load();
}
