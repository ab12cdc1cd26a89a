import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { AppError, notFound, validationError } from '../../../common/errors';
import { isUniqueViolation } from '../../../common/db/unique-violation';
import type { FieldCipher } from '../../../common/crypto';
import type { Ehr as EhrRow } from '../db/generated/client';
import type { TenantStore } from '../db/store';
import type { TenantTx } from '../db/tenant';
import { assertCan, DATA_AREAS, recordScope } from '../policy/rules';
import type { AccessPolicyService } from '../policy/access-policy.service';
import { assertRowVersion, auditVersions, type AuditVersion } from '../audit/versions';
import { statusVersionUid, writeStatusContribution, type AlsoWrite, type PreparedVersion } from './contributions';
import type { CommitAudit } from '../compositions/composition.service';

/** The subject namespace of CareGraph patient ids. */
const PATIENT_NAMESPACE = 'caregraph';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type Subject = { id: string; namespace: string };

export interface NewEhr {
  /** PUT /ehr/{ehr_id}: the id the caller chose (a UUID). */
  ehrId?: string;
  /** EHR_STATUS.subject.external_ref; none = a bare PARTY_SELF. */
  subject?: Subject;
  isQueryable?: boolean;
  isModifiable?: boolean;
  /** The EHR_STATUS as its writer sent it (openEHR), kept encrypted as version 1. */
  written?: Record<string, unknown>;
}

/** A change of EHR_STATUS: its flags, or (openEHR) the whole EHR_STATUS as written with the subject it names (null: none). */
export interface StatusChange {
  isQueryable?: boolean | null;
  isModifiable?: boolean | null;
  written?: { status: Record<string, unknown>; subject: Subject | null };
}

/** The latest EHR_STATUS version of an EHR, from its audit record, with the status as last written. */
export interface LatestStatus {
  version: number;
  at: Date;
  actor: string;
  reason: string | null;
  contributionId: string | null;
  /** What the committer said of this version (openEHR-AUDIT_DETAILS, openEHR-VERSION). */
  commitAudit?: CommitAudit;
  written?: Record<string, unknown>;
}

/**
 * EHR_STATUS versions are their audit records, so a version's commit audit is kept in its record's `after`
 * (the audit trail then holds what the committer claimed beside who they are).
 */
const commitAuditOut = (audit: CommitAudit | undefined) => (audit && Object.keys(audit).length ? { commitAudit: { ...audit } } : {});
export const commitAuditIn = (after: Record<string, unknown>): { commitAudit?: CommitAudit } =>
  typeof after.commitAudit === 'object' && after.commitAudit !== null ? { commitAudit: after.commitAudit } : {};

/** EHR_STATUS versions: the EHR's creation, then each status change. */
const STATUS_ENTITY = ['Ehr', 'EhrStatus'];

export interface EhrView {
  id: string;
  patientId: string;
  /** The subject as its writer named it, when not a CareGraph patient id (namespace `caregraph`). */
  subject?: Subject;
  /** Created without a subject: EHR_STATUS.subject is a bare PARTY_SELF. */
  subjectUnnamed: boolean;
  createdAt: Date;
  status: { isQueryable: boolean; isModifiable: boolean; updatedAt: Date };
}

/** Whether the EHR is a registered patient's (created with the patient, not through openEHR for a subject of its own). */
export const isRegisteredPatients = (ehr: EhrView): boolean => !ehr.subject && !ehr.subjectUnnamed;

