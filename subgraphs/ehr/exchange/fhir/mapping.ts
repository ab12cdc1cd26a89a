import type { ConstraintNode } from '../../clinical/constraints';
import type { CompositionView } from '../../compositions/composition.service';
import type { PatientView } from '../../patients/patient.service';
import { clinicalTime, topLevelSlots } from '../content';

/**
 * openEHR → FHIR R4 mapping (the table in docs/exchange.md). A composition
 * yields one resource per mapped top-level archetype slot; the resource id is
 * the composition's uuid when its template has one mapped slot, else
 * `<uuid>.<slot>` (e.g. `<uuid>.blood-pressure`); versionId is the composition version, so vread and
 * _history follow the composition's versions.
 */
export type FhirResource = Record<string, any> & { resourceType: string; id?: string };

export const LOINC = 'http://loinc.org';
const UCUM = 'http://unitsofmeasure.org';
const OBSERVATION_CATEGORY = 'http://terminology.hl7.org/CodeSystem/observation-category';
export const PATIENT_ID_SYSTEM = 'urn:caregraph:patient-id';
export const EHR_ID_SYSTEM = 'urn:openehr:ehr-id';
const ACT_CODE = 'http://terminology.hl7.org/CodeSystem/v3-ActCode';
const INTERPRETATION = 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation';
const EDQM = 'http://standardterms.edqm.eu';
const DOC_CATEGORY = 'http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category';

export const LOINC_BP_PANEL = { code: '85354-9', display: 'Blood pressure panel with all children optional' };
export const LOINC_SYSTOLIC = { code: '8480-6', display: 'Systolic blood pressure' };
export const LOINC_DIASTOLIC = { code: '8462-4', display: 'Diastolic blood pressure' };
export const LOINC_HEART_RATE = { code: '8867-4', display: 'Heart rate' };

export const ARCHETYPE = {
  bloodPressure: 'openEHR-EHR-OBSERVATION.blood_pressure.v2',
  pulse: 'openEHR-EHR-OBSERVATION.pulse.v2',
  lab: 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1',
  encounter: 'openEHR-EHR-COMPOSITION.encounter.v1',
  medication: 'openEHR-EHR-INSTRUCTION.medication_order.v3',
  note: 'openEHR-EHR-EVALUATION.clinical_note.v1',
} as const;

/** Which FHIR resource type each mapped archetype becomes. */
const RESOURCE_OF_ARCHETYPE: Record<string, string> = {
  [ARCHETYPE.bloodPressure]: 'Observation',
  [ARCHETYPE.pulse]: 'Observation',
  [ARCHETYPE.lab]: 'Observation',
  [ARCHETYPE.encounter]: 'Encounter',
  [ARCHETYPE.medication]: 'MedicationRequest',
  [ARCHETYPE.note]: 'DocumentReference',
};

type Json = Record<string, any>;
const coding = (system: string, code: string, display?: string) => ({ system, code, ...(display ? { display } : {}) });
const concept = (system: string, code: string, display?: string, text?: string) => ({ coding: [coding(system, code, display)], ...(text ? { text } : {}) });
const quantity = (q: Json) => ({ value: q.magnitude, unit: q.unit, system: UCUM, code: q.unit });

/** FHIR dateTime needs seconds when a time is given; openEHR content may omit them. */
function fhirDateTime(value: string): string {
  return value.replace(/T(\d{2}:\d{2})(Z|[+-]\d{2}:\d{2})$/, 'T$1:00$2');
}
const instant = (value: string) => new Date(value).toISOString();

interface Context {
  composition: CompositionView;
  subject: { reference: string };
  effective: string;
}

