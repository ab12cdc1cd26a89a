import { AppError, validationError } from '../../../../common/errors';
import type { FhirResource } from './mapping';

/**
 * FHIR R4 search parameters: which ones each resource type supports, how a
 * query string value is parsed (token `system|code`, date with prefix,
 * reference, string), and matching against a mapped resource.
 */
export type ParamKind = 'token' | 'string' | 'date' | 'reference' | 'id';

const PATIENT_REFERENCE = { kind: 'reference', documentation: 'Patient/<id>' } as const;

export const SEARCH_PARAMETERS: Record<string, Record<string, { kind: ParamKind; documentation: string }>> = {
  Patient: {
    _id: { kind: 'id', documentation: 'The patient id' },
    identifier: { kind: 'token', documentation: `urn:caregraph:patient-id|<id> or urn:openehr:ehr-id|<ehr id>` },
    name: { kind: 'string', documentation: 'Starts with (case-insensitive) a given or family name; :exact for equality' },
    birthdate: { kind: 'date', documentation: 'Birth date, prefixes eq, ne, lt, le, gt, ge' },
    gender: { kind: 'token', documentation: 'male | female | other | unknown' },
  },
  Encounter: {
    patient: PATIENT_REFERENCE,
    date: { kind: 'date', documentation: 'period.start' },
  },
  Observation: {
    patient: PATIENT_REFERENCE,
    category: { kind: 'token', documentation: 'vital-signs | laboratory' },
    code: { kind: 'token', documentation: 'LOINC code, e.g. http://loinc.org|85354-9' },
    date: { kind: 'date', documentation: 'effectiveDateTime' },
  },
  MedicationRequest: {
    patient: PATIENT_REFERENCE,
    intent: { kind: 'token', documentation: 'order' },
    status: { kind: 'token', documentation: 'active | completed' },
  },
  DocumentReference: {
    patient: PATIENT_REFERENCE,
    category: { kind: 'token', documentation: 'clinical-note' },
    type: { kind: 'token', documentation: 'LOINC document type' },
    date: { kind: 'date', documentation: 'date (authored)' },
  },
  Appointment: {
    patient: PATIENT_REFERENCE,
    date: { kind: 'date', documentation: 'start' },
    status: { kind: 'token', documentation: 'booked | cancelled | fulfilled | noshow' },
  },
};

export const RESULT_PARAMETERS = ['_count', '_offset'];
const DEFAULT_COUNT = 20;
const MAX_COUNT = 100;

export interface RawParam {
  name: string;
  value: string;
}

export interface SearchCriterion {
  name: string;
  kind: ParamKind;
  modifier?: string;
  /** Comma-separated alternatives (OR); repeated parameters are separate criteria (AND). */
  values: string[];
}

export interface ParsedSearch {
  criteria: SearchCriterion[];
  count: number;
  offset: number;
}

const MODIFIERS: Partial<Record<ParamKind, string[]>> = { string: ['exact'] };

/** Splits `a,b\,c` on unescaped commas. */
function splitValues(value: string): string[] {
  return value.split(/(?<!\\),/).map((v) => v.replace(/\\,/g, ','));
}

export function parseSearch(resourceType: string, params: RawParam[]): ParsedSearch {
  const supported = SEARCH_PARAMETERS[resourceType] ?? {};
  const criteria: SearchCriterion[] = [];
  let count = DEFAULT_COUNT;
  let offset = 0;
  for (const { name: rawName, value } of params) {
    const [name, modifier, ...rest] = rawName.split(':');
    if (name === '_count' || name === '_offset') {
      if (!/^\d{1,6}$/.test(value)) throw validationError(`${name} must be a whole number`, [{ path: name, message: `'${value}' is not a whole number` }]);
      if (name === '_count') count = Math.min(Number(value), MAX_COUNT);
      else offset = Number(value);
      continue;
    }
    const definition = supported[name];
    if (!definition) {
      throw validationError(
        `Search parameter '${name}' is not supported for ${resourceType} (supported: ${[...Object.keys(supported), ...RESULT_PARAMETERS].join(', ')})`,
        [{ path: name, message: 'unsupported search parameter' }],
      );
    }
    if (rest.length > 0 || (modifier !== undefined && !(MODIFIERS[definition.kind] ?? []).includes(modifier))) {
      throw validationError(`Modifier ':${modifier}' is not supported on ${resourceType}.${name}`, [{ path: rawName, message: 'unsupported modifier' }]);
    }
    const values = splitValues(value).filter((v) => v !== '');
    if (values.length === 0) continue;
    if (definition.kind === 'date') values.forEach((v) => parseDateParam(name, v));
    criteria.push({ name, kind: definition.kind, modifier, values });
  }
  if (count === 0) throw validationError('_count must be at least 1', [{ path: '_count', message: 'must be 1..100' }]);
  return { criteria, count, offset };
}

export interface DateParam {
  prefix: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';
  /** [lo, hi): the instant range the value's precision denotes. */
  lo: number;
  hi: number;
}

