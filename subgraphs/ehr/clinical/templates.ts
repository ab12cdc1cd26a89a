import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../../common/paths';
import type { DataArea } from '../policy/rules';

/** A demo template: an operational template (OPT 1.4 XML shipped in `opt/demo/`). */
export type TemplateSeed = { id: string; name: string; area: DataArea; opt: string };

/** The XML of a demo OPT; its template_id is the file name. */
export const demoOpt = (templateId: string): string =>
  readFileSync(join(projectRoot(), 'subgraphs', 'ehr', 'clinical', 'opt', 'demo', `${templateId}.opt`), 'utf8');

/** Templates every demo tenant starts with; `vital_signs.v1` is docs/api.md §10's. */
export const SEED_TEMPLATES: TemplateSeed[] = [
  { id: 'vital_signs.v1', name: 'Vital signs', area: 'observation', opt: demoOpt('vital_signs.v1') },
  { id: 'encounter.v1', name: 'Encounter', area: 'encounter', opt: demoOpt('encounter.v1') },
  { id: 'lab_result.v1', name: 'Laboratory result', area: 'observation', opt: demoOpt('lab_result.v1') },
  { id: 'medication_order.v1', name: 'Medication order', area: 'order', opt: demoOpt('medication_order.v1') },
  { id: 'clinical_note.v1', name: 'Clinical note', area: 'document', opt: demoOpt('clinical_note.v1') },
];
