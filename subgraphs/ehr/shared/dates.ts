import { validationError } from '../../../common/errors';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An optional filter bound: YYYY-MM-DD (a whole UTC day: `to` includes it) or
 * an ISO 8601 timestamp with a zone.
 */
export function parseBound(name: string, value: string | null | undefined, end = false): Date | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (DATE_ONLY.test(value)) {
    const day = new Date(`${value}T00:00:00.000Z`);
    if (!Number.isNaN(day.getTime()) && day.toISOString().startsWith(value)) return end ? new Date(day.getTime() + 86_400_000 - 1) : day;
  } else if (TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value))) {
    return new Date(value);
  }
  throw validationError(`'${name}' must be YYYY-MM-DD or an ISO 8601 timestamp with a zone`, [{ path: name, message: `'${value}' is not a valid date or timestamp` }]);
}
