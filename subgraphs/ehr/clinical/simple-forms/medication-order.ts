import type { Flat } from '../opt/flat';
import { entry, envelope, getQuantity, putCoded, putQuantity, slot, textOf, type Json, type SimpleForm } from './shared';

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

export const medicationOrder: SimpleForm = {
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
    // Mandatory in the RM and not part of the form: any ACTION archetype, as EHRbase fills it in.
    flat[`${order}/action_archetype_id`] = '/.*/';
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
