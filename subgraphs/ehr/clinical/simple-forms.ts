import { findArchetype } from './archetypes';
import type { ConstraintNode } from './constraints';
import type { Flat } from './opt/flat';

/**
 * The simple content forms of the demo operational templates: the request
 * bodies CareGraph documented before its demo templates were OPTs
 * (`{"blood_pressure":{"systolic":{"magnitude":120,"unit":"mm[Hg]"}},"recorded_at":…}`),
 * mapped onto each template's FLAT form and back. A simple body is checked
 * against the form's own constraints first, so its errors name simple paths
 * (`blood_pressure.systolic.magnitude`); the FLAT it maps to is then stored
 * as a canonical COMPOSITION like any other.
 */
type Json = Record<string, any>;

export interface SimpleForm {
  /** The FLAT root (web-template tree id) of the template the form maps to. */
  root: string;
  /** Constraints of the simple form. */
  definition: ConstraintNode;
  /** A valid simple body → FLAT, written by `composer`. */
  toFlat(content: Json, composer: string): Flat;
  /** FLAT → the simple body (what the form can hold of it). */
  fromFlat(flat: Flat): Json;
}

const slot = (archetypeId: string, required = true): ConstraintNode => ({ type: 'archetype', archetypeId, required });

/** The text of a code in the value set of an archetype's coded element (the simple form's own constraints). */
function textOf(archetypeId: string, element: string, code: string): string | undefined {
  const definition = findArchetype(archetypeId)?.definition;
  const node = definition?.type === 'object' ? definition.children[element] : undefined;
  return node?.type === 'coded_text' ? node.valueSet.find((v) => v.code === code)?.value : undefined;
}
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The COMPOSITION attributes the RM requires, as CareGraph writes them for API bodies (as its openEHR envelope does). */
function envelope(root: string, composer: string, startTime: string): Flat {
  return {
    [`${root}/context/start_time`]: startTime,
    [`${root}/context/setting|code`]: '238',
    [`${root}/context/setting|value`]: 'other care',
    [`${root}/context/setting|terminology`]: 'openehr',
    [`${root}/category|code`]: '433',
    [`${root}/category|value`]: 'event',
    [`${root}/category|terminology`]: 'openehr',
    [`${root}/language|code`]: 'en',
    [`${root}/language|terminology`]: 'ISO_639-1',
    [`${root}/territory|code`]: 'NL',
    [`${root}/territory|terminology`]: 'ISO_3166-1',
    [`${root}/composer|name`]: composer,
  };
}

/** The ENTRY attributes FLAT readers default (language, encoding), written out so FLAT round-trips compare equal. */
function entry(path: string): Flat {
  return {
    [`${path}/language|code`]: 'en',
    [`${path}/language|terminology`]: 'ISO_639-1',
    [`${path}/encoding|code`]: 'UTF-8',
    [`${path}/encoding|terminology`]: 'IANA_character-sets',
  };
}

function putQuantity(flat: Flat, path: string, q: Json | undefined) {
  if (!isObject(q)) return;
  flat[`${path}|magnitude`] = q.magnitude;
  flat[`${path}|unit`] = q.unit;
}

function getQuantity(flat: Flat, path: string): Json | undefined {
  if (!(`${path}|magnitude` in flat) && !(`${path}|unit` in flat)) return undefined;
  return { magnitude: flat[`${path}|magnitude`], unit: flat[`${path}|unit`] };
}

function putCoded(flat: Flat, path: string, terminology: string, code: string, value: string) {
  Object.assign(flat, { [`${path}|code`]: code, [`${path}|value`]: value, [`${path}|terminology`]: terminology });
}

/** Indexed FLAT nodes below a path (`…/laboratory_analyte_result:0`, `:1`…), in index order. */
function indexes(flat: Flat, prefix: string): number[] {
  const found = new Set<number>();
  for (const key of Object.keys(flat)) {
    const match = key.startsWith(`${prefix}:`) ? /^:(\d+)[/|]/.exec(key.slice(prefix.length)) : null;
    if (match) found.add(Number(match[1]));
  }
  return [...found].sort((a, b) => a - b);
}

