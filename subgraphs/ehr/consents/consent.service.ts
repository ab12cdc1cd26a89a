import DataLoader from 'dataloader';
import { notFound, validationError } from '../../../common/errors';
import type { TenantStore } from '../db/store';
import { CONSENT_DEFAULTS, CONSENT_PURPOSES, type ConsentPurpose } from '../policy/rules';
import type { AccessPolicyService } from '../policy/access-policy.service';

export interface ConsentView {
  patientId: string;
  purpose: ConsentPurpose;
  granted: boolean;
  /** false: no record, the purpose's default applies. */
  recorded: boolean;
  note: string | null;
  changedAt: Date | null;
  changedBy: string | null;
}

/** Patient consent per purpose (grant/revoke); every change is audited, history lives in the trail. */
export class ConsentService {
  private readonly loader: DataLoader<string, ConsentView[]>;

  constructor(
    private readonly store: TenantStore,
    private readonly policy: AccessPolicyService,
  ) {
    this.loader = new DataLoader((patientIds) =>
      store.read(async (tx) => {
        const rows = await tx.consent.findMany({ where: { patientId: { in: [...patientIds] } } });
        return patientIds.map((patientId) =>
          CONSENT_PURPOSES.map((purpose) => {
            const row = rows.find((r) => r.patientId === patientId && r.purpose === purpose);
            return row
              ? { patientId, purpose, granted: row.granted, recorded: true, note: row.note, changedAt: row.changedAt, changedBy: row.changedBy }
              : { patientId, purpose, granted: CONSENT_DEFAULTS[purpose], recorded: false, note: null, changedAt: null, changedBy: null };
          }),
        );
      }),
    );
  }

  /** The patient's consents as a purpose → granted map, for policy decisions (no permission check). */
  async effective(patientId: string): Promise<Record<ConsentPurpose, boolean>> {
    const list = await this.loader.load(patientId);
    return Object.fromEntries(list.map((c) => [c.purpose, c.granted])) as Record<ConsentPurpose, boolean>;
  }

  async list(patientId: string): Promise<ConsentView[]> {
    await this.policy.assert('read', 'consent', { patientId });
    return this.loader.load(patientId);
  }

  async set(patientId: string, purpose: string, granted: boolean, note: string | null | undefined, reason?: string | null): Promise<ConsentView> {
    await this.policy.assert('write', 'consent', { patientId });
    if (!(CONSENT_PURPOSES as readonly string[]).includes(purpose)) throw validationError(`Unknown purpose '${purpose}'`);
    if (note && note.length > 1000) throw validationError('The note is too long', [{ path: 'note', message: 'at most 1000 characters' }]);
    const view = await this.store.change(reason, async (tx, audit) => {
      if (!(await tx.patient.findFirst({ where: { id: patientId, deletedAt: null }, select: { id: true } }))) throw notFound('Patient', patientId);
      const key = { tenantId: this.store.tenantId, patientId, purpose };
      const before = await tx.consent.findFirst({ where: { patientId, purpose } });
      const data = { granted, note: note ?? null, changedAt: new Date(), changedBy: this.store.identity.sub };
      const row = await tx.consent.upsert({ where: { tenantId_patientId_purpose: key }, create: { ...key, ...data }, update: data });
      await audit.record({
        action: granted ? 'grant' : 'revoke',
        entityType: 'Consent',
        entityId: `${patientId}:${purpose}`,
        before: before ? { granted: before.granted, note: before.note } : null,
        after: { granted, note: row.note },
      });
      return { patientId, purpose: purpose as ConsentPurpose, granted, recorded: true, note: row.note, changedAt: row.changedAt, changedBy: row.changedBy };
    });
    this.loader.clear(patientId);
    return view;
  }
}
