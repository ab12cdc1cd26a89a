import { gql } from '../api';
import { badge, field, fill, h, table, timeElement } from '../dom';
import { errorLine, heading, loadList, section, type PageContext } from '../page';
import { privacyNav } from './privacy';

interface ConsentRow {
  patientId: string;
  purpose: string;
  granted: boolean;
  recorded: boolean;
  note: string | null;
  changedAt: string | null;
  changedBy: string | null;
}

interface RestrictionRow {
  patientId: string;
  restrictedAt: string | null;
  deleteAfter: string | null;
  legalHold: boolean;
  restrictedBy: string | null;
  restrictionReason: string | null;
  legalHoldBy: string | null;
  legalHoldReason: string | null;
}

/** Consents per patient: one patient's (recorded or default, per purpose), or every decision recorded in the tenant. */
export async function privacyConsentsPage(ctx: PageContext): Promise<void> {
  const patient = h('input', { type: 'text', name: 'patientId', autocomplete: 'off', spellcheck: 'false' });
  const area = h('div', { class: 'list-area' });
  const error = errorLine();
  const load = () => {
    const patientId = patient.value.trim() || null;
    return loadList(ctx, area, error, {
      read: async () =>
        (
          await gql<{ consentRegister: ConsentRow[] }>(
            'query ($patientId: ID) { consentRegister(patientId: $patientId) { patientId purpose granted recorded note changedAt changedBy } }',
            { patientId },
          )
        ).consentRegister,
      empty: 'No consent decision has been recorded in this tenant: every patient has the defaults (messaging granted, the others not).',
      render: (rows) =>
        table(
          patientId ? `Consents of patient ${patientId}, per purpose` : 'Consent decisions recorded in this tenant, by patient',
          [
            { label: 'Patient', cell: (c) => h('code', null, c.patientId) },
            { label: 'Purpose', cell: (c) => c.purpose.toLowerCase() },
            { label: 'Consent', cell: (c) => badge(c.granted ? 'granted' : c.recorded ? 'withdrawn' : 'not given') },
            { label: 'Recorded', cell: (c) => (c.recorded ? 'recorded decision' : h('span', { class: 'muted' }, 'default')) },
            { label: 'Note', cell: (c) => c.note ?? '—' },
            { label: 'Changed', cell: (c) => (c.changedAt ? [timeElement(c.changedAt), h('br'), h('code', { class: 'muted' }, c.changedBy ?? '')] : '—') },
          ],
          rows,
          (c) => ({ 'data-patient-id': c.patientId, 'data-purpose': c.purpose.toLowerCase(), 'data-granted': String(c.granted) }),
        ),
    });
  };
  fill(
    ctx.main,
    heading('Privacy: consents'),
    privacyNav('#/privacy/consents'),
    h(
      'p',
      { class: 'lead' },
      'Enter a patient id to see that patient’s consent for every purpose; leave it empty to list every decision recorded in this tenant.',
    ),
    h(
      'form',
      {
        class: 'card inline-form no-print',
        onsubmit: (event: SubmitEvent) => {
          event.preventDefault();
          void load();
        },
      },
      field('Patient id', patient),
      h('button', { type: 'submit' }, 'Show consents'),
    ),
    error,
    area,
  );
  await load();
}

/** Records restricted on an erasure or restriction request (GDPR art. 17/18), and records under legal hold. */
export async function privacyRightsPage(ctx: PageContext): Promise<void> {
  const erasures = h('div', { class: 'list-area' });
  const holds = h('div', { class: 'list-area' });
  const error = errorLine();
  fill(
    ctx.main,
    heading('Privacy: erasure requests and legal holds'),
    privacyNav('#/privacy/rights'),
    h(
      'p',
      { class: 'lead' },
      'An erasure request restricts the record: it is kept, not processed, and deleted when its retention period ends, unless a legal hold keeps it (and its access log) longer.',
    ),
    error,
    section('Erasure and restriction requests', 'erasures-title', erasures),
    section('Legal holds', 'holds-title', holds),
  );
  let rows: RestrictionRow[] = [];
  await loadList(ctx, erasures, error, {
    read: async () => {
      rows = (
        await gql<{ recordRestrictions: RestrictionRow[] }>(
          'query { recordRestrictions { patientId restrictedAt deleteAfter legalHold restrictedBy restrictionReason legalHoldBy legalHoldReason } }',
        )
      ).recordRestrictions;
      return rows.filter((r) => r.restrictedAt);
    },
    empty: 'No record is restricted.',
    render: (restricted) =>
      table(
        'Restricted records',
        [
          { label: 'Patient', cell: (r) => h('code', null, r.patientId) },
          { label: 'Restricted', cell: (r) => [timeElement(r.restrictedAt), r.restrictedBy ? [h('br'), h('code', { class: 'muted' }, r.restrictedBy)] : null] },
          { label: 'Request', cell: (r) => r.restrictionReason ?? '—' },
          {
            label: 'Deleted after',
            cell: (r) => (r.legalHold ? [timeElement(r.deleteAfter), h('br'), h('strong', null, 'kept: legal hold')] : timeElement(r.deleteAfter)),
          },
        ],
        restricted,
        (r) => ({ 'data-patient-id': r.patientId }),
      ),
  });
  if (!ctx.active()) return;
  const held = rows.filter((r) => r.legalHold);
  fill(
    holds,
    held.length === 0
      ? h('p', null, 'No record is under legal hold.')
      : table(
          'Records under legal hold',
          [
            { label: 'Patient', cell: (r) => h('code', null, r.patientId) },
            { label: 'Set by', cell: (r) => (r.legalHoldBy ? h('code', null, r.legalHoldBy) : '—') },
            { label: 'Reason', cell: (r) => r.legalHoldReason ?? '—' },
            { label: 'Restricted', cell: (r) => (r.restrictedAt ? timeElement(r.restrictedAt) : 'no') },
          ],
          held,
          (r) => ({ 'data-patient-id': r.patientId }),
        ),
  );
}
