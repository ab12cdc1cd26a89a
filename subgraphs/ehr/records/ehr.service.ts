import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { AppError, notFound, validationError } from '../../../common/errors';
import { isUniqueViolation } from '../../../common/db/unique-violation';
import type { Ehr as EhrRow } from '../db/generated/client';
import type { TenantStore } from '../db/store';
import { assertCan, DATA_AREAS, recordScope } from '../policy/rules';
import type { AccessPolicyService } from '../policy/access-policy.service';
import { assertRowVersion, auditVersions, type AuditVersion } from '../audit/versions';
import { statusVersionUid, writeStatusContribution, type PreparedVersion } from './contributions';

/** The subject namespace of CareGraph patient ids. */
export const PATIENT_NAMESPACE = 'caregraph';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface NewEhr {
  /** PUT /ehr/{ehr_id}: the id the caller chose (a UUID). */
  ehrId?: string;
  /** EHR_STATUS.subject.external_ref; none = a bare PARTY_SELF. */
  subject?: { id: string; namespace: string };
  isQueryable?: boolean;
  isModifiable?: boolean;
}

/** EHR_STATUS versions: the EHR's creation, then each status change. */
const STATUS_ENTITY = ['Ehr', 'EhrStatus'];

export interface EhrView {
  id: string;
  patientId: string;
  /** The subject as its creator named it, when not a CareGraph patient id (namespace `caregraph`). */
  subject?: { id: string; namespace: string };
  /** Created without a subject: EHR_STATUS.subject is a bare PARTY_SELF. */
  subjectUnnamed: boolean;
  createdAt: Date;
  status: { isQueryable: boolean; isModifiable: boolean; updatedAt: Date };
}

const view = (row: EhrRow): EhrView => ({
  id: row.id,
  patientId: row.patientId,
  ...(row.subjectId && row.subjectNamespace ? { subject: { id: row.subjectId, namespace: row.subjectNamespace } } : {}),
  subjectUnnamed: row.subjectUnnamed,
  createdAt: row.createdAt,
  status: { isQueryable: row.isQueryable, isModifiable: row.isModifiable, updatedAt: row.updatedAt },
});

/** EHRs (one per patient) and their EHR_STATUS. */
export class EhrService {
  private readonly byPatient: DataLoader<string, EhrRow | null>;

