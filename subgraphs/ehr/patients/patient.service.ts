import { randomUUID } from 'node:crypto';
import { DATE_ONLY, isCalendarDate } from '../../../common/dates';
import DataLoader from 'dataloader';
import { z } from 'zod';
import type { FieldCipher } from '../../../common/crypto';
import { AppError, notFound, validationError, zodDetails } from '../../../common/errors';
import type { Patient as PatientRow } from '../db/generated/client';
import type { TenantStore } from '../db/store';
import { assertCan, can, recordScope } from '../policy/rules';
import type { AccessPolicyService } from '../policy/access-policy.service';
import { conflictOnDuplicate } from '../../../common/db/unique-violation';
import { parsePaging, type Page } from '../common/paging';
import type { Prisma } from '../db/generated/client';
import { assertRowVersion, auditVersions, currentVersions } from '../audit/versions';
import { writeStatusContribution } from '../records/contributions';

const PATIENT_ENTITY = ['Patient'];

export interface PatientView {
  id: string;
  ehrId: string;
  /** Either part may be absent (`given` empty, `family` null): a patient may be registered without a name, as FHIR allows. */
  name: { given: string[]; family: string | null };
  birthDate: string | null;
  gender: string | null;
  contact: { phone: string | null; email: string | null };
}

const calendarDate = z.string().regex(DATE_ONLY, 'must be YYYY-MM-DD').refine(isCalendarDate, 'is not a calendar date');
const demographics = {
  givenNames: z.array(z.string().trim().min(1).max(100)).min(1).max(5),
  family: z.string().trim().min(1).max(100),
  birthDate: calendarDate.nullable().optional(),
  gender: z.enum(['male', 'female', 'other', 'unknown']).nullable().optional(),
  phone: z
    .string()
    .regex(/^\+[1-9]\d{6,14}$/, 'must be E.164, e.g. +31612345678')
    .nullable()
    .optional(),
  email: z
    .string()
    .max(254)
    .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'is not an e-mail address')
    .nullable()
    .optional(),
};
const createSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/)
    .optional(),
  ...demographics,
  // A name is optional (FHIR Patient.name 0..*): both parts or neither (nameOrNone).
  givenNames: demographics.givenNames.nullable().optional(),
  family: demographics.family.nullable().optional(),
});
/** null clears a field; the name's two parts are cleared together (nameOrNone). */
const updateSchema = z.strictObject({ ...demographics, givenNames: demographics.givenNames.nullable(), family: demographics.family.nullable() }).partial();

/** A patient has a name (a family name and at least one given name) or, registered without one, neither part. */
function nameOrNone(name: { givenNames: string[]; family: string | null }): void {
  if (name.givenNames.length > 0 !== (name.family !== null))
    throw validationError('A patient has both a family name and given names, or no name at all', [
      { path: name.family === null ? 'family' : 'givenNames', message: 'required with the other part of the name' },
    ]);
}

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) throw validationError('Invalid patient data', zodDetails(result.error.issues));
  return result.data;
}

/** The row as the audit trail keeps it: contact details stay ciphertext. */
function snapshot(row: PatientRow) {
  const { tenantId, createdAt, updatedAt, ...rest } = row;
  return rest;
}

/** Demographics of the caller's tenant; one instance per request (its DataLoader batches entity lookups). */
export class PatientService {
  private readonly loader: DataLoader<string, PatientRow | null>;

  constructor(
    private readonly store: TenantStore,
    private readonly cipher: FieldCipher,
    private readonly policy: AccessPolicyService,
    private readonly systemId: string,
  ) {
    this.loader = new DataLoader((ids) =>
      store.read(async (tx) => {
        const rows = await tx.patient.findMany({ where: { id: { in: [...ids] }, deletedAt: null } });
        await store.logAccess(
          tx,
          rows.map((row) => ({ entityType: 'Patient', entityId: row.id, patientId: row.id })),
        );
        const byId = new Map(rows.map((row) => [row.id, row]));
        return ids.map((id) => byId.get(id) ?? null);
      }),
    );
  }