/** The EHR's subject: its patient (namespace `caregraph`) for a registered patient, else the one written, if any. */
export const subjectOf = (ehr: EhrView): Subject | null =>
  isRegisteredPatients(ehr) ? { id: ehr.patientId, namespace: PATIENT_NAMESPACE } : (ehr.subject ?? null);

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
    private readonly cipher: FieldCipher,
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

  /** The EHR as a caller's answer: `get`, logged as read (`get` alone serves the checks of other paths, which log what they disclose). */
  async read(ehrId: string): Promise<EhrView> {
    const ehr = await this.get(ehrId);
    await this.logRead(ehr);
    return ehr;
  }

  /** Logs an EHR (its subject and status) as read by the caller (NEN 7513). */
  async logRead(ehr: EhrView): Promise<void> {
    await this.store.read((tx) => this.store.logAccess(tx, [{ entityType: 'EHR', entityId: ehr.id, patientId: ehr.patientId }]));
  }

  /**
   * EHR_STATUS versions of a readable EHR, oldest first (from the audit trail), each with the EHR_STATUS as
   * last written at or before it (a flag change through GraphQL writes none; EHRs from before written
   * statuses were kept have none).
   */
  async statusVersions(ehrId: string): Promise<Array<AuditVersion & { written?: Record<string, unknown> }>> {
    await this.get(ehrId);
    const [versions, written] = await this.store.read((tx) =>
      Promise.all([auditVersions(tx, STATUS_ENTITY, ehrId), tx.ehrStatusVersion.findMany({ where: { ehrId }, orderBy: { version: 'asc' } })]),
    );
    let last: Record<string, unknown> | undefined;
    return versions.map((v) => {
      const row = written.find((w) => w.version === v.version);
      if (row) last = this.decryptStatus(row.contentEnc);
      return { ...v, ...(last ? { written: last } : {}) };
    });
  }

  /**
   * The latest EHR_STATUS version of EHRs a caller has already chosen by policy (an AQL query's): its audit
   * record (number, time, committer) and content as written. An EHR without status records is version 1.
   */
  async latestStatuses(ehrIds: string[]): Promise<Map<string, LatestStatus>> {
    const [records, written] = await this.store.read((tx) =>
      Promise.all([
        tx.auditRecord.findMany({
          where: { entityType: { in: STATUS_ENTITY }, entityId: { in: ehrIds } },
          orderBy: { seq: 'asc' },
          select: { entityId: true, at: true, actor: true, reason: true, after: true },
        }),
        tx.ehrStatusVersion.findMany({ where: { ehrId: { in: ehrIds } }, orderBy: [{ ehrId: 'asc' }, { version: 'desc' }], distinct: ['ehrId'] }),
      ]),
    );
    const latest = new Map<string, LatestStatus>();
    for (const r of records) {
      const after = (r.after ?? {}) as Record<string, unknown>;
      latest.set(r.entityId, {
        version: (latest.get(r.entityId)?.version ?? 0) + 1,
        at: r.at,
        actor: r.actor,
        reason: r.reason,
        contributionId: typeof after.contributionId === 'string' ? after.contributionId : null,
        ...commitAuditIn(after),
      });
    }
    for (const w of written) {
      const status = latest.get(w.ehrId);
      if (status) status.written = this.decryptStatus(w.contentEnc);
    }
    return latest;
  }

  private decryptStatus(contentEnc: string): Record<string, unknown> {
    return JSON.parse(this.cipher.decrypt(contentEnc)) as Record<string, unknown>;
  }

  /** Keeps an EHR_STATUS version as written, encrypted (its writer's details are free content). */
  private async writeStatus(tx: TenantTx, ehrId: string, version: number, status: Record<string, unknown>) {
    await tx.ehrStatusVersion.create({
      data: {
        tenantId: this.store.tenantId,
        ehrId,
        version,
        uid: statusVersionUid(this.systemId, ehrId, version),
        contentEnc: this.cipher.encrypt(JSON.stringify(status)),
      },
    });
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
  async create(input: NewEhr, reason?: string | null, commitAudit?: CommitAudit): Promise<EhrView> {
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
          after: {
            patientId,
            subject: subject ?? null,
            isQueryable: ehr.isQueryable,
            isModifiable: ehr.isModifiable,
            contributionId,
            ...commitAuditOut(commitAudit),
          },
        });
        await writeStatusContribution(tx, { ...this.commit(contributionId, ehrId, reason), version: 1, audit: commitAudit });
        if (input.written) await this.writeStatus(tx, ehrId, 1, input.written);
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
  async queryable(cap: number, options: { withDirectory?: boolean } = {}): Promise<EhrView[]> {
    const own = recordScope(this.store.identity);
    const target = own ? { patientId: own } : {};
    const readable = await Promise.all(DATA_AREAS.map(async (area) => (await this.policy.decide('read', area, target)).allowed));
    if (!readable.includes(true)) return [];
    const restricted = own ? [] : await this.policy.restrictedPatientIds();
    const rows = await this.store.read(async (tx) => {
      // A query about folders needs only the EHRs that have a directory: usually few of a tenant's. More than the
      // cap of them narrow nothing (the EHRs then exceed it too).
      const directories = options.withDirectory ? await tx.directory.findMany({ where: { deletedAt: null }, select: { ehrId: true }, take: cap + 1 }) : [];
      const filed = options.withDirectory && directories.length <= cap ? { id: { in: directories.map((d) => d.ehrId) } } : {};
      return tx.ehr.findMany({
        where: { isQueryable: true, ...filed, ...(own ? { patientId: own } : { patientId: { notIn: restricted } }) },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: cap + 1,
      });
    });
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

  /**
   * EHR_STATUS: a non-modifiable EHR takes no new compositions; a non-queryable one is left out of lists.
   * Each change is a CONTRIBUTION. A subject named in namespace `caregraph` is a registered patient, so the
   * EHR of one never changes subject, and no EHR takes one on; any other EHR may name a new subject (or none)
   * that no other EHR has.
   */
  async updateStatus(
    ehrId: string,
    change: StatusChange,
    reason?: string | null,
    ifVersion?: number,
    commitAudit?: CommitAudit,
    also?: AlsoWrite<{ row: EhrRow; version: number }>,
  ): Promise<EhrView> {
    const prepared = await this.prepareStatusChange(ehrId, change, ifVersion, commitAudit);
    const contributionId = randomUUID();
    const row = await this.store.change(reason, async (tx, audit) => {
      const written = await prepared.write(tx, audit, contributionId);
      const { row, version } = written;
      await writeStatusContribution(tx, { ...this.commit(contributionId, ehrId, reason), version, audit: commitAudit });
      await also?.(tx, audit, written);
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
    change: StatusChange,
    ifVersion?: number,
    commitAudit?: CommitAudit,
  ): Promise<PreparedVersion<{ row: EhrRow; version: number }>> {
    const current = await this.get(ehrId);
    assertCan(this.store.identity, 'changeEhrStatus');
    const subject = change.written ? await this.subjectChange(current, change.written.subject) : undefined;
    const data = {
      ...(typeof change.isQueryable === 'boolean' ? { isQueryable: change.isQueryable } : {}),
      ...(typeof change.isModifiable === 'boolean' ? { isModifiable: change.isModifiable } : {}),
      ...subject,
    };
    return {
      uid: statusVersionUid(this.systemId, ehrId, (ifVersion ?? 0) + 1),
      type: 'EHR_STATUS',
      changeType: 'modification',
      write: async (tx, audit, contributionId) => {
        await assertRowVersion(tx, 'Ehr', this.store.tenantId, STATUS_ENTITY, ehrId, ifVersion);
        const [row] = await tx.ehr.updateManyAndReturn({ where: { id: ehrId }, data }).catch((err) => {
          // Another EHR took the subject between the check and this write.
          throw isUniqueViolation(err) ? subjectTaken() : err;
        });
        const named = (r: { subjectId: string | null; subjectNamespace: string | null }) =>
          r.subjectId && r.subjectNamespace ? { id: r.subjectId, namespace: r.subjectNamespace } : null;
        await audit.record({
          action: 'update',
          entityType: 'EhrStatus',
          entityId: ehrId,
          before: {
            isQueryable: current.status.isQueryable,
            isModifiable: current.status.isModifiable,
            ...(subject ? { subject: current.subject ?? null } : {}),
          },
          after: {
            isQueryable: row.isQueryable,
            isModifiable: row.isModifiable,
            ...(subject ? { subject: named(row) } : {}),
            contributionId,
            ...commitAuditOut(commitAudit),
          },
        });
        // The version this change made: EHR_STATUS versions are the EHR's status audit records.
        const version = await tx.auditRecord.count({ where: { entityType: { in: STATUS_ENTITY }, entityId: ehrId } });
        if (change.written) await this.writeStatus(tx, ehrId, version, change.written.status);
        return { row, version };
      },
      committed: () => void this.byPatient.clear(current.patientId),
    };
  }

  /** The subject columns a written EHR_STATUS changes (undefined: none); 400 or 409 when it may not. */
  private async subjectChange(current: EhrView, next: Subject | null) {
    const now = subjectOf(current);
    if (next?.id === now?.id && next?.namespace === now?.namespace) return undefined;
    if (isRegisteredPatients(current))
      throw validationError("The subject of a registered patient's EHR cannot change", [{ path: 'subject', message: "differs from the EHR's subject" }]);
    if (next?.namespace === PATIENT_NAMESPACE)
      throw validationError(`A subject in namespace ${PATIENT_NAMESPACE} is a registered patient, who has an EHR of their own`, [
        { path: 'subject.external_ref.namespace', message: `${PATIENT_NAMESPACE} not allowed here` },
      ]);
    if (next) {
      const taken = await this.store.read((tx) => tx.ehr.findFirst({ where: { subjectNamespace: next.namespace, subjectId: next.id }, select: { id: true } }));
      if (taken) throw subjectTaken();
    }
    return { subjectId: next?.id ?? null, subjectNamespace: next?.namespace ?? null, subjectUnnamed: !next };
  }
}

const subjectTaken = () => new AppError('CONFLICT', 'The subject already has an EHR', [{ path: 'subject', message: 'EHR exists' }]);
