import { ISO_TIMESTAMP, isTimeZone, LOCAL_TIMESTAMP, zonedTimeToInstant } from '../../../common/dates';
import { validationError, type ErrorDetail } from '../../../common/errors';

/** The longest appointment the schedule takes (a day); anything longer is a typing error. */
const MAX_DURATION_MS = 24 * 3_600_000;

export interface SlotInput {
  start?: string | null;
  end?: string | null;
  timeZone?: string | null;
}

export interface Slot {
  start: Date;
  end: Date;
  /** IANA zone the appointment's wall-clock times belong to; null reads as UTC. */
  timeZone: string | null;
}

/**
 * One end of a slot: an ISO 8601 time with its offset (2026-12-01T09:00+01:00)
 * is an instant as it stands; a wall-clock time without one (2026-12-01T09:00)
 * is read in the appointment's time zone, which must then be given.
 */
function instant(name: 'start' | 'end', value: string | null | undefined, zone: string | null, details: ErrorDetail[]): Date | undefined {
  if (value === undefined || value === null || value === '') {
    details.push({ path: name, message: 'required' });
    return undefined;
  }
  if (ISO_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value))) return new Date(value);
  if (LOCAL_TIMESTAMP.test(value)) {
    if (!zone) {
      details.push({ path: name, message: `'${value}' has no offset: add one (…+01:00, …Z) or give timeZone` });
      return undefined;
    }
    const at = zonedTimeToInstant(value, zone);
    if (!at) details.push({ path: name, message: `'${value}' does not exist in ${zone} (a daylight-saving gap or no calendar time)` });
    return at;
  }
  details.push({ path: name, message: `'${value}' is not an ISO 8601 time (YYYY-MM-DDTHH:MM with an offset, or local time with timeZone)` });
  return undefined;
}

/**
 * Parses and checks a slot: both ends, end after start, at most a day long,
 * and (unless `allowPast`) starting after `now`. VALIDATION_ERROR with every
 * problem at once.
 */
export function parseSlot(input: SlotInput, now: Date): Slot {
  const details: ErrorDetail[] = [];
  const timeZone = input.timeZone ?? null;
  if (timeZone !== null && !isTimeZone(timeZone)) details.push({ path: 'timeZone', message: `'${timeZone}' is not an IANA time zone` });
  const zone = timeZone !== null && isTimeZone(timeZone) ? timeZone : null;
  const start = instant('start', input.start, zone, details);
  const end = instant('end', input.end, zone, details);
  if (start && end) {
    if (end <= start) details.push({ path: 'end', message: 'must be after start' });
    else if (end.getTime() - start.getTime() > MAX_DURATION_MS) details.push({ path: 'end', message: 'an appointment lasts at most 24 hours' });
  }
  if (start && start <= now) details.push({ path: 'start', message: 'must be in the future' });
  if (details.length > 0) throw validationError('Invalid appointment time', details);
  return { start: start!, end: end!, timeZone };
}
