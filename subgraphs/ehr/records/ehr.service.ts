import DataLoader from 'dataloader';
import { notFound } from '../../../common/errors';
import type { Ehr as EhrRow } from '../db/generated/client';
import type { TenantStore } from '../db/store';
import { assertCan } from '../access';
import type { AccessPolicyService } from '../policy/access-policy.service';
import { assertVersion, auditVersions, type AuditVersion } from '../audit/versions';

/** EHR_STATUS versions: the EHR's creation, then each status change. */
const STATUS_ENTITY = ['Ehr', 'EhrStatus'];

export interface EhrView {
  id: string;
  patientId: string;
  createdAt: Date;
  status: { isQueryable: boolean; isModifiable: boolean; updatedAt: Date };
}

const view = (row: EhrRow): EhrView => ({
  id: row.id,
  patientId: row.patientId,
  createdAt: row.createdAt,
  status: { isQueryable: row.isQueryable, isModifiable: row.isModifiable, updatedAt: row.updatedAt },
});

/** EHRs (one per patient) and their EHR_STATUS. */
export class EhrService {
  private readonly byPatient: DataLoader<string, EhrRow | null>;

  constructor(
    private readonly store: TenantStore,
    private readonly policy: AccessPolicyService,
  ) {
    this.byPatient = new DataLoader((patientIds) =>
      store.read(async (tx) => {
        const rows = await tx.ehr.findMany({ where: { patientId: { in: [...patientIds] } } });
        return patientIds.map((id) => rows.find((r) => r.patientId === id) ?? null);
      }),
    );
  }

  /** The EHR by id, 404 when unknown, of another tenant, or hidden from the caller. */
  async get(ehrId: string): Promise<EhrView> {
    const row = await this.store.read((tx) => tx.ehr.findFirst({ where: { id: ehrId } }));
    if (!row) throw notFound('EHR', ehrId);
    const decision = await this.policy.decide('read', 'demographics', { patientId: row.patientId });
    if (!decision.allowed && decision.hide) throw notFound('EHR', ehrId);
    await this.policy.assert('read', 'demographics', { patientId: row.patientId });
    return view(row);
  }

  /** EHR_STATUS versions of a readable EHR, oldest first (from the audit trail). */
  async statusVersions(ehrId: string): Promise<AuditVersion[]> {
    await this.get(ehrId);
    return this.store.read((tx) => auditVersions(tx, STATUS_ENTITY, ehrId));
  }

  /** The EHR of a subject (patient id), 404 when none is visible. */
  async bySubject(patientId: string): Promise<EhrView> {
    const row = await this.store.read((tx) => tx.ehr.findFirst({ where: { patientId } }));
    if (!row) throw notFound('EHR of subject', patientId);
    return this.get(row.id);
  }

  async forPatient(patientId: string): Promise<EhrView | null> {
    const row = await this.byPatient.load(patientId);
    return row ? view(row) : null;
  }

  /** EHR_STATUS: a non-modifiable EHR takes no new compositions; a non-queryable one is left out of lists. */
  async updateStatus(ehrId: string, change: { isQueryable?: boolean | null; isModifiable?: boolean | null }, reason?: string | null, ifVersion?: number): Promise<EhrView> {
    const current = await this.get(ehrId);
    assertCan(this.store.identity, 'changeEhrStatus', 'change an EHR status');
    const data = {
      ...(typeof change.isQueryable === 'boolean' ? { isQueryable: change.isQueryable } : {}),
      ...(typeof change.isModifiable === 'boolean' ? { isModifiable: change.isModifiable } : {}),
    };
    const row = await this.store.change(reason, async (tx, audit) => {
      if (ifVersion !== undefined) {
        const tenantId = this.store.tenantId;
        await assertVersion(tx, () => tx.$queryRaw`SELECT id FROM ehr."Ehr" WHERE "tenantId" = ${tenantId} AND id = ${ehrId} FOR UPDATE`, STATUS_ENTITY, ehrId, ifVersion);
      }
      const [after] = await tx.ehr.updateManyAndReturn({ where: { id: ehrId }, data });
      await audit.record({
        action: 'update',
        entityType: 'EhrStatus',
        entityId: ehrId,
        before: { isQueryable: current.status.isQueryable, isModifiable: current.status.isModifiable },
        after: { isQueryable: after.isQueryable, isModifiable: after.isModifiable },
      });
      return after;
    });
    this.byPatient.clear(row.patientId);
    return view(row);
  }
}