  /** The patient, or null when absent, of another tenant, or hidden from the caller. */
  async find(id: string): Promise<PatientView | null> {
    const decision = await this.policy.decide('read', 'demographics', { patientId: id });
    if (!decision.allowed) {
      if (decision.hide) return null;
      throw new AppError('FORBIDDEN', `Not allowed: ${decision.reason}`);
    }
    const row = await this.loader.load(id);
    return row ? this.toView(row) : null;
  }

  async get(id: string): Promise<PatientView> {
    const patient = await this.find(id);
    if (!patient) throw notFound('Patient', id);
    return patient;
  }

  /** Staff search by family name prefix or exact id, family name order. */
  async list(search: string | null | undefined, limit?: number | null, offset?: number | null): Promise<Page<PatientView>> {
    assertCan(this.store.identity, 'listPatients');
    await this.policy.assert('read', 'demographics');
    const paging = parsePaging(limit, offset);
    const term = search?.trim();
    const where = {
      deletedAt: null,
      restrictedAt: null,
      ...(term ? { OR: [{ id: term }, { family: { startsWith: term, mode: 'insensitive' as const } }] } : {}),
    };
    return this.store.read(async (tx) => {
      const [rows, total] = await Promise.all([
        tx.patient.findMany({ where, orderBy: [{ family: 'asc' }, { id: 'asc' }], take: paging.limit, skip: paging.offset }),
        tx.patient.count({ where }),
      ]);
      await this.store.logAccess(
        tx,
        rows.map((row) => ({ entityType: 'Patient', entityId: row.id, patientId: row.id, action: 'list' as const })),
      );
      return { data: rows.map((row) => this.toView(row)), pagination: { ...paging, total } };
    });
  }

  /** A new patient with its EHR (a UUID, as openEHR EHR ids are; the seeded demo EHRs keep `ehr-<patient id>`). */
  async create(input: object, reason?: string | null): Promise<PatientView> {
    assertCan(this.store.identity, 'registerPatients');
    await this.policy.assert('write', 'demographics');
    const data = parse(createSchema, input);
    nameOrNone({ givenNames: data.givenNames ?? [], family: data.family ?? null });
    const id = data.id ?? `p-${randomUUID()}`;
    const ehrId = randomUUID();
    const row = await this.store
      .change(reason, async (tx, audit) => {
        const created = await tx.patient.create({
          data: {
            tenantId: this.store.tenantId,
            id,
            ehrId,
            givenNames: data.givenNames ?? [],
            family: data.family ?? null,
            birthDate: data.birthDate ?? null,
            gender: data.gender ?? null,
            phoneEnc: this.cipher.encryptOptional(data.phone),
            emailEnc: this.cipher.encryptOptional(data.email),
          },
        });
        const ehr = await tx.ehr.create({ data: { tenantId: this.store.tenantId, id: ehrId, patientId: id } });
        await audit.record({ action: 'create', entityType: 'Patient', entityId: id, after: snapshot(created) });
        // The EHR's first EHR_STATUS version, committed in a CONTRIBUTION of its own.
        const contributionId = randomUUID();
        await audit.record({
          action: 'create',
          entityType: 'Ehr',
          entityId: ehrId,
          after: { patientId: id, isQueryable: ehr.isQueryable, isModifiable: ehr.isModifiable, contributionId },
        });
        const commit = { tenantId: this.store.tenantId, id: contributionId, committer: this.store.identity.sub, systemId: this.systemId, ehrId, version: 1 };
        await writeStatusContribution(tx, { ...commit, reason });
        return created;
      })
      .catch((err) => conflictOnDuplicate(err, `Patient '${id}' already exists`));
    return this.toView(row);
  }

