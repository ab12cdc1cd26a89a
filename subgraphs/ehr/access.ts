import type { Identity } from '../../common/auth/principal';
import { hasRole } from '../../common/auth/principal';
import { AppError } from '../../common/errors';

/**
 * Access policy of the clinical record: which identities may read or change
 * which patient's data. A patient sees only their own record; a denied read of
 * another patient answers NOT_FOUND so existence does not leak.
 */
export function canReadPatient(identity: Identity, patientId: string): boolean {
  if (hasRole(identity, 'admin', 'clinician', 'nurse', 'receptionist', 'integration')) return true;
  return hasRole(identity, 'patient') && identity.patientId === patientId;
}

export function assertCanReadPatient(identity: Identity, patientId: string): void {
  if (!canReadPatient(identity, patientId)) throw new AppError('NOT_FOUND', `Patient '${patientId}' was not found`);
}

/** Staff roles that may see schedules across patients. */
export function canListSchedule(identity: Identity): boolean {
  return hasRole(identity, 'admin', 'clinician', 'nurse', 'receptionist', 'integration');
}
