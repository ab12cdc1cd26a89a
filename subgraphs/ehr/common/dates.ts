import { calendarDay, DATE_ONLY, ISO_TIMESTAMP } from '../../../common/dates';
import { validationError } from '../../../common/errors';

/**
 * An optional filter bound: YYYY-MM-DD (a whole UTC day: `to` includes it) or
 * an ISO 8601 timestamp with a zone.
 */
export function parseBound(name: string, value: string | null | undefined, end = false): Date | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (DATE_ONLY.test(value)) {
    const day = calendarDay(value);
    if (day) return end ? new Date(day.getTime() + 86_400_000 - 1) : day;
  } else if (ISO_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value))) {
    return new Date(value);
  }
  throw validationError(`'${name}' must be YYYY-MM-DD or an ISO 8601 timestamp with a zone`, [
    { path: name, message: `'${value}' is not a valid date or timestamp` },
  ]);
}
