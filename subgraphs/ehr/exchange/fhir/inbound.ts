import { validationError, type ErrorDetail } from '../../../../common/errors';
import { LOINC, LOINC_BP_PANEL, LOINC_DIASTOLIC, LOINC_HEART_RATE, LOINC_SYSTOLIC, type FhirResource } from './mapping';

/**
 * FHIR → platform input for the writable resources (Patient, vital-signs
 * Observation). Elements CareGraph cannot store are refused (400) rather
 * than silently dropped.
 */
type Json = Record<string, any>;

const COMMON = ['resourceType', 'id', 'meta', 'text'];

function onlyElements(resource: FhirResource, allowed: string[]): void {
  const unknown = Object.keys(resource).filter((k) => !COMMON.includes(k) && !allowed.includes(k));
  if (unknown.length > 0) {
    throw validationError(
      `${resource.resourceType} elements not supported by this server: ${unknown.join(', ')}`,
      unknown.map((k) => ({ path: `${resource.resourceType}.${k}`, message: 'not supported' })),
    );
  }
}

export function patientInput(resource: FhirResource): Json {
  onlyElements(resource, ['identifier', 'active', 'name', 'telecom', 'gender', 'birthDate']);
  const details: ErrorDetail[] = [];
  // Patient.name is 0..*: without one the patient is registered (or updated to be) nameless.
  const names: Json[] = Array.isArray(resource.name) ? resource.name : [];
  const name = names.find((n) => n?.use === 'official') ?? names[0];
  if (name && (typeof name.family !== 'string' || !Array.isArray(name.given) || name.given.length === 0)) {
    details.push({ path: 'Patient.name', message: 'a name has a family and at least one given name' });
  }
  const telecom: Json[] = Array.isArray(resource.telecom) ? resource.telecom : [];
  const phone = telecom.find((t) => t?.system === 'phone')?.value ?? null;
  const email = telecom.find((t) => t?.system === 'email')?.value ?? null;
  if (resource.active === false) details.push({ path: 'Patient.active', message: 'inactive patients are not supported' });
  if (details.length > 0) throw validationError('Invalid Patient', details);
  return {
    givenNames: name ? name.given : null,
    family: name ? name.family : null,
    birthDate: resource.birthDate ?? null,
    gender: resource.gender ?? null,
    phone,
    email,
  };
}

const isLoinc = (concept: Json | undefined, code: string) => (concept?.coding ?? []).some((c: Json) => c?.system === LOINC && c?.code === code);

function ucum(quantity: Json | undefined, path: string, details: ErrorDetail[]): { magnitude: number; unit: string } | undefined {
  if (!quantity || typeof quantity.value !== 'number') {
    details.push({ path, message: 'valueQuantity with a numeric value is required' });
    return undefined;
  }
  const unit = quantity.code ?? quantity.unit;
  if (typeof unit !== 'string') {
    details.push({ path, message: 'a UCUM unit (code) is required' });
    return undefined;
  }
  return { magnitude: quantity.value, unit };
}

export type VitalSignsInput =
  | {
      kind: 'blood_pressure';
      patientId: string;
      recordedAt: string;
      systolic: { magnitude: number; unit: string };
      diastolic: { magnitude: number; unit: string };
    }
  | { kind: 'pulse'; patientId: string; recordedAt: string; rate: { magnitude: number; unit: string } };

