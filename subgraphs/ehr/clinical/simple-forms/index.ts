import type { Flat } from '../opt/flat';
import { clinicalNote } from './clinical-note';
import { encounter } from './encounter';
import { labResult } from './lab-result';
import { medicationOrder } from './medication-order';
import type { Json, SimpleForm } from './shared';
import { vitalSigns } from './vital-signs';

/**
 * The simple content forms of the demo operational templates: the request
 * bodies CareGraph documented before its demo templates were OPTs
 * (`{"blood_pressure":{"systolic":{"magnitude":120,"unit":"mm[Hg]"}},"recorded_at":…}`),
 * mapped onto each template's FLAT form and back. A simple body is checked
 * against the form's own constraints first, so its errors name simple paths
 * (`blood_pressure.systolic.magnitude`); the FLAT it maps to is then stored
 * as a canonical COMPOSITION like any other.
 *
 * One file per form; `shared.ts` holds the FLAT helpers they use.
 */

export type { SimpleForm } from './shared';
export { USER_ID_SCHEME } from './clinical-note';
export { LAB_STATUS } from './lab-result';
export { dateOfDateTime } from './medication-order';

const FORMS: Record<string, SimpleForm> = {
  'vital_signs.v1': vitalSigns,
  'encounter.v1': encounter,
  'lab_result.v1': labResult,
  'medication_order.v1': medicationOrder,
  'clinical_note.v1': clinicalNote,
};

/** The simple form of a demo template, when the template is that demo OPT (its FLAT root matches). */
export function simpleFormOf(templateId: string, flatRoot: string): SimpleForm | undefined {
  const form = FORMS[templateId];
  return form?.root === flatRoot ? form : undefined;
}

/**
 * The simple body of a composition's FLAT form, or undefined when the simple
 * form cannot hold all of it (other elements, other times, a composer
 * identified otherwise than the form writes one): such compositions are shown canonical.
 */
export function simpleView(form: SimpleForm, flat: Flat): Json | undefined {
  const composer = flat[`${form.root}/composer|name`];
  if (typeof composer !== 'string') return undefined;
  let content: Json;
  let again: Flat;
  try {
    content = form.fromFlat(flat);
    again = form.toFlat(content, composer);
  } catch {
    return undefined;
  }
  const keys = Object.keys(flat).filter((k) => k !== `${form.root}/_uid`);
  const same = keys.length === Object.keys(again).length && keys.every((k) => k in again && again[k] === flat[k]);
  return same ? content : undefined;
}