const DATE_VALUE = /^(eq|ne|lt|le|gt|ge|sa|eb|ap)?(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

export function parseDateParam(name: string, value: string): DateParam {
  const match = DATE_VALUE.exec(value);
  const fail = (why: string) => validationError(`Invalid date parameter ${name}=${value}: ${why}`, [{ path: name, message: why }]);
  if (!match) throw fail('expected [prefix]YYYY[-MM[-DD[Thh:mm[:ss][zone]]]]');
  const [, prefix = 'eq', year, month, day, hour, minute, second, fraction, zone] = match;
  if (['sa', 'eb', 'ap'].includes(prefix)) throw fail(`prefix '${prefix}' is not supported`);
  let lo: number;
  let hi: number;
  if (hour !== undefined) {
    lo = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second ?? '00'}${fraction ?? ''}${zone ?? 'Z'}`);
    hi = lo + (second !== undefined ? 1000 : 60_000);
  } else if (day !== undefined) {
    lo = Date.UTC(Number(year), Number(month) - 1, Number(day));
    hi = lo + 86_400_000;
    if (new Date(lo).toISOString().slice(0, 10) !== `${year}-${month}-${day}`) throw fail('not a calendar date');
  } else if (month !== undefined) {
    if (Number(month) < 1 || Number(month) > 12) throw fail('not a month');
    lo = Date.UTC(Number(year), Number(month) - 1, 1);
    hi = Date.UTC(Number(year), Number(month), 1);
  } else {
    lo = Date.UTC(Number(year), 0, 1);
    hi = Date.UTC(Number(year) + 1, 0, 1);
  }
  if (Number.isNaN(lo)) throw fail('not a valid date-time');
  return { prefix: prefix as DateParam['prefix'], lo, hi };
}

/** A point in time against a date parameter (the point's own precision is its instant). */
export function matchesDate(value: string | undefined, param: DateParam): boolean {
  if (!value) return false;
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(t)) return false;
  switch (param.prefix) {
    case 'eq':
      return t >= param.lo && t < param.hi;
    case 'ne':
      return !(t >= param.lo && t < param.hi);
    case 'lt':
      return t < param.lo;
    case 'le':
      return t < param.hi;
    case 'gt':
      return t >= param.hi;
    case 'ge':
      return t >= param.lo;
  }
}

/** `system|code`, `|code` (no system), `system|` (any code), `code` (any system). */
export function parseToken(value: string): { system?: string | null; code?: string } {
  const bar = value.indexOf('|');
  if (bar < 0) return { code: value };
  const system = value.slice(0, bar);
  const code = value.slice(bar + 1);
  return { system: system === '' ? null : system, code: code === '' ? undefined : code };
}

function matchesCoding(coding: { system?: string; code?: string }, token: { system?: string | null; code?: string }): boolean {
  if (token.system === null && coding.system) return false;
  if (token.system && coding.system !== token.system) return false;
  return token.code === undefined || coding.code === token.code;
}

/** A reference parameter value → the patient id (`Patient/p-1`, `p-1` or an absolute URL). */
export function referenceId(value: string, type = 'Patient'): string {
  const match = new RegExp(`(?:^|/)${type}/([A-Za-z0-9\\-.]{1,64})$`).exec(value) ?? /^([A-Za-z0-9\-.]{1,64})$/.exec(value);
  if (!match) throw validationError(`'${value}' is not a ${type} reference`, [{ path: 'patient', message: `expected ${type}/<id>` }]);
  return match[1];
}

/** The clinical time a resource is searched and sorted by. */
export function resourceDate(resource: FhirResource): string | undefined {
  switch (resource.resourceType) {
    case 'Observation':
      return resource.effectiveDateTime;
    case 'Encounter':
      return resource.period?.start;
    case 'MedicationRequest':
      return resource.authoredOn;
    case 'DocumentReference':
      return resource.date;
    case 'Appointment':
      return resource.start;
    default:
      return undefined;
  }
}

const codeableConcepts = (resource: FhirResource, name: string): Array<{ coding?: Array<{ system?: string; code?: string }> }> => {
  const value = resource[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
};

/** Whether a mapped clinical resource meets one criterion (patient is applied before mapping). */
export function matchesCriterion(resource: FhirResource, criterion: SearchCriterion): boolean {
  return criterion.values.some((value) => {
    switch (criterion.kind) {
      case 'reference':
        return (
          resource.subject?.reference === `Patient/${referenceId(value)}` ||
          (resource.participant ?? []).some((p: any) => p.actor?.reference === `Patient/${referenceId(value)}`)
        );
      case 'date':
        return matchesDate(resourceDate(resource), parseDateParam(criterion.name, value));
      case 'token': {
        const token = parseToken(value);
        const element = resource[criterion.name];
        if (typeof element === 'string') return token.system === undefined && element === token.code;
        return codeableConcepts(resource, criterion.name).some((cc) => (cc.coding ?? []).some((c) => matchesCoding(c, token)));
      }
      default:
        throw new AppError('NOT_IMPLEMENTED', `Search parameter ${criterion.name} is not supported here`);
    }
  });
}
