import type { Operator } from './parser';

/** Comparing, ordering and matching values as AQL does, in WHERE, ORDER BY and aggregates alike. */

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An AQL LIKE pattern (`?` one character, `*` any run, `\` escapes) written in
 * another pattern language: `literal` escapes one character for it.
 */
export function translateLike(pattern: string, target: { anyRun: string; oneChar: string; literal: (ch: string) => string }): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\' && i + 1 < pattern.length) out += target.literal(pattern[++i]);
    else if (ch === '*') out += target.anyRun;
    else if (ch === '?') out += target.oneChar;
    else out += target.literal(ch);
  }
  return out;
}

/** LIKE in memory: the whole value must match. */
export function likeRegex(pattern: string): RegExp {
  return new RegExp(`^${translateLike(pattern, { anyRun: '[\\s\\S]*', oneChar: '[\\s\\S]', literal: escapeRegex })}$`);
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
/** Whether a string compares as a date or date-time (in time order) rather than as text. */
export const isIsoTime = (s: string) => ISO.test(s);

const DURATION =
  /^P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;
/** Seconds in a year, month, week, day, hour, minute, second: years and months at their Gregorian average length. */
const DURATION_SECONDS = [365.2425 * 86_400, (365.2425 / 12) * 86_400, 7 * 86_400, 86_400, 3_600, 60, 1];

/**
 * What a DV_ORDERED data value compares and sorts by: a quantity's or count's magnitude, a proportion's
 * numerator / denominator, an ordinal's or scale's value, a date's, time's or date-time's ISO text, a duration's
 * length in seconds. So `…/value > 82` and MAX(…/value) read a data value by its order, as EHRbase does.
 */
function orderingValue(v: unknown): unknown {
  if (!isObject(v)) return v;
  switch (v._type) {
    case 'DV_QUANTITY':
    case 'DV_COUNT':
      return v.magnitude;
    case 'DV_PROPORTION':
      return typeof v.numerator === 'number' && typeof v.denominator === 'number' && v.denominator !== 0 ? v.numerator / v.denominator : undefined;
    case 'DV_ORDINAL':
    case 'DV_SCALE':
    case 'DV_DATE_TIME':
    case 'DV_DATE':
    case 'DV_TIME':
      return v.value;
    case 'DV_DURATION': {
      const parts = typeof v.value === 'string' ? DURATION.exec(v.value.replace(/^-/, '')) : null;
      if (!parts) return undefined;
      const seconds = parts.slice(1).reduce((sum, part, i) => sum + (part ? Number(part) * DURATION_SECONDS[i] : 0), 0);
      return v.value.startsWith('-') ? -seconds : seconds;
    }
    default:
      return v;
  }
}

/**
 * Numbers numerically, ISO dates and date-times in time order, other strings as text, DV_ORDERED data values by
 * their order; a missing value compares with nothing.
 */
export function compareValues(x: unknown, y: unknown): number | undefined {
  const a = orderingValue(x);
  const b = orderingValue(y);
  if (a === undefined || a === null || b === undefined || b === null) return undefined;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') {
    if (ISO.test(a) && ISO.test(b)) return Date.parse(a.length === 10 ? `${a}T00:00:00Z` : a) - Date.parse(b.length === 10 ? `${b}T00:00:00Z` : b);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'string' && b.trim() !== '' && !Number.isNaN(Number(b))) return a - Number(b);
  if (typeof a === 'string' && typeof b === 'number' && a.trim() !== '' && !Number.isNaN(Number(a))) return Number(a) - b;
  return undefined;
}

export function compareWith(op: Operator, a: unknown, b: unknown): boolean {
  const result = compareValues(a, b);
  if (result === undefined) return false;
  switch (op) {
    case '=':
      return result === 0;
    case '!=':
      return result !== 0;
    case '<':
      return result < 0;
    case '>':
      return result > 0;
    case '<=':
      return result <= 0;
    case '>=':
      return result >= 0;
  }
}

/** Missing values last in ascending order; values that do not compare by their text. */
export function compareForSort(a: unknown, b: unknown): number {
  if (a === undefined || a === null) return b === undefined || b === null ? 0 : 1;
  if (b === undefined || b === null) return -1;
  return compareValues(a, b) ?? JSON.stringify(a).localeCompare(JSON.stringify(b));
}
