import type { Identity, Role } from '../../common/auth/principal';
import { AppError } from '../../common/errors';

/**
 * The clinical record's access policy: role-based defaults (CONTRACT §3
 * roles) refined by attributes: the tenant (enforced in the data layer), the
 * patient's own record, the patient's consent, and per-tenant overrides of the
 * role × area matrix that an admin may set. Pure functions: the services load
 * the attributes and ask.
 */

export const DATA_AREAS = ['encounter', 'observation', 'order', 'document'] as const;
export type DataArea = (typeof DATA_AREAS)[number];
export const ACCESS_AREAS = ['demographics', 'appointment', 'consent', ...DATA_AREAS] as const;
export type AccessArea = (typeof ACCESS_AREAS)[number];
export type Action = 'read' | 'write';

export const CONSENT_PURPOSES = ['messaging', 'data_sharing', 'research', 'ai_assistance'] as const;
export type ConsentPurpose = (typeof CONSENT_PURPOSES)[number];
/** Without a consent record: messaging is part of care (opt-out); everything else needs an explicit grant (opt-in). */
export const CONSENT_DEFAULTS: Record<ConsentPurpose, boolean> = { messaging: true, data_sharing: false, research: false, ai_assistance: false };

/** Staff roles whose matrix a tenant admin may override; admin and patient are fixed. */
export const CONFIGURABLE_ROLES = ['clinician', 'nurse', 'receptionist', 'integration'] as const;
export type ConfigurableRole = (typeof CONFIGURABLE_ROLES)[number];

type Grant = '-' | 'r' | 'w' | 'rw';
const STAFF_DEFAULTS: Record<ConfigurableRole, Record<AccessArea, Grant>> = {
  clinician: { demographics: 'rw', appointment: 'rw', consent: 'rw', encounter: 'rw', observation: 'rw', order: 'rw', document: 'rw' },
  nurse: { demographics: 'r', appointment: 'r', consent: 'r', encounter: 'rw', observation: 'rw', order: 'r', document: 'r' },
  receptionist: { demographics: 'rw', appointment: 'rw', consent: 'rw', encounter: '-', observation: '-', order: '-', document: '-' },
  // Exchange partners and messaging: clinical reads only with the patient's data-sharing consent (below).
  integration: { demographics: 'r', appointment: 'r', consent: 'r', encounter: 'r', observation: 'rw', order: 'r', document: 'r' },
};
/** A patient, on their own record only. */
const PATIENT_GRANTS: Record<AccessArea, Grant> = {
  demographics: 'rw', appointment: 'r', consent: 'rw', encounter: 'r', observation: 'r', order: 'r', document: 'r',
};

export interface PolicyOverride {
  role: ConfigurableRole;
  area: AccessArea;
  canRead: boolean;
  canWrite: boolean;
}

export interface Target {
  /** The patient whose record is addressed; undefined for tenant-wide lists (staff only). */
  patientId?: string;
  /** The patient's current consents (only needed for integration reads of clinical data). */
  consents?: Partial<Record<ConsentPurpose, boolean>>;
}

export interface Decision {
  allowed: boolean;
  /** Deny as NOT_FOUND rather than FORBIDDEN: the caller must not learn the record exists. */
  hide: boolean;
  reason: string;
}

const allow = (reason: string): Decision => ({ allowed: true, hide: false, reason });
const deny = (reason: string, hide = false): Decision => ({ allowed: false, hide, reason });

function grants(grant: Grant, action: Action): boolean {
  return action === 'read' ? grant.includes('r') : grant.includes('w');
}

export function consentGiven(consents: Target['consents'], purpose: ConsentPurpose): boolean {
  return consents?.[purpose] ?? CONSENT_DEFAULTS[purpose];
}

/** The effective role × area grant of a staff role, tenant overrides applied. */
export function staffGrant(role: ConfigurableRole, area: AccessArea, overrides: PolicyOverride[] = []): { read: boolean; write: boolean } {
  const override = overrides.find((o) => o.role === role && o.area === area);
  if (override) return { read: override.canRead, write: override.canWrite };
  const grant = STAFF_DEFAULTS[role][area];
  return { read: grants(grant, 'read'), write: grants(grant, 'write') };
}

export function decide(identity: Identity, action: Action, area: AccessArea, target: Target = {}, overrides: PolicyOverride[] = []): Decision {
  if (identity.roles.includes('admin')) return allow('admin');
  const reasons: string[] = [];
  for (const role of identity.roles) {
    if (role === 'patient') {
      if (!target.patientId || target.patientId !== identity.patientId) {
        reasons.push('a patient reaches only their own record');
        continue;
      }
      if (grants(PATIENT_GRANTS[area], action)) return allow('own record');
      reasons.push(`a patient may not ${action} ${area} data`);
      continue;
    }
    if (role === 'admin') continue;
    const grant = staffGrant(role, area, overrides)[action];
    if (!grant) {
      reasons.push(`role ${role} may not ${action} ${area} data`);
      continue;
    }
    if (role === 'integration' && action === 'read' && (DATA_AREAS as readonly string[]).includes(area)) {
      if (!target.patientId) {
        reasons.push('integrations read clinical data per patient');
        continue;
      }
      if (!consentGiven(target.consents, 'data_sharing')) {
        reasons.push('the patient has not consented to data sharing');
        continue;
      }
      return allow('integration with data-sharing consent');
    }
    return allow(`role ${role}`);
  }
  // A caller who can see no part of this patient's record learns nothing about it.
  const seesPatient = identity.roles.some((r) => r !== 'patient') || (target.patientId !== undefined && target.patientId === identity.patientId);
  return deny(reasons.join('; ') || 'no role grants this', !seesPatient);
}

export function assertAllowed(identity: Identity, action: Action, area: AccessArea, target: Target = {}, overrides: PolicyOverride[] = []): void {
  const decision = decide(identity, action, area, target, overrides);
  if (decision.allowed) return;
  if (decision.hide) throw new AppError('NOT_FOUND', target.patientId ? `Patient '${target.patientId}' was not found` : 'Not found');
  throw new AppError('FORBIDDEN', `Not allowed: ${decision.reason}`);
}

/** Administrative capabilities outside the role × area matrix; not configurable per tenant. */
export const CAPABILITIES = {
  manageAccessPolicy: ['admin'],
  readAudit: ['admin'],
  manageTemplates: ['admin'],
  changeEhrStatus: ['admin', 'clinician'],
  listPatients: ['admin', 'clinician', 'nurse', 'receptionist', 'integration'],
} as const satisfies Record<string, readonly Role[]>;
export type Capability = keyof typeof CAPABILITIES;

export function can(identity: Identity, capability: Capability): boolean {
  return identity.roles.some((role) => (CAPABILITIES[capability] as readonly Role[]).includes(role));
}

export function assertCan(identity: Identity, capability: Capability, what: string): void {
  if (!can(identity, capability)) throw new AppError('FORBIDDEN', `Only ${CAPABILITIES[capability].join(' or ')} may ${what}`);
}

// Kept for the entity resolvers: may this caller see this patient at all?
export function canReadPatient(identity: Identity, patientId: string): boolean {
  return decide(identity, 'read', 'demographics', { patientId }).allowed;
}

/** Staff roles that may see schedules across patients. */
export function canListSchedule(identity: Identity): boolean {
  return can(identity, 'listPatients');
}
