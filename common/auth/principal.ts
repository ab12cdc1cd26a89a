import { AppError } from '../errors';

export const ROLES = ['admin', 'clinician', 'nurse', 'receptionist', 'integration', 'patient'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling, as proven by a verified access token (CONTRACT §3). */
export interface Principal {
  sub: string;
  tenants: string[];
  roles: Role[];
  patientId?: string;
  /** Seconds since epoch at which the token stops being valid. */
  exp?: number;
}

/** The caller acting in one tenant: what subgraphs and services see. */
export interface Identity {
  sub: string;
  tenantId: string;
  roles: Role[];
  patientId?: string;
}

const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** CONTRACT §3: X-Tenant-Id when given (must be one of the token's), else the token's only tenant, else 400. */
export function resolveTenant(principal: Principal, requested: string | undefined): string {
  if (requested !== undefined && requested !== '') {
    if (!TENANT_ID.test(requested)) throw new AppError('VALIDATION_ERROR', 'X-Tenant-Id is not a valid tenant id');
    if (!principal.tenants.includes(requested)) {
      throw new AppError('FORBIDDEN', `This token does not grant access to tenant '${requested}'`);
    }
    return requested;
  }
  if (principal.tenants.length === 1) return principal.tenants[0];
  throw new AppError(
    'TENANT_REQUIRED',
    principal.tenants.length === 0
      ? 'This token grants no tenant'
      : 'This token grants several tenants: name one in the X-Tenant-Id header',
  );
}

export function identityFor(principal: Principal, tenantId: string): Identity {
  return { sub: principal.sub, tenantId, roles: principal.roles, patientId: principal.patientId };
}

export function hasRole(identity: Pick<Identity, 'roles'>, ...roles: Role[]): boolean {
  return identity.roles.some((role) => roles.includes(role));
}