// ---- vital_signs.v1 ------------------------------------------------------------

const BLOOD_PRESSURE = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const REGULARITY = { regular: 'at0006', irregular: 'at1028' } as const;

const vitalSigns: SimpleForm = {
  root: 'vital_signs',
  definition: {
    type: 'object',
    children: {
      blood_pressure: slot(BLOOD_PRESSURE),
      pulse: slot('openEHR-EHR-OBSERVATION.pulse.v2', false),
      recorded_at: { type: 'date_time', required: true },
    },
  },
  toFlat(c, composer) {
    const root = 'vital_signs';
    const time = c.recorded_at as string;
    const flat: Flat = envelope(root, composer, time);
    const bp = `${root}/blood_pressure/any_event:0`;
    Object.assign(flat, entry(`${root}/blood_pressure`));
    putQuantity(flat, `${bp}/systolic`, c.blood_pressure.systolic);
    putQuantity(flat, `${bp}/diastolic`, c.blood_pressure.diastolic);
    const position = c.blood_pressure.position?.code as string | undefined;
    if (position) putCoded(flat, `${bp}/position`, 'local', position, textOf(BLOOD_PRESSURE, 'position', position)!);
    flat[`${bp}/time`] = time;
    if (isObject(c.pulse)) {
      const pulse = `${root}/pulse_heart_beat/any_event:0`;
      Object.assign(flat, entry(`${root}/pulse_heart_beat`));
      putQuantity(flat, `${pulse}/rate`, c.pulse.rate);
      if (typeof c.pulse.regular === 'boolean')
        putCoded(flat, `${pulse}/regularity`, 'local', c.pulse.regular ? REGULARITY.regular : REGULARITY.irregular, c.pulse.regular ? 'Regular' : 'Irregular');
      flat[`${pulse}/time`] = time;
    }
    return flat;
  },
  fromFlat(flat) {
    const bp = 'vital_signs/blood_pressure/any_event:0';
    const pulse = 'vital_signs/pulse_heart_beat/any_event:0';
    const position = flat[`${bp}/position|code`];
    const content: Json = {
      blood_pressure: {
        systolic: getQuantity(flat, `${bp}/systolic`),
        diastolic: getQuantity(flat, `${bp}/diastolic`),
        ...(position !== undefined ? { position: { code: position, value: flat[`${bp}/position|value`] } } : {}),
      },
    };
    if (Object.keys(flat).some((k) => k.startsWith('vital_signs/pulse_heart_beat/'))) {
      const rate = getQuantity(flat, `${pulse}/rate`);
      const regularity = flat[`${pulse}/regularity|code`];
      content.pulse = {
        ...(rate ? { rate } : {}),
        ...(regularity !== undefined ? { regular: regularity === REGULARITY.regular } : {}),
      };
    }
    content.recorded_at = flat[`${bp}/time`];
    return content;
  },
};

// ---- lab_result.v1 ---------------------------------------------------------------

/** The lab result's overall status: the simple form's FHIR codes ⇄ the archetype's at-codes. */
export const LAB_STATUS: Record<string, { atCode: string; text: string }> = {
  registered: { atCode: 'at0107', text: 'Registered' },
  preliminary: { atCode: 'at0120', text: 'Preliminary' },
  final: { atCode: 'at0038', text: 'Final' },
  amended: { atCode: 'at0040', text: 'Amended' },
};
const LAB_RESULT = 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1';

