import type { Flat } from '../opt/flat';
import { entry, envelope, getQuantity, indexes, putCoded, putQuantity, slot, textOf, type Json, type SimpleForm } from './shared';

/** The lab result's overall status: the simple form's FHIR codes ⇄ the archetype's at-codes. */
export const LAB_STATUS: Record<string, { atCode: string; text: string }> = {
  registered: { atCode: 'at0107', text: 'Registered' },
  preliminary: { atCode: 'at0120', text: 'Preliminary' },
  final: { atCode: 'at0038', text: 'Final' },
  amended: { atCode: 'at0040', text: 'Amended' },
};
const LAB_RESULT = 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1';

export const labResult: SimpleForm = {
  root: 'laboratory_result',
  definition: { type: 'object', children: { lab_result: slot(LAB_RESULT) } },
  toFlat(c, composer) {
    const root = 'laboratory_result';
    const lab = c.lab_result as Json;
    const event = `${root}/laboratory_test_result`;
    const flat: Flat = { ...envelope(root, composer, lab.specimen_collected_at), ...entry(`${root}/laboratory_test_result`) };
    putCoded(flat, `${event}/test_name`, 'LOINC', lab.test_name.code, textOf(LAB_RESULT, 'test_name', lab.test_name.code)!);
    const status = LAB_STATUS[lab.status.code as string];
    putCoded(flat, `${event}/overall_test_status`, 'local', status.atCode, status.text);
    (lab.results as Json[]).forEach((r, i) => {
      const analyte = `${event}/laboratory_analyte_result:${i}`;
      flat[`${analyte}/analyte_name`] = r.analyte;
      putQuantity(flat, `${analyte}/analyte_result`, r.value);
      // The archetype's analyte has no interpretation element: DV_QUANTITY.normal_status carries it.
      if (r.interpretation) flat[`${analyte}/analyte_result|normal_status`] = r.interpretation.code;
      if (r.reference_range !== undefined) flat[`${analyte}/reference_range_guidance`] = r.reference_range;
    });
    if (lab.conclusion !== undefined) flat[`${event}/conclusion`] = lab.conclusion;
    // The laboratory result's event time is when the specimen was collected.
    flat[`${event}/time`] = lab.specimen_collected_at;
    return flat;
  },
  fromFlat(flat) {
    const event = 'laboratory_result/laboratory_test_result';
    const statusCode = flat[`${event}/overall_test_status|code`];
    const status = Object.entries(LAB_STATUS).find(([, s]) => s.atCode === statusCode)?.[0];
    const results = indexes(flat, `${event}/laboratory_analyte_result`).map((i) => {
      const analyte = `${event}/laboratory_analyte_result:${i}`;
      const interpretation = flat[`${analyte}/analyte_result|normal_status`];
      const range = flat[`${analyte}/reference_range_guidance`];
      return {
        analyte: flat[`${analyte}/analyte_name`],
        value: getQuantity(flat, `${analyte}/analyte_result`),
        ...(interpretation !== undefined ? { interpretation: { code: interpretation } } : {}),
        ...(range !== undefined ? { reference_range: range } : {}),
      };
    });
    const conclusion = flat[`${event}/conclusion`];
    return {
      lab_result: {
        test_name: { code: flat[`${event}/test_name|code`], value: flat[`${event}/test_name|value`] },
        status: { code: status ?? statusCode },
        specimen_collected_at: flat[`${event}/time`],
        results,
        ...(conclusion !== undefined ? { conclusion } : {}),
      },
    };
  },
};
