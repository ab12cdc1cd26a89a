import { systemClock, type Clock } from '../../../common/clock';
import { notFound } from '../../../common/errors';
import { DAY_MS, parseRetention, retentionDays, retentionPeriods, type RetentionCategory, type RetentionPeriod } from '../../../common/retention';
import type { TenantStore } from '../db/store';
import type { AccessPolicyService } from '../policy/access-policy.service';
import { assertCan } from '../policy/rules';

/** The retention categories whose data the clinical record holds. */
const RECORD_RETENTION_CATEGORIES = ['clinical_record', 'audit', 'access_log'] as const satisfies readonly RetentionCategory[];

export interface RecordRestrictionView {
  patientId: string;
  restrictedAt: Date | null;
  deleteAfter: Date | null;
  legalHold: boolean;
}

/** A record under the data subject's rights, with who restricted it or set its hold and why (from the audit trail). */
export interface RecordRightsView extends RecordRestrictionView {
  restrictedBy: string | null;
  restrictionReason: string | null;
  legalHoldBy: string | null;
  legalHoldReason: string | null;
}

/**
 * The data subject's rights on the clinical record (docs/privacy.md): an
 * erasure request restricts the record (GDPR art. 18; the WGBO keeps it for
 * its retention period, so art. 17 does not erase it) and schedules its
 * deletion; a legal hold keeps it past that date. Also the tenant's retention periods.
 */
export class RecordPrivacyService {
  constructor(
    private readonly store: TenantStore,
    private readonly policy: AccessPolicyService,
    private readonly clock: Clock = systemClock,
  ) {}

  private async patientRow(patientId: string) {
    const row = await this.store.read((tx) => tx.patient.findFirst({ where: { id: patientId, deletedAt: null } }));
    if (!row) throw notFound('Patient', patientId);
    return row;
  }

  async status(patientId: string): Promise<RecordRestrictionView> {
    assertCan(this.store.identity, 'manageDataSubjectRights', { patientId });
    return view(await this.patientRow(patientId));
  }

  /** Restricts the record and schedules its deletion at the end of the tenant's clinical retention period; repeating it changes nothing. */
  async restrict(patientId: string, reason?: string | null): Promise<RecordRestrictionView> {
    assertCan(this.store.identity, 'manageDataSubjectRights', { patientId });
    const current = await this.patientRow(patientId);
    if (current.restrictedAt) return view(current);
    const now = this.clock.now();
    const days = retentionDays('clinical_record', await this.overrides());
    const deleteAfter = new Date(now.getTime() + days * DAY_MS);
    const row = await this.store.change(reason, async (tx, audit) => {
      const [updated] = await tx.patient.updateManyAndReturn({ where: { id: patientId, restrictedAt: null }, data: { restrictedAt: now, deleteAfter } });
      if (!updated) throw notFound('Patient', patientId);
      await audit.record({
        action: 'restrict',
        entityType: 'Patient',
        entityId: patientId,
        before: { restrictedAt: null, deleteAfter: null },
        after: { restrictedAt: now, deleteAfter, retentionDays: days },
      });
      return updated;
    });
    this.policy.forgetRestriction();
    return view(row);
  }

  /** Sets or lifts a legal hold: a held record (and its access log) outlives its retention period. */
  async setLegalHold(patientId: string, hold: boolean, reason?: string | null): Promise<RecordRestrictionView> {
    assertCan(this.store.identity, 'manageDataSubjectRights', { patientId });
    const current = await this.patientRow(patientId);
    if (current.legalHold === hold) return view(current);
    const row = await this.store.change(reason, async (tx, audit) => {
      const [updated] = await tx.patient.updateManyAndReturn({ where: { id: patientId }, data: { legalHold: hold } });
      await audit.record({
        action: hold ? 'legal-hold' : 'legal-hold-lifted',
        entityType: 'Patient',
        entityId: patientId,
        before: { legalHold: current.legalHold },
        after: { legalHold: hold },
      });
      return updated;
    });
    return view(row);
  }

  /** The tenant's patients under legal hold, whose messaging data the messaging purge keeps too. */
  async legalHolds(): Promise<string[]> {
    assertCan(this.store.identity, 'listLegalHolds');
    const rows = await this.store.read((tx) => tx.patient.findMany({ where: { legalHold: true }, select: { id: true }, orderBy: { id: 'asc' } }));
    return rows.map((row) => row.id);
  }

  /**
   * The tenant's records under the data subject's rights: restricted (an erasure or restriction request) or under
   * legal hold, each with who set the restriction and the hold and why (their newest audit records).
   */
  async restrictions(): Promise<RecordRightsView[]> {
    assertCan(this.store.identity, 'reviewAccessLog');
    return this.store.read(async (tx) => {
      const rows = await tx.patient.findMany({
        where: { OR: [{ restrictedAt: { not: null } }, { legalHold: true }] },
        select: { id: true, restrictedAt: true, deleteAfter: true, legalHold: true },
        orderBy: { id: 'asc' },
      });
      const records = await tx.auditRecord.findMany({
        where: { entityType: 'Patient', entityId: { in: rows.map((row) => row.id) }, action: { in: ['restrict', 'legal-hold'] } },
        select: { entityId: true, action: true, actor: true, reason: true },
        orderBy: { seq: 'desc' },
      });
      const newest = (patientId: string, action: string) => records.find((r) => r.entityId === patientId && r.action === action);
      return rows.map((row) => {
        const restricted = row.restrictedAt ? newest(row.id, 'restrict') : undefined;
        const held = row.legalHold ? newest(row.id, 'legal-hold') : undefined;
        return {
          ...view(row),
          restrictedBy: restricted?.actor ?? null,
          restrictionReason: restricted?.reason ?? null,
          legalHoldBy: held?.actor ?? null,
          legalHoldReason: held?.reason ?? null,
        };
      });
    });
  }

  private overrides() {
    return this.store.read((tx) => tx.retentionSetting.findMany());
  }

  async retention(): Promise<RetentionPeriod[]> {
    assertCan(this.store.identity, 'manageDataSubjectRights');
    return retentionPeriods(RECORD_RETENTION_CATEGORIES, await this.overrides());
  }

  async setRetention(category: string, days: number, reason?: string | null): Promise<RetentionPeriod[]> {
    assertCan(this.store.identity, 'manageDataSubjectRights');
    const checked = parseRetention(category, days, RECORD_RETENTION_CATEGORIES);
    const before = retentionDays(checked, await this.overrides());
    await this.store.change(reason, async (tx, audit) => {
      const key = { tenantId: this.store.tenantId, category: checked };
      await tx.retentionSetting.upsert({
        where: { tenantId_category: key },
        create: { ...key, days, updatedBy: this.store.identity.sub },
        update: { days, updatedBy: this.store.identity.sub },
      });
      await audit.record({ action: 'update', entityType: 'RetentionSetting', entityId: checked, before: { days: before }, after: { days } });
    });
    return this.retention();
  }
}

function view(row: { id: string; restrictedAt: Date | null; deleteAfter: Date | null; legalHold: boolean }): RecordRestrictionView {
  return { patientId: row.id, restrictedAt: row.restrictedAt, deleteAfter: row.deleteAfter, legalHold: row.legalHold };
}
