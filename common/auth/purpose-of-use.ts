/**
 * Purposes of use a caller declares when reading clinical context, with the
 * HL7 v3 PurposeOfUse code the access log records for each.
 */
export const PURPOSES_OF_USE = {
  treatment: 'TREAT',
  care_management: 'CAREMGT',
  patient_requested: 'PATRQT',
  operations: 'HOPERAT',
  /** A declared emergency: it grants nothing beyond the caller's role; the privacy review flags it as break-glass. */
  emergency: 'ETREAT',
} as const;
export type PurposeOfUse = keyof typeof PURPOSES_OF_USE;
export const PURPOSE_NAMES = Object.keys(PURPOSES_OF_USE) as PurposeOfUse[];