const MAPPERS: Record<string, (value: Json, ctx: Context) => Json | null> = {
  [ARCHETYPE.bloodPressure]: (bp, ctx) => ({
    resourceType: 'Observation',
    status: 'final',
    category: [concept(OBSERVATION_CATEGORY, 'vital-signs', 'Vital Signs')],
    code: concept(LOINC, LOINC_BP_PANEL.code, LOINC_BP_PANEL.display, 'Blood pressure'),
    subject: ctx.subject,
    effectiveDateTime: fhirDateTime(ctx.effective),
    issued: ctx.composition.committedAt.toISOString(),
    component: [
      { code: concept(LOINC, LOINC_SYSTOLIC.code, LOINC_SYSTOLIC.display), valueQuantity: quantity(bp.systolic) },
      { code: concept(LOINC, LOINC_DIASTOLIC.code, LOINC_DIASTOLIC.display), valueQuantity: quantity(bp.diastolic) },
    ],
    ...(bp.position ? { note: [{ text: `Position: ${bp.position.value ?? bp.position.code}` }] } : {}),
  }),
  [ARCHETYPE.pulse]: (pulse, ctx) =>
    pulse.rate
      ? {
          resourceType: 'Observation',
          status: 'final',
          category: [concept(OBSERVATION_CATEGORY, 'vital-signs', 'Vital Signs')],
          code: concept(LOINC, LOINC_HEART_RATE.code, LOINC_HEART_RATE.display, 'Heart rate'),
          subject: ctx.subject,
          effectiveDateTime: fhirDateTime(ctx.effective),
          issued: ctx.composition.committedAt.toISOString(),
          valueQuantity: quantity(pulse.rate),
          ...(typeof pulse.regular === 'boolean' ? { note: [{ text: pulse.regular ? 'Regular rhythm' : 'Irregular rhythm' }] } : {}),
        }
      : null,
  [ARCHETYPE.lab]: (lab, ctx) => {
    const results: Json[] = lab.results ?? [];
    const interpretation = (r: Json) => (r.interpretation ? { interpretation: [concept(INTERPRETATION, r.interpretation.code, r.interpretation.value)] } : {});
    const range = (r: Json) => (r.reference_range ? { referenceRange: [{ text: r.reference_range }] } : {});
    const single = results.length === 1 ? results[0] : undefined;
    return {
      resourceType: 'Observation',
      status: lab.status.code,
      category: [concept(OBSERVATION_CATEGORY, 'laboratory', 'Laboratory')],
      code: concept(LOINC, lab.test_name.code, lab.test_name.value),
      subject: ctx.subject,
      effectiveDateTime: fhirDateTime(lab.specimen_collected_at),
      issued: ctx.composition.committedAt.toISOString(),
      ...(single
        ? { valueQuantity: quantity(single.value), ...interpretation(single), ...range(single) }
        : { component: results.map((r) => ({ code: { text: r.analyte }, valueQuantity: quantity(r.value), ...interpretation(r), ...range(r) })) }),
      ...(lab.conclusion ? { note: [{ text: lab.conclusion }] } : {}),
    };
  },
  [ARCHETYPE.encounter]: (enc, ctx) => ({
    resourceType: 'Encounter',
    status: enc.end ? 'finished' : 'in-progress',
    class: coding(ACT_CODE, enc.encounter_type.code, enc.encounter_type.value),
    subject: ctx.subject,
    period: { start: fhirDateTime(enc.start), ...(enc.end ? { end: fhirDateTime(enc.end) } : {}) },
    ...(enc.practitioner ? { participant: [{ individual: { display: enc.practitioner } }] } : {}),
    ...(enc.reason ? { reasonCode: [{ text: enc.reason }] } : {}),
    ...(enc.location ? { location: [{ location: { display: enc.location } }] } : {}),
    ...(enc.appointment_id ? { appointment: [{ reference: `Appointment/${enc.appointment_id}` }] } : {}),
  }),
  [ARCHETYPE.medication]: (order, ctx) => {
    const today = new Date().toISOString().slice(0, 10);
    return {
      resourceType: 'MedicationRequest',
      status: order.end_date && order.end_date < today ? 'completed' : 'active',
      intent: 'order',
      medicationCodeableConcept: { text: order.medication },
      subject: ctx.subject,
      authoredOn: ctx.composition.committedAt.toISOString(),
      dosageInstruction: [
        {
          ...(order.instructions ? { text: order.instructions } : {}),
          timing: {
            repeat: {
              boundsPeriod: { start: order.start_date, ...(order.end_date ? { end: order.end_date } : {}) },
              frequency: order.doses_per_day,
              period: 1,
              periodUnit: 'd',
            },
          },
          ...(typeof order.as_needed === 'boolean' ? { asNeededBoolean: order.as_needed } : {}),
          route: concept(EDQM, order.route.code, order.route.value),
          doseAndRate: [{ doseQuantity: quantity(order.dose) }],
        },
      ],
    };
  },
  [ARCHETYPE.note]: (note, ctx) => ({
    resourceType: 'DocumentReference',
    status: 'current',
    type: concept(LOINC, note.note_type.code, note.note_type.value),
    category: [concept(DOC_CATEGORY, 'clinical-note', 'Clinical Note')],
    subject: ctx.subject,
    date: instant(note.authored_at),
    ...(note.author ? { author: [{ display: note.author }] } : {}),
    description: note.title,
    content: [{ attachment: { contentType: 'text/plain; charset=utf-8', data: Buffer.from(note.body, 'utf8').toString('base64'), title: note.title } }],
    context: { period: { start: fhirDateTime(note.authored_at) } },
  }),
};

