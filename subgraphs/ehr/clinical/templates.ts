import type { DataArea } from '../access';
import type { ConstraintNode } from './constraints';

export interface TemplateSeed {
  id: string;
  name: string;
  area: DataArea;
  definition: ConstraintNode;
}

const slot = (archetypeId: string, required = true): ConstraintNode => ({ type: 'archetype', archetypeId, required });

/** Templates every demo tenant starts with; `vital_signs.v1` is CONTRACT §10's. */
export const SEED_TEMPLATES: TemplateSeed[] = [
  {
    id: 'vital_signs.v1',
    name: 'Vital signs',
    area: 'observation',
    definition: {
      type: 'object',
      children: {
        blood_pressure: slot('openEHR-EHR-OBSERVATION.blood_pressure.v2'),
        pulse: slot('openEHR-EHR-OBSERVATION.pulse.v2', false),
        recorded_at: { type: 'date_time', required: true },
      },
    },
  },
  {
    id: 'encounter.v1',
    name: 'Encounter',
    area: 'encounter',
    definition: { type: 'object', children: { encounter: slot('openEHR-EHR-COMPOSITION.encounter.v1') } },
  },
  {
    id: 'lab_result.v1',
    name: 'Laboratory result',
    area: 'observation',
    definition: { type: 'object', children: { lab_result: slot('openEHR-EHR-OBSERVATION.laboratory_test_result.v1') } },
  },
  {
    id: 'medication_order.v1',
    name: 'Medication order',
    area: 'order',
    definition: { type: 'object', children: { medication_order: slot('openEHR-EHR-INSTRUCTION.medication_order.v3') } },
  },
  {
    id: 'clinical_note.v1',
    name: 'Clinical note',
    area: 'document',
    definition: { type: 'object', children: { note: slot('openEHR-EHR-EVALUATION.clinical_note.v1') } },
  },
];
