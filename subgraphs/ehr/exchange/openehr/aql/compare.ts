import { validationError } from '../../../../../common/errors';
import type { Operator } from './parser';

/** Comparing, ordering and matching values as AQL does, in WHERE, ORDER BY and aggregates alike. */

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An AQL LIKE pattern (`?` one character, `*` any run, `\` escapes) written in
 * another pattern language: `literal` escapes one character for it. `\` escapes
 * only `*`, `?` and itself; any other use is a 400, as EHRbase answers it.
 */
export function translateLike(pattern: string, target: { anyRun: string; oneChar: string; literal: (ch: string) => string }): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[++i];
      if (next !== '*' && next !== '?' && next !== '\\')
        throw validationError(`AQL: Invalid LIKE pattern: ${pattern} (\\ escapes only *, ? and \\)`, [{ path: 'q', message: 'LIKE pattern' }]);
      out += target.literal(next);
    } else if (ch === '*') out += target.anyRun;
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

/** A DV_TIME's text: `hh[:mm[:ss[.fff]]]`, optionally with a zone. */
const TIME = /^\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * Which strings a temporal data value compares with: a date or date-time one with an ISO date or date-time, a
 * time one with a time. So `…/value < '2'` holds for no DV_TIME (EHRbase's answer), where text order would say
 * `'04:05:06' < '2'`.
 */
function comparableTemporal(dv: Record<string, any>, s: string): boolean {
  if (dv._type === 'DV_TIME') return TIME.test(s);
  if (dv._type === 'DV_DATE' || dv._type === 'DV_DATE_TIME') return ISO.test(s);
  return true;
}

/**
 * Values of different JSON types order as EHRbase orders them (PostgreSQL's jsonb order): text before numbers
 * before booleans. So `…/value/value < 10` holds for every text, `…/magnitude < false` for every number, and
 * `'2' = 2` never holds.
 */
const TYPE_RANK: Record<string, number> = { string: 0, number: 1, boolean: 2 };

/**
 * Numbers numerically, ISO dates and date-times in time order, other strings as text, DV_ORDERED data values by
 * their order; a missing value compares with nothing. A data value compares only with a value of its order's
 * type (a quantity with a number, a DV_TIME with a time): `…/value = '10.0'` holds for no DV_COUNT of 10.
 * Primitives of different types compare by their type's rank, except that, with `numericText`, a string that
 * reads as a number compares as that number: URL parameters have no types.
 */
export function compareValues(x: unknown, y: unknown, options: { numericText?: boolean } = {}): number | undefined {
  const a = orderingValue(x);
  const b = orderingValue(y);
  if (a === undefined || a === null || b === undefined || b === null) return undefined;
  if (options.numericText) {
    if (typeof a === 'number' && typeof b === 'string' && b.trim() !== '' && !Number.isNaN(Number(b))) return a - Number(b);
    if (typeof a === 'string' && typeof b === 'number' && a.trim() !== '' && !Number.isNaN(Number(a))) return Number(a) - b;
  }
  if (isObject(x) || isObject(y)) {
    if (isObject(a) || isObject(b) || typeof a !== typeof b) return undefined;
    if (typeof b === 'string' && isObject(x) && !isObject(y) && !comparableTemporal(x, b)) return undefined;
    if (typeof a === 'string' && isObject(y) && !isObject(x) && !comparableTemporal(y, a)) return undefined;
  }
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') {
    if (ISO.test(a) && ISO.test(b)) return Date.parse(a.length === 10 ? `${a}T00:00:00Z` : a) - Date.parse(b.length === 10 ? `${b}T00:00:00Z` : b);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  const ra = TYPE_RANK[typeof a];
  const rb = TYPE_RANK[typeof b];
  return ra === undefined || rb === undefined ? undefined : ra - rb;
}

export function compareWith(op: Operator, a: unknown, b: unknown, options: { numericText?: boolean } = {}): boolean {
  const result = compareValues(a, b, options);
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