/** The resource ids a template's compositions map to, by slot key. */
export function resourceIds(definition: ConstraintNode, compositionId: string): Array<{ key: string; archetypeId: string; id: string; resourceType: string }> {
  const slots = topLevelSlots(definition).filter((s) => MAPPERS[s.archetypeId]);
  return slots.map((s) => ({
    ...s,
    resourceType: RESOURCE_OF_ARCHETYPE[s.archetypeId],
    id: slots.length === 1 ? compositionId : `${compositionId}.${s.key.replace(/_/g, '-')}`,
  }));
}

/** `<uuid>` or `<uuid>.<slot>` (FHIR ids have no `_`: the slot's `_` is `-`) → the composition uuid and slot key. */
export function parseResourceId(id: string): { compositionId: string; key?: string } | null {
  const match = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\.([a-z][a-z0-9-]{0,26}))?$/.exec(id);
  return match ? { compositionId: match[1], key: match[2]?.replace(/-/g, '_') } : null;
}

/** The FHIR resources of one composition version (none for a deletion version or unmapped templates). */
export function compositionToResources(composition: CompositionView, definition: ConstraintNode): FhirResource[] {
  const content = composition.content;
  if (!content) return [];
  const ctx: Context = {
    composition,
    subject: { reference: `Patient/${composition.patientId}` },
    effective: clinicalTime(definition, content) ?? composition.committedAt.toISOString(),
  };
  return resourceIds(definition, composition.id).flatMap((slot) => {
    const value = content[slot.key];
    if (!value || slot.id.length > 64) return [];
    const mapped = MAPPERS[slot.archetypeId](value, ctx);
    if (!mapped) return [];
    return [
      {
        resourceType: mapped.resourceType,
        id: slot.id,
        meta: { versionId: String(composition.version), lastUpdated: composition.committedAt.toISOString() },
        ...withoutType(mapped),
      },
    ];
  });
}

const withoutType = ({ resourceType: _r, ...rest }: Json) => rest;

export function patientToResource(patient: PatientView, version: { version: number; at: Date | null }): FhirResource {
  const telecom = [
    ...(patient.contact.phone ? [{ system: 'phone', value: patient.contact.phone, use: 'mobile' }] : []),
    ...(patient.contact.email ? [{ system: 'email', value: patient.contact.email }] : []),
  ];
  return {
    resourceType: 'Patient',
    id: patient.id,
    meta: { versionId: String(version.version), ...(version.at ? { lastUpdated: version.at.toISOString() } : {}) },
    identifier: [
      { system: PATIENT_ID_SYSTEM, value: patient.id },
      { system: EHR_ID_SYSTEM, value: patient.ehrId },
    ],
    active: true,
    name: [{ family: patient.name.family, given: patient.name.given }],
    ...(telecom.length ? { telecom } : {}),
    ...(patient.gender ? { gender: patient.gender } : {}),
    ...(patient.birthDate ? { birthDate: patient.birthDate } : {}),
  };
}

export interface AppointmentLike {
  id: string;
  patientId: string;
  start: Date | string;
  end: Date | string;
  status: string;
  location: string | null;
  practitionerId?: string | null;
}

/** CareGraph's `confirmed` is FHIR's `booked` (a confirmed booking). */
export const FHIR_APPOINTMENT_STATUS: Record<string, string> = {
  booked: 'booked',
  confirmed: 'booked',
  cancelled: 'cancelled',
  fulfilled: 'fulfilled',
  noshow: 'noshow',
};

export function appointmentToResource(appointment: AppointmentLike, version: { version: number; at: Date | null }): FhirResource {
  return {
    resourceType: 'Appointment',
    id: appointment.id,
    meta: { versionId: String(version.version), ...(version.at ? { lastUpdated: version.at.toISOString() } : {}) },
    status: FHIR_APPOINTMENT_STATUS[appointment.status] ?? 'booked',
    start: new Date(appointment.start).toISOString(),
    end: new Date(appointment.end).toISOString(),
    participant: [
      { actor: { reference: `Patient/${appointment.patientId}` }, status: 'accepted' },
      ...(appointment.practitionerId ? [{ actor: { reference: `Practitioner/${appointment.practitionerId}` }, status: 'accepted' }] : []),
      ...(appointment.location ? [{ actor: { display: appointment.location }, status: 'accepted' }] : []),
    ],
  };
}