const labResult: SimpleForm = {
  root: 'laboratory_result',
  definition: { type: 'object', children: { lab_result: slot(LAB_RESULT) } },
  toFlat(c, composer) {
    const root = 'laboratory_result';
    const lab = c.lab_result as Json;
    const event = `${root}/laboratory_test_result/any_event`;
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
    const event = 'laboratory_result/laboratory_test_result/any_event';
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

// ---- medication_order.v1 ---------------------------------------------------------

const MEDICATION_ORDER = 'openEHR-EHR-INSTRUCTION.medication_order.v3';

/**
 * The simple form's dates (order start and stop) as the archetype's
 * DV_DATE_TIME: midnight UTC, the instant `new Date('2026-11-22')` denotes.
 */
const dateTimeOfDate = (date: string): string => `${date}T00:00:00Z`;
/** The simple form's date of such a date-time; undefined for any other time. */
export const dateOfDateTime = (value: unknown): string | undefined =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T00:00:00Z$/.test(value) ? value.slice(0, 10) : undefined;

/** The INSTRUCTION's mandatory narrative, written from the order (so a FLAT round-trip compares equal). */
function orderNarrative(o: Json): string {
  const dose = `${o.dose.magnitude} ${o.dose.unit}`;
  return `${o.medication}: ${dose}, ${o.doses_per_day} times a day${o.as_needed === true ? ', as required' : ''}`;
}

const medicationOrder: SimpleForm = {
  root: 'prescription',
  definition: { type: 'object', children: { medication_order: slot(MEDICATION_ORDER) } },
  toFlat(c, composer) {
    const root = 'prescription';
    const o = c.medication_order as Json;
    const instruction = `${root}/medication_order`;
    const order = `${instruction}/order`;
    const dosage = `${order}/therapeutic_direction/dosage`;
    const start = dateTimeOfDate(o.start_date);
    const flat: Flat = { ...envelope(root, composer, start), ...entry(instruction) };
    flat[`${order}/medication_item`] = o.medication;
    putCoded(flat, `${order}/route`, 'EDQM', o.route.code, textOf(MEDICATION_ORDER, 'route', o.route.code)!);
    if (o.instructions !== undefined) flat[`${order}/overall_directions_description`] = o.instructions;
    putQuantity(flat, `${dosage}/dose`, o.dose);
    flat[`${dosage}/timing_daily/frequency|magnitude`] = o.doses_per_day;
    flat[`${dosage}/timing_daily/frequency|unit`] = '1/d';
    // The archetype's "As required" admits only true: not as required is its absence.
    if (o.as_needed === true) flat[`${dosage}/timing_daily/as_required`] = true;
    flat[`${order}/order_details/order_start_date_time`] = start;
    if (o.end_date !== undefined) flat[`${order}/order_details/order_stop_date_time`] = dateTimeOfDate(o.end_date);
    flat[`${instruction}/narrative`] = orderNarrative(o);
    return flat;
  },
  fromFlat(flat) {
    const order = 'prescription/medication_order/order';
    const dosage = `${order}/therapeutic_direction/dosage`;
    const route = flat[`${order}/route|code`];
    const instructions = flat[`${order}/overall_directions_description`];
    const end = flat[`${order}/order_details/order_stop_date_time`];
    const start = dateOfDateTime(flat[`${order}/order_details/order_start_date_time`]);
    if (!start || (end !== undefined && !dateOfDateTime(end))) throw new Error('order dates with a time of day');
    return {
      medication_order: {
        medication: flat[`${order}/medication_item`],
        route: { code: route, value: flat[`${order}/route|value`] },
        dose: getQuantity(flat, `${dosage}/dose`),
        doses_per_day: flat[`${dosage}/timing_daily/frequency|magnitude`],
        ...(flat[`${dosage}/timing_daily/as_required`] === true ? { as_needed: true } : {}),
        start_date: start,
        ...(end !== undefined ? { end_date: dateOfDateTime(end) } : {}),
        ...(instructions !== undefined ? { instructions } : {}),
      },
    };
  },
};

const FORMS: Record<string, SimpleForm> = { 'vital_signs.v1': vitalSigns, 'lab_result.v1': labResult, 'medication_order.v1': medicationOrder };

/** The simple form of a demo template, when the template is that demo OPT (its FLAT root matches). */
export function simpleFormOf(templateId: string, flatRoot: string): SimpleForm | undefined {
  const form = FORMS[templateId];
  return form?.root === flatRoot ? form : undefined;
}

/**
 * The simple body of a composition's FLAT form, or undefined when the simple
 * form cannot hold all of it (other elements, other times, a composer
 * identified by more than a name): such compositions are shown canonical.
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