  /**
   * Patients matching a search built by the exchange APIs, in family name order;
   * staff search the tenant, a patient finds only their own record.
   */
  /** `orderBy` comes first; family and id keep the order stable. */
  async search(
    where: Prisma.PatientWhereInput,
    limit: number,
    offset: number,
    orderBy: Prisma.PatientOrderByWithRelationInput[] = [],
  ): Promise<Page<PatientView>> {
    const own = recordScope(this.store.identity);
    await this.policy.assert('read', 'demographics', own === undefined ? {} : { patientId: own });
    const scoped: Prisma.PatientWhereInput = { AND: [where, { deletedAt: null, restrictedAt: null }, ...(own !== undefined ? [{ id: own }] : [])] };
    return this.store.read(async (tx) => {
      const [rows, total] = await Promise.all([
        tx.patient.findMany({ where: scoped, orderBy: [...orderBy, { family: 'asc' }, { id: 'asc' }], take: limit, skip: offset }),
        tx.patient.count({ where: scoped }),
      ]);
      await this.store.logAccess(
        tx,
        rows.map((row) => ({ entityType: 'Patient', entityId: row.id, patientId: row.id, action: 'list' as const })),
      );
      return { data: rows.map((row) => this.toView(row)), pagination: { limit, offset, total } };
    });
  }

  /** The current version number and time of each patient (from the audit trail, see audit/versions.ts). */
  versionsOf(ids: string[]): Promise<Map<string, { version: number; at: Date | null }>> {
    return this.store.read((tx) => currentVersions(tx, PATIENT_ENTITY, ids));
  }

  /** Every version of a readable patient, oldest first, rebuilt from the audit snapshots. */
  async history(id: string): Promise<Array<{ version: number; at: Date; patient: PatientView }>> {
    await this.get(id);
    const versions = await this.store.read((tx) => auditVersions(tx, PATIENT_ENTITY, id));
    // Each version is the earlier state with its audit record's `after` applied (snapshots may be partial).
    let state = {} as PatientRow;
    return versions.map((v) => {
      state = { ...state, ...(v.after as object), id };
      return { version: v.version, at: v.at, patient: this.toView(state) };
    });
  }

  /** Changes demographics; a patient may change only their own contact details. `ifVersion` makes it version-aware. */
  async update(id: string, input: object, reason?: string | null, ifVersion?: number): Promise<PatientView> {
    await this.policy.assert('write', 'demographics', { patientId: id });
    const data = parse(updateSchema, input);
    if (!can(this.store.identity, 'editAllDemographics')) {
      const other = Object.keys(data).filter((k) => k !== 'phone' && k !== 'email');
      if (other.length > 0) throw new AppError('FORBIDDEN', `A patient may change only their contact details (not ${other.join(', ')})`);
    }
    if (Object.keys(data).length === 0) throw validationError('Nothing to change', [{ path: 'input', message: 'name at least one field' }]);
    const row = await this.store.change(reason, async (tx, audit) => {
      const before = await tx.patient.findFirst({ where: { id, deletedAt: null } });
      if (!before) throw notFound('Patient', id);
      await assertRowVersion(tx, 'Patient', this.store.tenantId, PATIENT_ENTITY, id, ifVersion);
      const { phone, email, givenNames, ...plain } = data;
      const names = { ...(givenNames !== undefined ? { givenNames: givenNames ?? [] } : {}) };
      nameOrNone({ givenNames: names.givenNames ?? before.givenNames, family: plain.family === undefined ? before.family : plain.family });
      const [after] = await tx.patient.updateManyAndReturn({
        where: { id },
        data: {
          ...plain,
          ...names,
          ...(phone !== undefined ? { phoneEnc: this.cipher.encryptOptional(phone) } : {}),
          ...(email !== undefined ? { emailEnc: this.cipher.encryptOptional(email) } : {}),
        },
      });
      await audit.record({ action: 'update', entityType: 'Patient', entityId: id, before: snapshot(before), after: snapshot(after) });
      return after;
    });
    this.loader.clear(id);
    return this.toView(row);
  }

  /** Contact details are decrypted when first read: most reads (names in an inbox) never ask for them. */
  private toView(row: PatientRow): PatientView {
    const cipher = this.cipher;
    let contact: PatientView['contact'] | undefined;
    return {
      id: row.id,
      ehrId: row.ehrId,
      name: { given: row.givenNames, family: row.family },
      birthDate: row.birthDate,
      gender: row.gender,
      get contact() {
        return (contact ??= { phone: cipher.decryptOptional(row.phoneEnc), email: cipher.decryptOptional(row.emailEnc) });
      },
    };
  }
}
