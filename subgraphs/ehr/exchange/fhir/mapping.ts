import type { ConstraintNode } from '../../clinical/constraints';
import type { OperationalTemplate } from '../../clinical/opt/parse';
import { dateOfDateTime, LAB_STATUS, USER_ID_SCHEME } from '../../clinical/simple-forms';
import type { CompositionView } from '../../compositions/composition.service';
import type { PatientView } from '../../patients/patient.service';
import type { ClinicalTemplateService } from '../../templates/clinical-template.service';
import type { ClinicalTemplate as TemplateRow } from '../../db/generated/client';
import { clinicalTime, documentType, reportContextValue, rmAll, rmAt, topLevelSlots } from '../content';

/**
 * openEHR → FHIR R4 mapping (the table in docs/exchange.md). A composition
 * yields one resource per mapped top-level archetype slot (for an operational
 * template: per top-level content entry, read at its archetype paths, keyed by
 * the archetype's concept: `blood_pressure`); the resource id is
 * the composition's uuid when its template has one mapped slot, else
 * `<uuid>.<slot>` (e.g. `<uuid>.blood-pressure`); versionId is the composition version, so vread and
 * _history follow the composition's versions.
 */
export type FhirResource = Record<string, any> & { resourceType: string; id?: string };

export const LOINC = 'http://loinc.org';
export const UCUM = 'http://unitsofmeasure.org';
export const OBSERVATION_CATEGORY = 'http://terminology.hl7.org/CodeSystem/observation-category';
export const PATIENT_ID_SYSTEM = 'urn:caregraph:patient-id';
export const EHR_ID_SYSTEM = 'urn:openehr:ehr-id';
const ACT_CODE = 'http://terminology.hl7.org/CodeSystem/v3-ActCode';
const INTERPRETATION = 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation';
const EDQM = 'http://standardterms.edqm.eu';
export const DOC_CATEGORY = 'http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category';
/** The category and status of every clinical note's DocumentReference. */
export const CLINICAL_NOTE = { category: 'clinical-note', status: 'current' } as const;

export const LOINC_BP_PANEL = { code: '85354-9', display: 'Blood pressure panel with all children optional' };
export const LOINC_SYSTOLIC = { code: '8480-6', display: 'Systolic blood pressure' };
export const LOINC_DIASTOLIC = { code: '8462-4', display: 'Diastolic blood pressure' };
export const LOINC_HEART_RATE = { code: '8867-4', display: 'Heart rate' };
const LOINC_BODY_TEMPERATURE = { code: '8310-5', display: 'Body temperature' };
const LOINC_RESPIRATORY_RATE = { code: '9279-1', display: 'Respiratory rate' };
const LOINC_SPO2 = { code: '59408-5', display: 'Oxygen saturation in Arterial blood by Pulse oximetry' };
const LOINC_BODY_WEIGHT = { code: '29463-7', display: 'Body weight' };
const LOINC_BODY_HEIGHT = { code: '8302-2', display: 'Body height' };

export const ARCHETYPE = {
  bloodPressure: 'openEHR-EHR-OBSERVATION.blood_pressure.v2',
  pulse: 'openEHR-EHR-OBSERVATION.pulse.v2',
  bodyTemperature: 'openEHR-EHR-OBSERVATION.body_temperature.v2',
  respiration: 'openEHR-EHR-OBSERVATION.respiration.v2',
  pulseOximetry: 'openEHR-EHR-OBSERVATION.pulse_oximetry.v1',
  bodyWeight: 'openEHR-EHR-OBSERVATION.body_weight.v2',
  height: 'openEHR-EHR-OBSERVATION.height.v2',
  lab: 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1',
  encounter: 'openEHR-EHR-COMPOSITION.encounter.v1',
  reasonForEncounter: 'openEHR-EHR-EVALUATION.reason_for_encounter.v1',
  medication: 'openEHR-EHR-INSTRUCTION.medication_order.v3',
  note: 'openEHR-EHR-EVALUATION.clinical_note.v1',
  synopsis: 'openEHR-EHR-EVALUATION.clinical_synopsis.v1',
} as const;

