import { AppError } from '../../common/errors';
import type { ClinicalPatient } from './clinical-record/client';

/**
 * The consent decision of messaging: a patient is messaged only while the
 * clinical record holds their MESSAGING consent (opt-out: without a recorded
 * decision the clinical record answers its default, granted). Channel
 * preferences (sms/email on or off) are a separate, narrower choice checked
 * beside it. Returns why messaging is refused, or null when it is allowed.
 */
export function messagingConsentRefusal(patient: Pick<ClinicalPatient, 'id' | 'messagingConsent'>): string | null {
  return patient.messagingConsent ? null : `Patient '${patient.id}' has withdrawn their consent to messaging in the clinical record`;
}

/** Refuses (422 PATIENT_OPTED_OUT) a message to a patient whose MESSAGING consent is withdrawn. */
export function assertMessagingConsent(patient: Pick<ClinicalPatient, 'id' | 'messagingConsent'>): void {
  const refusal = messagingConsentRefusal(patient);
  if (refusal) throw new AppError('PATIENT_OPTED_OUT', refusal);
}
