import { validationError } from '../../../common/errors';
import type { TenantStore } from '../db/store';
import {
  ACCESS_AREAS,
  assertAllowed,
  assertCan,
  assertReachesRecords,
  CONFIGURABLE_ROLES,
  decide,
  effectiveGrant,
  type AccessArea,
  type Action,
  type ConfigurableRole,
  type Decision,
  type PolicyOverride,
  type Target,
} from './rules';

export interface PolicyEntry {
  role: ConfigurableRole;
  area: AccessArea;
  canRead: boolean;
  canWrite: boolean;
  source: 'default' | 'tenant';
  updatedAt: Date | null;
  updatedBy: string | null;
}

/** The tenant's access policy for one request: defaults plus the tenant's overrides (loaded once). */
export class AccessPolicyService {
  private loaded?: Promise<Array<PolicyOverride & { updatedAt: Date; updatedBy: string }>>;
  private restrictedIds?: Promise<Set<string>>;

  constructor(private readonly store: TenantStore) {}

  private overrides() {
    return (this.loaded ??= this.store.read(async (tx) => {
      const rows = await tx.accessPolicyRule.findMany();
      return rows.map((r) => ({ ...r, role: r.role as ConfigurableRole, area: r.area as AccessArea }));
    }));
  }

  /**
   * Whether the patient's record is restricted (GDPR art. 18). One query per request for the tenant's
   * restricted patients (the few with an erasure or restriction request), not one per patient: a
   * per-patient lookup would be awaited before each resolver's batched loads and undo their batching.
   */
  private async isRestricted(patientId: string): Promise<boolean> {
    return (await this.restrictedPatients()).has(patientId);
  }

  /** The target with the patient's restriction, which every decision about one patient takes into account. */
  private async withRestriction(target: Target): Promise<Target> {
    return target.patientId === undefined ? target : { ...target, restricted: await this.isRestricted(target.patientId) };
  }

  /** The policy decision (rules.ts) for this request's caller, with the tenant's overrides. */
  async decide(action: Action, area: AccessArea, target: Target = {}): Promise<Decision> {
    const [overrides, full] = await Promise.all([this.overrides(), this.withRestriction(target)]);
    return decide(this.store.identity, action, area, full, overrides);
  }

  async assert(action: Action, area: AccessArea, target: Target = {}): Promise<void> {
    const [overrides, full] = await Promise.all([this.overrides(), this.withRestriction(target)]);
    assertAllowed(this.store.identity, action, area, full, overrides);
  }

  /** FORBIDDEN unless the caller reaches some patient's record (rules.ts). */
  assertReachesRecords(): void {
    assertReachesRecords(this.store.identity);
  }

  /** The tenant's restricted patients, which tenant-wide lists leave out (loaded once per request). */
  async restrictedPatientIds(): Promise<string[]> {
    return [...(await this.restrictedPatients())];
  }

  private restrictedPatients(): Promise<Set<string>> {
    return (this.restrictedIds ??= this.store.read(
      async (tx) => new Set((await tx.patient.findMany({ where: { restrictedAt: { not: null } }, select: { id: true } })).map((p) => p.id)),
    ));
  }

  /** Forgets the restrictions loaded in this request (after restricting a record in it). */
  forgetRestriction(): void {
    this.restrictedIds = undefined;
  }

  async entries(): Promise<PolicyEntry[]> {
    assertCan(this.store.identity, 'manageAccessPolicy');
    const overrides = await this.overrides();
    return CONFIGURABLE_ROLES.flatMap((role) =>
      ACCESS_AREAS.map((area) => {
        const override = overrides.find((o) => o.role === role && o.area === area);
        const grant = effectiveGrant(role, area, overrides);
        return {
          role,
          area,
          canRead: grant.read,
          canWrite: grant.write,
          source: override ? 'tenant' : 'default',
          updatedAt: override?.updatedAt ?? null,
          updatedBy: override?.updatedBy ?? null,
        };
      }),
    );
  }

  /** An admin changes one role × area permission of the tenant (audited). */
  async set(role: string, area: string, canRead: boolean, canWrite: boolean, reason?: string | null): Promise<PolicyEntry> {
    assertCan(this.store.identity, 'manageAccessPolicy');
    if (!(CONFIGURABLE_ROLES as readonly string[]).includes(role))
      throw validationError(`Role '${role}' is not configurable`, [{ path: 'role', message: `one of ${CONFIGURABLE_ROLES.join(', ')}` }]);
    if (!(ACCESS_AREAS as readonly string[]).includes(area))
      throw validationError(`Unknown area '${area}'`, [{ path: 'area', message: `one of ${ACCESS_AREAS.join(', ')}` }]);
    if (canWrite && !canRead) throw validationError('Write access needs read access', [{ path: 'canRead', message: 'must be true when canWrite is true' }]);
    const before = effectiveGrant(role as ConfigurableRole, area as AccessArea, await this.overrides());
    const row = await this.store.change(reason, async (tx, audit) => {
      const key = { tenantId: this.store.tenantId, role, area };
      const saved = await tx.accessPolicyRule.upsert({
        where: { tenantId_role_area: key },
        create: { ...key, canRead, canWrite, updatedBy: this.store.identity.sub },
        update: { canRead, canWrite, updatedBy: this.store.identity.sub },
      });
      await audit.record({
        action: 'update',
        entityType: 'AccessPolicy',
        entityId: `${role}:${area}`,
        before: { role, area, canRead: before.read, canWrite: before.write },
        after: { role, area, canRead, canWrite },
      });
      return saved;
    });
    this.loaded = undefined;
    return {
      role: role as ConfigurableRole,
      area: area as AccessArea,
      canRead,
      canWrite,
      source: 'tenant',
      updatedAt: row.updatedAt,
      updatedBy: row.updatedBy,
    };
  }
}
