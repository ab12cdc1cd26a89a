import type { DataArea } from '../policy/rules';
import type { ConstraintNode } from './constraints';

export interface TemplateSeed {
  id: string;
  name: string;
  area: DataArea;
  definition: ConstraintNode;
}

const slot = (archetypeId: string, required = true): ConstraintNode => ({ type: 'archetype', archetypeId, required });

/** A template whose content is one archetype under one key. */
const singleSlot = (id: string, name: string, area: DataArea, key: string, archetypeId: string): TemplateSeed => ({
  id,
  name,
  area,
  definition: { type: 'object', children: { [key]: slot(archetypeId) } },
});

/** Templates every demo tenant starts with; `vital_signs.v1` is docs/api.md §10's. */
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
  singleSlot('encounter.v1', 'Encounter', 'encounter', 'encounter', 'openEHR-EHR-COMPOSITION.encounter.v1'),
  singleSlot('lab_result.v1', 'Laboratory result', 'observation', 'lab_result', 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1'),
  singleSlot('medication_order.v1', 'Medication order', 'order', 'medication_order', 'openEHR-EHR-INSTRUCTION.medication_order.v3'),
  singleSlot('clinical_note.v1', 'Clinical note', 'document', 'note', 'openEHR-EHR-EVALUATION.clinical_note.v1'),
];
