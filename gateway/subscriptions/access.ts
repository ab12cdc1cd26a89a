import { hasRole, type Identity } from '../../common/auth/principal';
import type { PlatformEvent } from '../../common/events/types';

/** Staff roles see their whole tenant; any other caller (a patient) only its own patient's records. */
export function ownPatientOnly(identity: Identity): string | undefined {
  return hasRole(identity, 'admin', 'clinician', 'nurse', 'receptionist', 'integration') ? undefined : (identity.patientId ?? '');
}

/** Whether `identity` may see `event` at all (tenant, own patient, admin-only alerts). */
export function canSee(identity: Identity, event: PlatformEvent): boolean {
  if (event.tenantId !== identity.tenantId) return false;
  if (event.type === 'webhook.disabled') return hasRole(identity, 'admin');
  const own = ownPatientOnly(identity);
  return own === undefined || (event.data as { patientId?: unknown }).patientId === own;
}
