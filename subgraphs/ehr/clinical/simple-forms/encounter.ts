import type { Flat } from '../opt/flat';
import { entry, envelope, putCoded, textOf, type Json, type SimpleForm } from './shared';

const ENCOUNTER = 'openEHR-EHR-COMPOSITION.encounter.v1';
const ROOT = 'encounter';
const CONTEXT = `${ROOT}/context`;
const REASON = `${ROOT}/reason_for_encounter`;
/** The encounter details cluster's "Encounter ID": the encounter is known by the appointment it was booked as. */
const APPOINTMENT = `${CONTEXT}/encounter_details/encounter_id`;
const APPOINTMENT_TYPE = 'appointment';
/** The practitioner is the context's one participation, in the performer function. */
const PERFORMER = `${CONTEXT}/_participation:0`;
const PERFORMER_FUNCTION = 'performer';

/**
 * The encounter in the RM: the COMPOSITION's context holds its times
 * (start_time, end_time), facility (health_care_facility) and practitioner (a
 * participation); the CKM reason-for-encounter EVALUATION its type (Contact
 * type, HL7 ActCode) and reason (Presenting problem); the CKM encounter-details
 * cluster in other_context the appointment id (a DV_IDENTIFIER of type
 * `appointment`). The type reads back as its code: the value is the code's
 * label, which the simple form's constraints fix.
 */
export const encounter: SimpleForm = {
  root: ROOT,
  definition: { type: 'object', children: { encounter: { type: 'archetype', archetypeId: ENCOUNTER, required: true } } },
  toFlat(c, composer) {
    const e = c.encounter as Json;
    const flat: Flat = { ...envelope(ROOT, composer, e.start), ...entry(REASON) };
    if (e.end !== undefined) flat[`${CONTEXT}/_end_time`] = e.end;
    if (e.location !== undefined) flat[`${CONTEXT}/_health_care_facility|name`] = e.location;
    if (e.practitioner !== undefined) {
      flat[`${PERFORMER}|function`] = PERFORMER_FUNCTION;
      flat[`${PERFORMER}|name`] = e.practitioner;
    }
    if (e.appointment_id !== undefined) {
      flat[`${APPOINTMENT}|id`] = e.appointment_id;
      flat[`${APPOINTMENT}|type`] = APPOINTMENT_TYPE;
    }
    const type = e.encounter_type.code as string;
    putCoded(flat, `${REASON}/contact_type`, 'HL7-ActCode', type, textOf(ENCOUNTER, 'encounter_type', type)!);
    if (e.reason !== undefined) flat[`${REASON}/presenting_problem`] = e.reason;
    return flat;
  },
  fromFlat(flat) {
    const optional = (key: string, value: unknown) => (value !== undefined ? { [key]: value } : {});
    const performer = flat[`${PERFORMER}|function`] === PERFORMER_FUNCTION ? flat[`${PERFORMER}|name`] : undefined;
    const appointment = flat[`${APPOINTMENT}|type`] === APPOINTMENT_TYPE ? flat[`${APPOINTMENT}|id`] : undefined;
    return {
      encounter: {
        encounter_type: { code: flat[`${REASON}/contact_type|code`] },
        start: flat[`${CONTEXT}/start_time`],
        ...optional('end', flat[`${CONTEXT}/_end_time`]),
        ...optional('location', flat[`${CONTEXT}/_health_care_facility|name`]),
        ...optional('practitioner', performer),
        ...optional('reason', flat[`${REASON}/presenting_problem`]),
        ...optional('appointment_id', appointment),
      },
    };
  },
};
