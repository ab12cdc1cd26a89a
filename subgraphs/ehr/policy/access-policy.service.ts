import { validationError } from '../../../common/errors';
import type { TenantStore } from '../db/store';
import {
  ACCESS_AREAS,
  assertAllowed,
  assertCan,
  CONFIGURABLE_ROLES,
  decide,
  staffGrant,
  type AccessArea,
  type Action,
  type ConfigurableRole,
  type Decision,
  type PolicyOverride,
  type Target,
} from '../access';

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

  constructor(private readonly store: TenantStore) {}

  private overrides() {
    return (this.loaded ??= this.store.read(async (tx) => {
      const rows = await tx.accessPolicyRule.findMany();
      return rows.map((r) => ({ ...r, role: r.role as ConfigurableRole, area: r.area as AccessArea }));
    }));
  }

  async decide(action: Action, area: AccessArea, target: Target = {}): Promise<Decision> {
    return decide(this.store.identity, action, area, target, await this.overrides());
  }

  async assert(action: Action, area: AccessArea, target: Target = {}): Promise<void> {
    assertAllowed(this.store.identity, action, area, target, await this.overrides());
  }

  async entries(): Promise<PolicyEntry[]> {
    assertCan(this.store.identity, 'manageAccessPolicy', 'read the access policy');
    const overrides = await this.overrides();
    return CONFIGURABLE_ROLES.flatMap((role) =>
      ACCESS_AREAS.map((area) => {
        const override = overrides.find((o) => o.role === role && o.area === area);
        const grant = staffGrant(role, area, overrides);
        return { role, area, canRead: grant.read, canWrite: grant.write, source: override ? 'tenant' : 'default', updatedAt: override?.updatedAt ?? null, updatedBy: override?.updatedBy ?? null } as PolicyEntry;
      }),
    );
  }

  /** An admin changes one role × area permission of the tenant (audited). */
  async set(role: string, area: string, canRead: boolean, canWrite: boolean, reason?: string | null): Promise<PolicyEntry> {
    assertCan(this.store.identity, 'manageAccessPolicy', 'change access policies');
    if (!(CONFIGURABLE_ROLES as readonly string[]).includes(role)) throw validationError(`Role '${role}' is not configurable`, [{ path: 'role', message: `one of ${CONFIGURABLE_ROLES.join(', ')}` }]);
    if (!(ACCESS_AREAS as readonly string[]).includes(area)) throw validationError(`Unknown area '${area}'`, [{ path: 'area', message: `one of ${ACCESS_AREAS.join(', ')}` }]);
    if (canWrite && !canRead) throw validationError('Write access needs read access', [{ path: 'canRead', message: 'must be true when canWrite is true' }]);
    const before = staffGrant(role as ConfigurableRole, area as AccessArea, await this.overrides());
    const row = await this.store.change(reason, async (tx, audit) => {
      const key = { tenantId: this.store.tenantId, role, area };
      const saved = await tx.accessPolicyRule.upsert({
        where: { tenantId_role_area: key },
        create: { ...key, canRead, canWrite, updatedBy: this.store.identity.sub },
        update: { canRead, canWrite, updatedBy: this.store.identity.sub },
      });
      await audit.record({ action: 'update', entityType: 'AccessPolicy', entityId: `${role}:${area}`, before: { role, area, canRead: before.read, canWrite: before.write }, after: { role, area, canRead, canWrite } });
      return saved;
    });
    this.loaded = undefined;
    return { role: role as ConfigurableRole, area: area as AccessArea, canRead, canWrite, source: 'tenant', updatedAt: row.updatedAt, updatedBy: row.updatedBy };
  }
}