/** Which FHIR resource type each mapped archetype becomes. */
const RESOURCE_OF_ARCHETYPE: Record<string, string> = {
  [ARCHETYPE.bloodPressure]: 'Observation',
  [ARCHETYPE.pulse]: 'Observation',
  [ARCHETYPE.bodyTemperature]: 'Observation',
  [ARCHETYPE.respiration]: 'Observation',
  [ARCHETYPE.pulseOximetry]: 'Observation',
  [ARCHETYPE.bodyWeight]: 'Observation',
  [ARCHETYPE.height]: 'Observation',
  [ARCHETYPE.lab]: 'Observation',
  [ARCHETYPE.encounter]: 'Encounter',
  [ARCHETYPE.reasonForEncounter]: 'Encounter',
  [ARCHETYPE.medication]: 'MedicationRequest',
  [ARCHETYPE.note]: 'DocumentReference',
  [ARCHETYPE.synopsis]: 'DocumentReference',
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

/** What every vital-signs Observation starts with: its LOINC code, the patient, and when it was measured and recorded. */
function vitalSignsObservation(ctx: Context, loinc: { code: string; display: string }, text: string): Json {
  return {
    resourceType: 'Observation',
    status: 'final',
    category: [concept(OBSERVATION_CATEGORY, 'vital-signs', 'Vital Signs')],
    code: concept(LOINC, loinc.code, loinc.display, text),
    subject: ctx.subject,
    effectiveDateTime: fhirDateTime(ctx.effective),
    issued: ctx.composition.committedAt.toISOString(),
  };
}

const MAPPERS: Record<string, (value: Json, ctx: Context) => Json | null> = {
  [ARCHETYPE.bloodPressure]: (bp, ctx) => ({
    ...vitalSignsObservation(ctx, LOINC_BP_PANEL, 'Blood pressure'),
    component: [
      { code: concept(LOINC, LOINC_SYSTOLIC.code, LOINC_SYSTOLIC.display), valueQuantity: quantity(bp.systolic) },
      { code: concept(LOINC, LOINC_DIASTOLIC.code, LOINC_DIASTOLIC.display), valueQuantity: quantity(bp.diastolic) },
    ],
    ...(bp.position ? { note: [{ text: `Position: ${bp.position.value ?? bp.position.code}` }] } : {}),
  }),
  [ARCHETYPE.pulse]: (pulse, ctx) =>
    pulse.rate
      ? {
          ...vitalSignsObservation(ctx, LOINC_HEART_RATE, 'Heart rate'),
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
  [ARCHETYPE.note]: (note, ctx) =>
    clinicalNote(ctx, { type: note.note_type, title: note.title, authoredAt: note.authored_at, author: note.author, body: note.body }),
};

/** A clinical note as a FHIR DocumentReference (category clinical-note, the text as a plain-text attachment). */
function clinicalNote(
  ctx: Context,
  note: { type?: { code?: string; value?: string }; title?: string; authoredAt?: string; author?: string; body?: string },
): Json {
  return {
    resourceType: 'DocumentReference',
    status: CLINICAL_NOTE.status,
    ...(note.type?.code ? { type: concept(LOINC, note.type.code, note.type.value) } : {}),
    category: [concept(DOC_CATEGORY, CLINICAL_NOTE.category, 'Clinical Note')],
    subject: ctx.subject,
    ...(note.authoredAt ? { date: instant(note.authoredAt) } : {}),
    ...(note.author ? { author: [{ display: note.author }] } : {}),
    description: note.title,
    content: [{ attachment: { contentType: 'text/plain; charset=utf-8', data: Buffer.from(note.body ?? '', 'utf8').toString('base64'), title: note.title } }],
    ...(note.authoredAt ? { context: { period: { start: fhirDateTime(note.authoredAt) } } } : {}),
  };
}

/** A DV_QUANTITY as a FHIR Quantity (UCUM). */
const rmQuantity = (q: Json) => ({ value: q.magnitude, unit: q.units, system: UCUM, code: q.units });

/** A vital sign with one quantity at an archetype path: a FHIR vital-signs Observation. */
function vitalSign(path: string, loinc: { code: string; display: string }, text: string) {
  return (entry: Json, ctx: Context): Json | null => {
    const value = rmAt(entry, path);
    if (!value) return null;
    const quantity = value._type === 'DV_PROPORTION' ? { value: value.numerator, unit: '%', system: UCUM, code: '%' } : rmQuantity(value);
    return { ...vitalSignsObservation(ctx, loinc, text), valueQuantity: quantity };
  };
}

/** Where each vital sign's quantity is, below its entry: its Observation exists when that value does. */
const VITAL_SIGN_VALUE = {
  [ARCHETYPE.pulse]: '/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value',
  [ARCHETYPE.bodyTemperature]: '/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value',
  [ARCHETYPE.respiration]: '/data[at0001]/events[at0002]/data[at0003]/items[at0004]/value',
  [ARCHETYPE.pulseOximetry]: '/data[at0001]/events[at0002]/data[at0003]/items[at0006]/value',
  [ARCHETYPE.bodyWeight]: '/data[at0002]/events[at0003]/data[at0001]/items[at0004]/value',
  [ARCHETYPE.height]: '/data[at0001]/events[at0002]/data[at0003]/items[at0004]/value',
} as const;
const LAB_TEST_NAME = '/data[at0001]/events[at0002]/data[at0003]/items[at0005]/value';
const MEDICATION_ORDER = '/activities[at0001]/description[at0002]';
/** The order's end date: a MedicationRequest is `completed` once it is past, else `active`. */
export const MEDICATION_ORDER_END = `${MEDICATION_ORDER}/items[at0113]/items[at0013]/value`;

const INTERPRETATION_DISPLAY: Record<string, string> = { N: 'Normal', L: 'Low', H: 'High', LL: 'Critical low', HH: 'Critical high' };
const LAB_STATUS_OF_CODE = Object.fromEntries(Object.entries(LAB_STATUS).map(([status, s]) => [s.atCode, status]));
const ANALYTE = 'openEHR-EHR-CLUSTER.laboratory_test_analyte.v1';
/** A lab result's analytes: each one's result is at `/items[at0001]/value` below. */
const LAB_ANALYTES = `/data[at0001]/events[at0002]/data[at0003]/items[${ANALYTE}]`;
const THERAPEUTIC_DIRECTION = 'openEHR-EHR-CLUSTER.therapeutic_direction.v1';
const DOSAGE = 'openEHR-EHR-CLUSTER.dosage.v2';
const ENCOUNTER_DETAILS = 'openEHR-EHR-CLUSTER.encounter_details.v0';
const TIMING_DAILY = 'openEHR-EHR-CLUSTER.timing_daily.v1';

/** Mappers of canonical RM entries (operational templates), by archetype, at the archetypes' paths. */
const RM_MAPPERS: Record<string, (entry: Json, ctx: Context) => Json | null> = {
  [ARCHETYPE.bloodPressure]: (bp, ctx) => {
    const event = '/data[at0001]/events[at0006]';
    const systolic = rmAt(bp, `${event}/data[at0003]/items[at0004]/value`);
    const diastolic = rmAt(bp, `${event}/data[at0003]/items[at0005]/value`);
    const position = rmAt(bp, `${event}/state[at0007]/items[at0008]/value`);
    return {
      ...vitalSignsObservation(ctx, LOINC_BP_PANEL, 'Blood pressure'),
      component: [
        ...(systolic ? [{ code: concept(LOINC, LOINC_SYSTOLIC.code, LOINC_SYSTOLIC.display), valueQuantity: rmQuantity(systolic) }] : []),
        ...(diastolic ? [{ code: concept(LOINC, LOINC_DIASTOLIC.code, LOINC_DIASTOLIC.display), valueQuantity: rmQuantity(diastolic) }] : []),
      ],
      ...(position ? { note: [{ text: `Position: ${position.value ?? position.defining_code?.code_string}` }] } : {}),
    };
  },
  [ARCHETYPE.pulse]: (pulse, ctx) => {
    const event = '/data[at0002]/events[at0003]/data[at0001]';
    const rate = vitalSign(VITAL_SIGN_VALUE[ARCHETYPE.pulse], LOINC_HEART_RATE, 'Heart rate')(pulse, ctx);
    const regularity = rmAt(pulse, `${event}/items[at0005]/value`)?.defining_code?.code_string;
    if (!rate) return null;
    return { ...rate, ...(regularity ? { note: [{ text: regularity === 'at0006' ? 'Regular rhythm' : 'Irregular rhythm' }] } : {}) };
  },
  [ARCHETYPE.bodyTemperature]: vitalSign(VITAL_SIGN_VALUE[ARCHETYPE.bodyTemperature], LOINC_BODY_TEMPERATURE, 'Body temperature'),
  [ARCHETYPE.respiration]: vitalSign(VITAL_SIGN_VALUE[ARCHETYPE.respiration], LOINC_RESPIRATORY_RATE, 'Respiratory rate'),
  [ARCHETYPE.pulseOximetry]: vitalSign(VITAL_SIGN_VALUE[ARCHETYPE.pulseOximetry], LOINC_SPO2, 'SpO2'),
  [ARCHETYPE.bodyWeight]: vitalSign(VITAL_SIGN_VALUE[ARCHETYPE.bodyWeight], LOINC_BODY_WEIGHT, 'Body weight'),
  [ARCHETYPE.height]: vitalSign(VITAL_SIGN_VALUE[ARCHETYPE.height], LOINC_BODY_HEIGHT, 'Body height'),
  [ARCHETYPE.lab]: (lab, ctx) => {
    const tree = '/data[at0001]/events[at0002]/data[at0003]';
    const testName = rmAt(lab, LAB_TEST_NAME);
    const status = rmAt(lab, `${tree}/items[at0073]/value`)?.defining_code?.code_string as string | undefined;
    const conclusion = rmAt(lab, `${tree}/items[at0057]/value`)?.value as string | undefined;
    const results = rmAll(lab, LAB_ANALYTES).map((analyte) => {
      const value = rmAt(analyte, '/items[at0001]/value');
      const flag = value?.normal_status?.code_string as string | undefined;
      const range = rmAt(analyte, '/items[at0004]/value')?.value as string | undefined;
      return {
        name: rmAt(analyte, '/items[at0024]/value')?.value as string | undefined,
        fields: {
          ...(value ? { valueQuantity: rmQuantity(value) } : {}),
          ...(flag ? { interpretation: [concept(INTERPRETATION, flag, INTERPRETATION_DISPLAY[flag])] } : {}),
          ...(range ? { referenceRange: [{ text: range }] } : {}),
        },
      };
    });
    return {
      resourceType: 'Observation',
      status: (status && LAB_STATUS_OF_CODE[status]) ?? 'unknown',
      category: [concept(OBSERVATION_CATEGORY, 'laboratory', 'Laboratory')],
      code: concept(LOINC, testName?.defining_code?.code_string, testName?.value),
      subject: ctx.subject,
      effectiveDateTime: fhirDateTime(ctx.effective),
      issued: ctx.composition.committedAt.toISOString(),
      ...(results.length === 1 ? results[0].fields : { component: results.map((r) => ({ code: { text: r.name }, ...r.fields })) }),
      ...(conclusion ? { note: [{ text: conclusion }] } : {}),
    };
  },
  /**
   * The Encounter is the COMPOSITION itself (its context: times, facility,
   * performer, appointment); its reason-for-encounter entry (type, reason)
   * marks it as an encounter record: the COMPOSITION.encounter archetype alone
   * does not, other demo templates are built on it too.
   */
  [ARCHETYPE.reasonForEncounter]: (reason, ctx) => {
    const composition = ctx.composition.content;
    const context = rmAt(composition, '/context');
    const type = rmAt(reason, '/data[at0001]/items[at0002]/value');
    const problem = rmAt(reason, '/data[at0001]/items[at0004]/value')?.value as string | undefined;
    const start = context?.start_time?.value as string | undefined;
    const end = context?.end_time?.value as string | undefined;
    const performers = rmAll(composition, '/context/participations').filter((p) => p.function?.value === 'performer' && p.performer?.name);
    const facility = context?.health_care_facility?.name as string | undefined;
    const appointment = rmAll(composition, `/context/other_context[at0001]/items[${ENCOUNTER_DETAILS}]/items[at0046]/value`).find(
      (v) => v.type === 'appointment',
    )?.id as string | undefined;
    return {
      resourceType: 'Encounter',
      status: end ? 'finished' : 'in-progress',
      ...(type?.defining_code ? { class: coding(ACT_CODE, type.defining_code.code_string, type.value) } : {}),
      subject: ctx.subject,
      ...(start ? { period: { start: fhirDateTime(start), ...(end ? { end: fhirDateTime(end) } : {}) } } : {}),
      ...(performers.length ? { participant: performers.map((p) => ({ individual: { display: p.performer.name } })) } : {}),
      ...(problem ? { reasonCode: [{ text: problem }] } : {}),
      ...(facility ? { location: [{ location: { display: facility } }] } : {}),
      ...(appointment ? { appointment: [{ reference: `Appointment/${appointment}` }] } : {}),
    };
  },
  [ARCHETYPE.medication]: (instruction, ctx) => {
    const order = MEDICATION_ORDER;
    const text = (path: string) => rmAt(instruction, `${order}${path}/value`)?.value as string | undefined;
    const dosage = `${order}/items[${THERAPEUTIC_DIRECTION}]/items[${DOSAGE}]`;
    const dose = rmAt(instruction, `${dosage}/items[at0144]/value`);
    const frequency = rmAt(instruction, `${dosage}/items[${TIMING_DAILY}]/items[at0003]/value`);
    const asRequired = rmAt(instruction, `${dosage}/items[${TIMING_DAILY}]/items[at0024]/value`)?.value as boolean | undefined;
    const route = rmAt(instruction, `${order}/items[at0091]/value`);
    // The demo template's order dates are dates (midnight UTC date-times): FHIR shows them as dates.
    const date = (value: string | undefined) => (value === undefined ? undefined : (dateOfDateTime(value) ?? value));
    const start = date(text('/items[at0113]/items[at0012]'));
    const end = date(rmAt(instruction, MEDICATION_ORDER_END)?.value as string | undefined);
    const instructions = text('/items[at0009]');
    const today = new Date().toISOString().slice(0, 10);
    return {
      resourceType: 'MedicationRequest',
      status: end && end < today ? 'completed' : 'active',
      intent: 'order',
      medicationCodeableConcept: { text: text('/items[at0070]') },
      subject: ctx.subject,
      authoredOn: ctx.composition.committedAt.toISOString(),
      dosageInstruction: [
        {
          ...(instructions ? { text: instructions } : {}),
          timing: {
            repeat: {
              ...(start ? { boundsPeriod: { start, ...(end ? { end } : {}) } } : {}),
              ...(frequency?.units === '1/d' ? { frequency: frequency.magnitude, period: 1, periodUnit: 'd' } : {}),
            },
          },
          ...(asRequired === true ? { asNeededBoolean: true } : {}),
          ...(route ? { route: concept(EDQM, route.defining_code?.code_string, route.value) } : {}),
          ...(dose ? { doseAndRate: [{ doseQuantity: rmQuantity(dose) }] } : {}),
        },
      ],
    };
  },
  [ARCHETYPE.synopsis]: (synopsis, ctx) => {
    const composition = ctx.composition.content as Json;
    const type = documentType(composition);
    const composer = composition.composer as Json | undefined;
    return clinicalNote(ctx, {
      type: type && { code: type.code, value: type.text },
      title: reportContextValue(composition, 'Title')?.value,
      authoredAt: rmAt(composition, '/context/start_time')?.value,
      // The composer is the note's author unless it is the writing user.
      author: composer?.external_ref?.id?.scheme === USER_ID_SCHEME ? undefined : composer?.name,
      body: rmAt(synopsis, '/data[at0001]/items[at0002]/value')?.value,
    });
  },
};

/**
 * The kinds of entry that are Observations (of operational templates'
 * canonical content), as the clinical index sees them, following RM_MAPPERS
 * above: the archetype (its first entry), the leaf the mapper needs for the
 * Observation to exist, its category, its LOINC code (fixed, or the coded leaf
 * it is read from), where its valueQuantity is read (none: it has none) and,
 * when only an entry with one cluster at a path has it, that path.
 */
export interface ObservationKind {
  archetypeId: string;
  requires?: string;
  category: 'vital-signs' | 'laboratory';
  code: { fixed: string } | { leaf: string };
  quantity: string | null;
  onlyCluster?: string;
}

const vitalSignKind = (archetypeId: keyof typeof VITAL_SIGN_VALUE, code: string): ObservationKind => ({
  archetypeId,
  requires: VITAL_SIGN_VALUE[archetypeId],
  category: 'vital-signs',
  code: { fixed: code },
  quantity: VITAL_SIGN_VALUE[archetypeId],
});

export const OBSERVATION_KINDS: ObservationKind[] = [
  { archetypeId: ARCHETYPE.bloodPressure, category: 'vital-signs', code: { fixed: LOINC_BP_PANEL.code }, quantity: null },
  vitalSignKind(ARCHETYPE.pulse, LOINC_HEART_RATE.code),
  vitalSignKind(ARCHETYPE.bodyTemperature, LOINC_BODY_TEMPERATURE.code),
  vitalSignKind(ARCHETYPE.respiration, LOINC_RESPIRATORY_RATE.code),
  vitalSignKind(ARCHETYPE.pulseOximetry, LOINC_SPO2.code),
  vitalSignKind(ARCHETYPE.bodyWeight, LOINC_BODY_WEIGHT.code),
  vitalSignKind(ARCHETYPE.height, LOINC_BODY_HEIGHT.code),
  // A lab result has a valueQuantity only when it has one analyte (its result's); with several, each is a component.
  {
    archetypeId: ARCHETYPE.lab,
    category: 'laboratory',
    code: { leaf: LAB_TEST_NAME },
    quantity: `${LAB_ANALYTES}/items[at0001]/value`,
    onlyCluster: LAB_ANALYTES,
  },
];

/**
 * A template as the mapping reads it: a CareGraph JSON definition (content
 * keyed by slot), or an operational template (canonical RM content).
 */
export interface MappedTemplate {
  definition: ConstraintNode;
  opt?: OperationalTemplate;
}

/** A stored template row as the mapping reads it. */
export function mappedTemplate(templates: ClinicalTemplateService, row: TemplateRow): MappedTemplate {
  return { definition: row.definition as unknown as ConstraintNode, opt: templates.operational(row)?.opt };
}

/** `openEHR-EHR-OBSERVATION.blood_pressure.v2` → `blood_pressure`. */
const conceptOf = (archetypeId: string) => /\.([a-z0-9_]+)\.v\d+$/.exec(archetypeId)?.[1] ?? archetypeId;

/** The top-level archetype slots of a template that map to FHIR, in template order. */
export function templateSlots(template: MappedTemplate): Array<{ key: string; archetypeId: string }> {
  if (!template.opt) return topLevelSlots(template.definition).filter((s) => MAPPERS[s.archetypeId]);
  const content = template.opt.definition.attributes.find((a) => a.name === 'content')?.children ?? [];
  return content.filter((c) => c.kind === 'archetype_root' && RM_MAPPERS[c.nodeId]).map((c) => ({ key: conceptOf(c.nodeId), archetypeId: c.nodeId }));
}

/** The resource ids a template's compositions map to, by slot key. */
export function resourceIds(template: MappedTemplate, compositionId: string): Array<{ key: string; archetypeId: string; id: string; resourceType: string }> {
  const slots = templateSlots(template);
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
export function compositionToResources(composition: CompositionView, template: MappedTemplate): FhirResource[] {
  const content = composition.content;
  if (!content) return [];
  const subject = { reference: `Patient/${composition.patientId}` };
  const startTime = rmAt(content, '/context/start_time')?.value as string | undefined;
  return resourceIds(template, composition.id).flatMap((slot) => {
    if (slot.id.length > 64) return [];
    let mapped: Json | null;
    if (template.opt) {
      const entry = (content.content as Json[] | undefined)?.find((e) => e?.archetype_node_id === slot.archetypeId);
      if (!entry) return [];
      // An entry's clinical time is its first event's; the composition's start time otherwise.
      const effective = (rmAt(entry, '/data/events/time')?.value as string | undefined) ?? startTime ?? composition.committedAt.toISOString();
      mapped = RM_MAPPERS[slot.archetypeId](entry, { composition, subject, effective });
    } else {
      const value = content[slot.key];
      if (!value) return [];
      const effective = clinicalTime(template.definition, content) ?? composition.committedAt.toISOString();
      mapped = MAPPERS[slot.archetypeId](value, { composition, subject, effective });
    }
    if (!mapped) return [];
    return [
      withoutEmpty({
        resourceType: mapped.resourceType,
        id: slot.id,
        meta: { versionId: String(composition.version), lastUpdated: composition.committedAt.toISOString() },
        ...withoutType(mapped),
      }),
    ];
  });
}

const withoutType = ({ resourceType: _r, ...rest }: Json) => rest;

/** FHIR forbids empty arrays and objects: drops them (recursively) from an answer. */
export function withoutEmpty<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutEmpty).filter((v) => !isEmpty(v)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value)
        .map(([k, v]) => [k, withoutEmpty(v)])
        .filter(([, v]) => !isEmpty(v)),
    ) as T;
  }
  return value;
}

const isEmpty = (v: unknown) =>
  v === undefined ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (v !== null && typeof v === 'object' && !(v instanceof Date) && Object.keys(v).length === 0);

export function patientToResource(patient: PatientView, version: { version: number; at: Date | null }): FhirResource {
  return withoutEmpty(patientFields(patient, version));
}

function patientFields(patient: PatientView, version: { version: number; at: Date | null }): FhirResource {
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
    // A patient registered without a name has none (Patient.name is 0..*).
    ...(patient.name.family || patient.name.given.length
      ? { name: [{ ...(patient.name.family ? { family: patient.name.family } : {}), ...(patient.name.given.length ? { given: patient.name.given } : {}) }] }
      : {}),
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
  return withoutEmpty({
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
  });
}