/** A blood-pressure panel (85354-9) or heart-rate (8867-4) Observation. */
export function vitalSignsInput(resource: FhirResource): VitalSignsInput {
  onlyElements(resource, ['status', 'category', 'code', 'subject', 'effectiveDateTime', 'issued', 'component', 'valueQuantity', 'note']);
  const details: ErrorDetail[] = [];
  const subject = /^Patient\/([A-Za-z0-9\-.]{1,64})$/.exec(resource.subject?.reference ?? '');
  if (!subject) details.push({ path: 'Observation.subject', message: 'a Patient/<id> reference is required' });
  if (
    typeof resource.effectiveDateTime !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(resource.effectiveDateTime)
  ) {
    details.push({ path: 'Observation.effectiveDateTime', message: 'a date-time with a time zone is required' });
  }
  const base = { patientId: subject?.[1] ?? '', recordedAt: resource.effectiveDateTime as string };
  if (isLoinc(resource.code, LOINC_BP_PANEL.code)) {
    const components: Json[] = Array.isArray(resource.component) ? resource.component : [];
    const systolic = ucum(
      components.find((c) => isLoinc(c.code, LOINC_SYSTOLIC.code))?.valueQuantity,
      `Observation.component(${LOINC_SYSTOLIC.code})`,
      details,
    );
    const diastolic = ucum(
      components.find((c) => isLoinc(c.code, LOINC_DIASTOLIC.code))?.valueQuantity,
      `Observation.component(${LOINC_DIASTOLIC.code})`,
      details,
    );
    if (details.length > 0) throw validationError('Invalid blood pressure Observation', details);
    return { kind: 'blood_pressure', ...base, systolic: systolic!, diastolic: diastolic! };
  }
  if (isLoinc(resource.code, LOINC_HEART_RATE.code)) {
    const rate = ucum(resource.valueQuantity, 'Observation.valueQuantity', details);
    if (details.length > 0) throw validationError('Invalid heart rate Observation', details);
    return { kind: 'pulse', ...base, rate: rate! };
  }
  throw validationError(
    `Only vital-signs Observations with LOINC ${LOINC_BP_PANEL.code} (blood pressure panel) or ${LOINC_HEART_RATE.code} (heart rate) can be written`,
    [{ path: 'Observation.code', message: 'unsupported code' }],
  );
}

const FHIR_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const ACTOR = /^(Patient|Practitioner|Location)\/([A-Za-z0-9\-.]{1,64})$/;

export interface AppointmentInput {
  /** 'booked' books or moves the slot; 'cancelled' cancels. */
  status: 'booked' | 'cancelled';
  patientId: string;
  start: string;
  end: string;
  practitionerId: string | null;
  location: string | null;
}

/**
 * An Appointment as CareGraph keeps it: status booked (or cancelled, on
 * update), start and end as instants with their offset, one Patient
 * participant, at most one Practitioner, and a location (a Location reference
 * or a participant with only a display, as this server writes it).
 */
export function appointmentInput(resource: FhirResource): AppointmentInput {
  onlyElements(resource, ['status', 'start', 'end', 'participant']);
  const details: ErrorDetail[] = [];
  const status = resource.status ?? 'booked';
  if (status !== 'booked' && status !== 'cancelled') details.push({ path: 'Appointment.status', message: "only 'booked' or 'cancelled'" });
  for (const name of ['start', 'end'] as const) {
    if (typeof resource[name] !== 'string' || !FHIR_INSTANT.test(resource[name]))
      details.push({ path: `Appointment.${name}`, message: 'an instant with a time zone is required' });
  }
  const found: Record<string, string[]> = { Patient: [], Practitioner: [], Location: [] };
  const participants: Json[] = Array.isArray(resource.participant) ? resource.participant : [];
  participants.forEach((p, i) => {
    const reference = p?.actor?.reference;
    const match = typeof reference === 'string' ? ACTOR.exec(reference) : null;
    if (match) found[match[1]].push(match[2]);
    else if (reference === undefined && typeof p?.actor?.display === 'string' && p.actor.display.length > 0) found.Location.push(p.actor.display);
    else details.push({ path: `Appointment.participant[${i}]`, message: 'a Patient, Practitioner or Location reference (or a location display) is required' });
  });
  if (found.Patient.length !== 1) details.push({ path: 'Appointment.participant', message: 'exactly one Patient participant is required' });
  if (found.Practitioner.length > 1) details.push({ path: 'Appointment.participant', message: 'at most one Practitioner' });
  if (found.Location.length > 1) details.push({ path: 'Appointment.participant', message: 'at most one location' });
  if (details.length > 0) throw validationError('Invalid Appointment', details);
  return {
    status,
    patientId: found.Patient[0],
    start: resource.start,
    end: resource.end,
    practitionerId: found.Practitioner[0] ?? null,
    location: found.Location[0] ?? null,
  };
}
