import type { ConstraintNode } from './constraints';

/**
 * The archetype library: reusable, tenant-independent clinical models that
 * templates put together (openEHR's archetype → template layering). Ids follow
 * openEHR's `openEHR-EHR-<RM type>.<concept>.v<n>`. Archetypes are part of the
 * release: a changed archetype is a new id, so stored templates never change
 * meaning underneath their compositions.
 */
export interface Archetype {
  id: string;
  description: string;
  definition: ConstraintNode;
}

const coded = (terminology: string, codes: Record<string, string>, required = false): ConstraintNode => ({
  type: 'coded_text',
  required,
  terminology,
  valueSet: Object.entries(codes).map(([code, value]) => ({ code, value })),
});

export const ARCHETYPES: Archetype[] = [
  {
    id: 'openEHR-EHR-OBSERVATION.blood_pressure.v2',
    description: 'Systemic arterial blood pressure.',
    definition: {
      type: 'object',
      children: {
        systolic: { type: 'quantity', required: true, units: [{ unit: 'mm[Hg]', min: 0, max: 1000 }] },
        diastolic: { type: 'quantity', required: true, units: [{ unit: 'mm[Hg]', min: 0, max: 1000 }] },
        position: coded('local', { at1000: 'Standing', at1001: 'Sitting', at1002: 'Reclining', at1003: 'Lying' }),
      },
    },
  },
  {
    id: 'openEHR-EHR-OBSERVATION.pulse.v2',
    description: 'Heart rate and rhythm.',
    definition: {
      type: 'object',
      children: {
        rate: { type: 'quantity', units: [{ unit: '/min', min: 0, max: 1000 }] },
        regular: { type: 'boolean' },
      },
    },
  },
  {
    id: 'openEHR-EHR-CLUSTER.laboratory_analyte_result.v1',
    description: 'One analyte of a laboratory test, with its value and interpretation.',
    definition: {
      type: 'object',
      children: {
        analyte: { type: 'text', required: true, minLength: 1, maxLength: 200 },
        value: {
          type: 'quantity',
          required: true,
          units: ['mmol/L', 'umol/L', 'mg/dL', 'g/L', 'g/dL', '%', '10*9/L', '10*12/L', 'U/L', 'mL/min/{1.73_m2}', 'fL', '1'].map((unit) => ({ unit })),
        },
        interpretation: coded('HL7-ObservationInterpretation', {
          N: 'Normal',
          L: 'Low',
          H: 'High',
          LL: 'Critically low',
          HH: 'Critically high',
        }),
        reference_range: { type: 'text', maxLength: 200 },
      },
    },
  },
  {
    id: 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1',
    description: 'Result of a laboratory test: status, specimen time and one or more analytes.',
    definition: {
      type: 'object',
      children: {
        test_name: coded(
          'LOINC',
          {
            '24323-8': 'Comprehensive metabolic panel',
            '58410-2': 'Complete blood count',
            '4548-4': 'Hemoglobin A1c',
            '2345-7': 'Glucose',
            '2160-0': 'Creatinine',
          },
          true,
        ),
        status: coded('local', { registered: 'Registered', preliminary: 'Preliminary', final: 'Final', amended: 'Amended' }, true),
        specimen_collected_at: { type: 'date_time', required: true },
        results: {
          type: 'list',
          required: true,
          cardinality: { min: 1, max: 100 },
          items: { type: 'archetype', archetypeId: 'openEHR-EHR-CLUSTER.laboratory_analyte_result.v1' },
        },
        conclusion: { type: 'text', maxLength: 10_000 },
      },
    },
  },
  {
    id: 'openEHR-EHR-COMPOSITION.encounter.v1',
    description: 'A clinical visit or interaction.',
    definition: {
      type: 'object',
      children: {
        encounter_type: coded('HL7-ActCode', { AMB: 'Ambulatory', IMP: 'Inpatient', EMER: 'Emergency', VR: 'Virtual', HH: 'Home health' }, true),
        start: { type: 'date_time', required: true },
        end: { type: 'date_time' },
        location: { type: 'text', maxLength: 200 },
        practitioner: { type: 'text', maxLength: 200 },
        reason: { type: 'text', maxLength: 2000 },
        appointment_id: { type: 'text', maxLength: 128 },
      },
    },
  },
  {
    id: 'openEHR-EHR-INSTRUCTION.medication_order.v3',
    description: 'An order for one medication with dose and timing.',
    definition: {
      type: 'object',
      children: {
        medication: { type: 'text', required: true, minLength: 1, maxLength: 200 },
        route: coded(
          'EDQM',
          {
            '20053000': 'Oral',
            '20045000': 'Intravenous',
            '20035000': 'Intramuscular',
            '20066000': 'Subcutaneous',
            '20020000': 'Inhalation',
            '10546000': 'Cutaneous',
          },
          true,
        ),
        dose: {
          type: 'quantity',
          required: true,
          units: [
            { unit: 'mg', min: 0 },
            { unit: 'g', min: 0 },
            { unit: 'ug', min: 0 },
            { unit: 'mL', min: 0 },
            { unit: '[iU]', min: 0 },
            { unit: '{tablet}', min: 0 },
          ],
        },
        doses_per_day: { type: 'count', required: true, min: 1, max: 24 },
        as_needed: { type: 'boolean' },
        start_date: { type: 'date', required: true },
        end_date: { type: 'date' },
        instructions: { type: 'text', maxLength: 2000 },
      },
    },
  },
  {
    id: 'openEHR-EHR-EVALUATION.clinical_note.v1',
    description: 'A narrative clinical note, letter or report.',
    definition: {
      type: 'object',
      children: {
        title: { type: 'text', required: true, minLength: 1, maxLength: 200 },
        note_type: coded(
          'LOINC',
          {
            '11506-3': 'Progress note',
            '18842-5': 'Discharge summary',
            '57133-1': 'Referral note',
            '11488-4': 'Consult note',
            '34133-9': 'Summary of episode note',
          },
          true,
        ),
        authored_at: { type: 'date_time', required: true },
        author: { type: 'text', maxLength: 200 },
        body: { type: 'text', required: true, minLength: 1, maxLength: 200_000 },
      },
    },
  },
];

const BY_ID = new Map(ARCHETYPES.map((a) => [a.id, a]));

export function findArchetype(id: string): Archetype | undefined {
  return BY_ID.get(id);
}
