import { calendarDay, DATE_ONLY, ISO_TIMESTAMP } from '../../../common/dates';
import { validationError } from '../../../common/errors';

const DAY_MS = 86_400_000;

export interface DateRange {
  from: Date;
  /** Exclusive upper bound: a date-only `to` covers that whole UTC day. */
  until: Date;
}

function parseBound(name: string, value: string): Date {
  if (DATE_ONLY.test(value)) {
    const day = calendarDay(value);
    if (!day) {
      throw validationError(`'${name}' is not a calendar date`, [{ path: name, message: `'${value}' is not a valid YYYY-MM-DD date` }]);
    }
    return day;
  }
  const instant = new Date(value);
  if (!ISO_TIMESTAMP.test(value) || Number.isNaN(instant.getTime())) {
    throw validationError(`'${name}' must be YYYY-MM-DD or an ISO 8601 timestamp`, [
      { path: name, message: `'${value}' is neither YYYY-MM-DD nor an ISO 8601 timestamp with a zone` },
    ]);
  }
  return instant;
}

/** docs/api.md §5: from/to inclusive, default today..today+7d (UTC), at most 366 days apart. */
export function parseDateRange(from: string | undefined | null, to: string | undefined | null, now = new Date()): DateRange {
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const start = from ? parseBound('from', from) : today;
  const toPoint = to ? parseBound('to', to) : new Date(today.getTime() + 7 * DAY_MS);
  if (start.getTime() > toPoint.getTime()) {
    throw validationError("'from' must not be after 'to'", [{ path: 'from', message: "'from' is after 'to'" }]);
  }
  if (toPoint.getTime() - start.getTime() > 366 * DAY_MS) {
    throw validationError('The range may span at most 366 days', [{ path: 'to', message: 'more than 366 days after from' }]);
  }
  const until = !to || DATE_ONLY.test(to) ? new Date(toPoint.getTime() + DAY_MS) : toPoint;
  return { from: start, until };
}