  constructor(
    private readonly store: TenantStore,
    private readonly policy: AccessPolicyService,
    private readonly systemId: string,
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

  /** The EHR of a subject: a patient id (namespace `caregraph`) or the subject an EHR was created for; 404 when none is visible. */
  async bySubject(subjectId: string, namespace = PATIENT_NAMESPACE): Promise<EhrView> {
    const where = namespace === PATIENT_NAMESPACE ? { patientId: subjectId } : { subjectNamespace: namespace, subjectId };
    const row = await this.store.read((tx) => tx.ehr.findFirst({ where }));
    if (!row) throw notFound('EHR of subject', `${namespace}:${subjectId}`);
    return this.get(row.id);
  }

  /**
   * A new EHR (openEHR POST/PUT /ehr). Every EHR has a patient record behind it,
   * because access is decided per patient: a subject naming a registered patient
   * (namespace `caregraph`) already has its EHR (409); any other subject, or
   * none (PARTY_SELF), gets a patient record without demographics that holds
   * the subject reference. New EHR ids are UUIDs unless the caller names one.
   * EHR_STATUS version 1 is committed in a CONTRIBUTION of its own.
   */
  async create(input: NewEhr, reason?: string | null): Promise<EhrView> {
    assertCan(this.store.identity, 'registerPatients');
    await this.policy.assert('write', 'demographics');
    const ehrId = input.ehrId ?? randomUUID();
    if (!UUID.test(ehrId)) throw validationError('An EHR id must be a UUID', [{ path: 'ehr_id', message: 'not a UUID' }]);
    const subject = input.subject;
    if (subject?.namespace === PATIENT_NAMESPACE) {
      const patient = await this.store.read((tx) => tx.patient.findFirst({ where: { id: subject.id }, select: { id: true } }));
      if (!patient)
        throw validationError(`Subject '${subject.id}' is not a registered patient of this tenant`, [
          { path: 'subject.external_ref.id.value', message: 'unknown patient' },
        ]);
      throw new AppError('CONFLICT', `Patient '${subject.id}' already has an EHR`, [{ path: 'subject', message: 'EHR exists' }]);
    }
    const patientId = `p-${randomUUID()}`;
    const row = await this.store
      .change(reason, async (tx, audit) => {
        await tx.patient.create({ data: { tenantId: this.store.tenantId, id: patientId, ehrId, givenNames: [], family: '' } });
        const ehr = await tx.ehr.create({
          data: {
            tenantId: this.store.tenantId,
            id: ehrId,
            patientId,
            isQueryable: input.isQueryable ?? true,
            isModifiable: input.isModifiable ?? true,
            subjectId: subject?.id ?? null,
            subjectNamespace: subject?.namespace ?? null,
            subjectUnnamed: !subject,
          },
        });
        const contributionId = randomUUID();
        await audit.record({
          action: 'create',
          entityType: 'Ehr',
          entityId: ehrId,
          after: { patientId, subject: subject ?? null, isQueryable: ehr.isQueryable, isModifiable: ehr.isModifiable, contributionId },
        });
        await writeStatusContribution(tx, { ...this.commit(contributionId, ehrId, reason), version: 1 });
        return ehr;
      })
      .catch(async (err) => {
        if (!isUniqueViolation(err)) throw err;
        const taken = await this.store.read((tx) => tx.ehr.findFirst({ where: { id: ehrId }, select: { id: true } }));
        throw new AppError('CONFLICT', taken ? `EHR '${ehrId}' already exists` : `The subject already has an EHR`, [
          { path: taken ? 'ehr_id' : 'subject', message: 'EHR exists' },
        ]);
      });
    return view(row);
  }

  /**
   * The EHRs a query that needs no composition sees (AQL `FROM EHR e`, `EHR_STATUS`): those of the patients whose
   * records the caller may read (only their own, for a patient), as population reads of compositions choose them:
   * queryable, not restricted. Oldest first; more than `cap` answer 400.
   */
  async queryable(cap: number): Promise<EhrView[]> {
    const own = recordScope(this.store.identity);
    const target = own ? { patientId: own } : {};
    const readable = await Promise.all(DATA_AREAS.map(async (area) => (await this.policy.decide('read', area, target)).allowed));
    if (!readable.includes(true)) return [];
    const restricted = own ? [] : await this.policy.restrictedPatientIds();
    const rows = await this.store.read((tx) =>
      tx.ehr.findMany({
        where: { isQueryable: true, ...(own ? { patientId: own } : { patientId: { notIn: restricted } }) },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: cap + 1,
      }),
    );
    if (rows.length > cap) throw validationError(`More than ${cap} EHRs match; narrow the query (an EHR id, or a composition it contains)`);
    return rows.map(view);
  }

  async forPatient(patientId: string): Promise<EhrView | null> {
    const row = await this.byPatient.load(patientId);
    return row ? view(row) : null;
  }

  private commit(id: string, ehrId: string, reason: string | null | undefined) {
    return { tenantId: this.store.tenantId, id, committer: this.store.identity.sub, systemId: this.systemId, ehrId, reason };
  }

  /** EHR_STATUS: a non-modifiable EHR takes no new compositions; a non-queryable one is left out of lists. Each change is a CONTRIBUTION. */
  async updateStatus(
    ehrId: string,
    change: { isQueryable?: boolean | null; isModifiable?: boolean | null },
    reason?: string | null,
    ifVersion?: number,
  ): Promise<EhrView> {
    const prepared = await this.prepareStatusChange(ehrId, change, ifVersion);
    const contributionId = randomUUID();
    const row = await this.store.change(reason, async (tx, audit) => {
      const { row, version } = await prepared.write(tx, audit, contributionId);
      await writeStatusContribution(tx, { ...this.commit(contributionId, ehrId, reason), version });
      return row;
    });
    prepared.committed?.();
    return view(row);
  }

  /**
   * An EHR_STATUS change checked and ready to write in a caller's transaction
   * (a status change of its own, or one version of a CONTRIBUTION). With
   * `ifVersion`, the write fails (412) unless that is still the latest version.
   */
  async prepareStatusChange(
    ehrId: string,
    change: { isQueryable?: boolean | null; isModifiable?: boolean | null },
    ifVersion?: number,
  ): Promise<PreparedVersion<{ row: EhrRow; version: number }>> {
    const current = await this.get(ehrId);
    assertCan(this.store.identity, 'changeEhrStatus');
    const data = {
      ...(typeof change.isQueryable === 'boolean' ? { isQueryable: change.isQueryable } : {}),
      ...(typeof change.isModifiable === 'boolean' ? { isModifiable: change.isModifiable } : {}),
    };
    return {
      uid: statusVersionUid(this.systemId, ehrId, (ifVersion ?? 0) + 1),
      type: 'EHR_STATUS',
      changeType: 'modification',
      write: async (tx, audit, contributionId) => {
        await assertRowVersion(tx, 'Ehr', this.store.tenantId, STATUS_ENTITY, ehrId, ifVersion);
        const [row] = await tx.ehr.updateManyAndReturn({ where: { id: ehrId }, data });
        await audit.record({
          action: 'update',
          entityType: 'EhrStatus',
          entityId: ehrId,
          before: { isQueryable: current.status.isQueryable, isModifiable: current.status.isModifiable },
          after: { isQueryable: row.isQueryable, isModifiable: row.isModifiable, contributionId },
        });
        // The version this change made: EHR_STATUS versions are the EHR's status audit records.
        const version = await tx.auditRecord.count({ where: { entityType: { in: STATUS_ENTITY }, entityId: ehrId } });
        return { row, version };
      },
      committed: () => void this.byPatient.clear(current.patientId),
    };
  }
}
