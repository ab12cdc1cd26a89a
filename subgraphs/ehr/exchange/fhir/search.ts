import { AppError, validationError } from '../../../../common/errors';
import type { FhirResource } from './mapping';
import { INCLUDE_PARAMETERS, SEARCH_PARAMETERS, SORT_PARAMETERS, type ParamKind } from '../../../../common/fhir/capability';

/**
 * FHIR R4 search: how a query string is parsed against the parameters the
 * facade declares (common/fhir/capability.ts): token `system|code`, date and
 * quantity with prefixes, reference, string, modifiers and result parameters;
 * matching, sorting and subsetting of mapped resources.
 */
export const RESULT_PARAMETERS = ['_count', '_offset', '_sort', '_summary', '_elements', '_include', '_revinclude'];
const DEFAULT_COUNT = 20;
export const MAX_COUNT = 100;

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

interface Include {
  sourceType: string;
  param: string;
}

export interface ParsedSearch {
  criteria: SearchCriterion[];
  count: number;
  offset: number;
  sort: Array<{ name: string; descending: boolean }>;
  summary?: 'true' | 'count' | 'false';
  /** Top-level elements asked for by `_elements` (besides the mandatory ones). */
  elements?: string[];
  include: Include[];
  revinclude: Include[];
  /** The parameters used, in order: what the Bundle's self link repeats. */
  used: RawParam[];
  /** Parameters ignored under `Prefer: handling=lenient`, with why. */
  ignored: Array<RawParam & { reason: string }>;
}

const MODIFIERS: Record<ParamKind, string[]> = {
  string: ['exact', 'missing'],
  token: ['not', 'missing'],
  date: ['missing'],
  quantity: ['missing'],
  reference: ['missing', 'Patient'],
  id: [],
};

/** Splits `a,b\,c` on unescaped commas. */
function splitValues(value: string): string[] {
  return value.split(/(?<!\\),/).map((v) => v.replace(/\\,/g, ','));
}

const invalid = (name: string, message: string) => validationError(message, [{ path: name, message }]);

function parseInclude(resourceType: string, name: string, value: string, reverse: boolean): Include {
  const [sourceType, param, target, ...rest] = value.split(':');
  const allowed = INCLUDE_PARAMETERS[sourceType] ?? [];
  if (rest.length > 0 || !allowed.includes(param) || (target !== undefined && target !== 'Patient'))
    throw invalid(
      name,
      `${name}=${value} is not supported (supported: ${Object.entries(INCLUDE_PARAMETERS)
        .flatMap(([t, ps]) => ps.map((p) => `${t}:${p}`))
        .join(', ')})`,
    );
  if (!reverse && sourceType !== resourceType) throw invalid(name, `_include=${value} must start with the searched type ${resourceType}`);
  if (reverse && resourceType !== 'Patient')
    throw invalid(name, `_revinclude=${value}: the ${sourceType}.${param} references point at Patient, not ${resourceType}`);
  return { sourceType, param };
}

/**
 * Parses a FHIR search. Under `strict` handling an unknown parameter or
 * modifier is a 400; under `lenient` (FHIR's default) it is ignored and
 * reported. A malformed value of a supported parameter is a 400 either way.
 */
export function parseSearch(resourceType: string, params: RawParam[], handling: 'strict' | 'lenient' = 'strict'): ParsedSearch {
  const supported = SEARCH_PARAMETERS[resourceType] ?? {};
  const parsed: ParsedSearch = { criteria: [], count: DEFAULT_COUNT, offset: 0, sort: [], include: [], revinclude: [], used: [], ignored: [] };
  const resultParams = resourceType === 'Everything' ? ['_count', '_offset'] : RESULT_PARAMETERS;
  const ignore = (param: RawParam, reason: string, error: () => Error) => {
    if (handling === 'strict') throw error();
    parsed.ignored.push({ ...param, reason });
  };
  for (const param of params) {
    const { name: rawName, value } = param;
    const [name, modifier, ...rest] = rawName.split(':');
    if (resultParams.includes(rawName)) {
      parseResultParameter(resourceType, parsed, rawName, value);
      parsed.used.push(param);
      continue;
    }
    const definition = supported[name];
    if (!definition) {
      const supportedNames = [...Object.keys(supported), ...resultParams].join(', ');
      ignore(param, 'unsupported search parameter', () =>
        invalid(name, `Search parameter '${rawName}' is not supported for ${resourceType} (supported: ${supportedNames})`),
      );
      continue;
    }
    if (rest.length > 0 || (modifier !== undefined && !MODIFIERS[definition.kind].includes(modifier))) {
      ignore(param, 'unsupported modifier', () => invalid(rawName, `Modifier ':${modifier}' is not supported on ${resourceType}.${name}`));
      continue;
    }
    const values = splitValues(value).filter((v) => v !== '');
    if (values.length === 0) continue;
    if (modifier === 'missing' && (values.length !== 1 || !['true', 'false'].includes(values[0]))) throw invalid(rawName, `${rawName} takes true or false`);
    if (modifier !== 'missing') {
      if (definition.kind === 'date') values.forEach((v) => parseDateParam(name, v));
      if (definition.kind === 'quantity') values.forEach((v) => parseQuantityParam(name, v));
    }
    parsed.criteria.push({ name, kind: definition.kind, modifier: modifier === 'Patient' ? undefined : modifier, values });
    parsed.used.push(param);
  }
  if (parsed.count === 0 && parsed.summary !== 'count') throw invalid('_count', '_count must be at least 1 (or use _summary=count)');
  return parsed;
}

function parseResultParameter(resourceType: string, parsed: ParsedSearch, name: string, value: string): void {
  switch (name) {
    case '_count':
    case '_offset':
      if (!/^\d{1,6}$/.test(value)) throw validationError(`${name} must be a whole number`, [{ path: name, message: `'${value}' is not a whole number` }]);
      if (name === '_count') parsed.count = Math.min(Number(value), MAX_COUNT);
      else parsed.offset = Number(value);
      return;
    case '_sort': {
      const keys = SORT_PARAMETERS[resourceType] ?? [];
      parsed.sort = value.split(',').map((key) => {
        const descending = key.startsWith('-');
        const sortName = descending ? key.slice(1) : key;
        if (!keys.includes(sortName)) throw invalid('_sort', `_sort=${key} is not supported for ${resourceType} (supported: ${keys.join(', ')})`);
        return { name: sortName, descending };
      });
      return;
    }
    case '_summary':
      if (!['true', 'count', 'false'].includes(value)) throw invalid('_summary', `_summary=${value} is not supported (true, count, false)`);
      parsed.summary = value as ParsedSearch['summary'];
      return;
    case '_elements':
      if (!value.split(',').every((e) => /^[a-z][A-Za-z0-9]*(\[x\])?$/.test(e))) throw invalid('_elements', '_elements takes top-level element names');
      parsed.elements = [...(parsed.elements ?? []), ...value.split(',')];
      return;
    case '_include':
      parsed.include.push(parseInclude(resourceType, name, value, false));
      return;
    case '_revinclude':
      parsed.revinclude.push(parseInclude(resourceType, name, value, true));
      return;
  }
}

export interface QuantityParam {
  prefix: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';
  value: number;
  /** The implicit range of `eq`/`ne`: half a unit of the value's last significant digit. */
  lo: number;
  hi: number;
  system?: string;
  code?: string;
}

const QUANTITY_VALUE = /^(eq|ne|lt|le|gt|ge|sa|eb|ap)?(-?\d+(?:\.(\d+))?)(?:\|([^|]*)\|(.*))?$/;

export function parseQuantityParam(name: string, value: string): QuantityParam {
  const match = QUANTITY_VALUE.exec(value);
  if (!match) throw invalid(name, `Invalid quantity parameter ${name}=${value}: expected [prefix]number[|system|code]`);
  const [, prefix = 'eq', number, decimals, system, code] = match;
  if (['sa', 'eb', 'ap'].includes(prefix)) throw invalid(name, `Invalid quantity parameter ${name}=${value}: prefix '${prefix}' is not supported`);
  const half = 0.5 * 10 ** -(decimals?.length ?? 0);
  const n = Number(number);
  return { prefix: prefix as QuantityParam['prefix'], value: n, lo: n - half, hi: n + half, system: system || undefined, code: code || undefined };
}

export function matchesQuantity(quantity: { value?: number; system?: string; code?: string; unit?: string } | undefined, param: QuantityParam): boolean {
  if (!quantity || typeof quantity.value !== 'number') return false;
  if (param.system && quantity.system !== param.system) return false;
  if (param.code && quantity.code !== param.code && quantity.unit !== param.code) return false;
  const v = quantity.value;
  switch (param.prefix) {
    case 'eq':
      return v >= param.lo && v < param.hi;
    case 'ne':
      return !(v >= param.lo && v < param.hi);
    case 'lt':
      return v < param.value;
    case 'le':
      return v <= param.value;
    case 'gt':
      return v > param.value;
    case 'ge':
      return v >= param.value;
  }
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

/**
 * The patients a search is limited to: the ids every plain `patient`/`subject`
 * criterion names (each criterion's values OR-ed, the criteria AND-ed), or
 * null when there is none.
 */
export function searchedPatientIds(criteria: SearchCriterion[]): string[] | null {
  const lists = criteria.filter((c) => c.kind === 'reference' && !c.modifier).map((c) => c.values.map((v) => referenceId(v)));
  if (lists.length === 0) return null;
  return [...new Set(lists.reduce((acc, list) => acc.filter((v) => list.includes(v))))];
}

/** The clinical time a resource is searched and sorted by. */
function resourceDate(resource: FhirResource): string | undefined {
  switch (resource.resourceType) {
    case 'Observation':
      return resource.effectiveDateTime;
    case 'Encounter':
      return resource.period?.start;
    case 'MedicationRequest':
      return resource.authoredOn;
    case 'DocumentReference':
    case 'List':
      return resource.date;
    case 'Appointment':
      return resource.start;
    case 'Patient':
      return resource.birthDate;
    default:
      return undefined;
  }
}

/** Token parameters whose element is not the top-level element of their name (the rest search `resource[name]`). */
const TOKEN_ELEMENTS: Record<string, (resource: FhirResource) => unknown> = {
  'security-label': (r) => r.securityLabel,
  // DocumentReference.content.format is a Coding: searched as a one-coding concept (none: absent, for `:missing`).
  format: (r) => {
    const formats = (r.content ?? []).flatMap((c: any) => (c.format ? [{ coding: [c.format] }] : []));
    return formats.length > 0 ? formats : undefined;
  },
};

const tokenElement = (resource: FhirResource, name: string): any => (TOKEN_ELEMENTS[name] ? TOKEN_ELEMENTS[name](resource) : resource[name]);

const codeableConcepts = (resource: FhirResource, name: string): Array<{ coding?: Array<{ system?: string; code?: string }> }> => {
  const value = tokenElement(resource, name);
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
};

/** The patient ids a resource references (subject, or an Appointment's participants). */
export function referencedPatients(resource: FhirResource): string[] {
  const references = [resource.subject?.reference, ...(resource.participant ?? []).map((p: any) => p.actor?.reference)];
  return references.filter((r): r is string => typeof r === 'string' && r.startsWith('Patient/')).map((r) => r.slice('Patient/'.length));
}

/** The value a parameter searches in a resource (undefined when absent), for `:missing`. */
function searchedValue(resource: FhirResource, criterion: SearchCriterion): unknown {
  switch (criterion.kind) {
    case 'reference':
      return referencedPatients(resource)[0];
    case 'date':
      return criterion.name === '_lastUpdated' ? resource.meta?.lastUpdated : resourceDate(resource);
    case 'quantity':
      return resource.valueQuantity;
    default:
      return criterion.name === 'birthdate' ? resource.birthDate : tokenElement(resource, criterion.name);
  }
}

/** Whether a mapped resource meets one criterion. */
export function matchesCriterion(resource: FhirResource, criterion: SearchCriterion): boolean {
  if (criterion.modifier === 'missing') return (searchedValue(resource, criterion) === undefined) === (criterion.values[0] === 'true');
  const any = criterion.values.some((value) => {
    switch (criterion.kind) {
      case 'id':
        return resource.id === value;
      case 'reference':
        return referencedPatients(resource).includes(referenceId(value));
      case 'date':
        return matchesDate(searchedValue(resource, criterion) as string | undefined, parseDateParam(criterion.name, value));
      case 'quantity':
        return matchesQuantity(resource.valueQuantity, parseQuantityParam(criterion.name, value));
      case 'token': {
        const token = parseToken(value);
        const element = tokenElement(resource, criterion.name);
        if (typeof element === 'string') return token.system === undefined && element === token.code;
        return codeableConcepts(resource, criterion.name).some((cc) => (cc.coding ?? []).some((c) => matchesCoding(c, token)));
      }
      default:
        throw new AppError('NOT_IMPLEMENTED', `Search parameter ${criterion.name} is not supported here`);
    }
  });
  // token :not matches resources without any of the codes (absent elements included), as FHIR R4 says.
  return criterion.modifier === 'not' ? !any : any;
}

/** The key a resource sorts by for a `_sort` parameter. */
function sortKey(resource: FhirResource, name: string): string | number | undefined {
  switch (name) {
    case '_id':
      return resource.id;
    case '_lastUpdated':
      return Date.parse(resource.meta?.lastUpdated ?? '') || undefined;
    case 'name':
      return resource.name?.[0]?.family?.toLowerCase();
    default: {
      const date = resourceDate(resource);
      return date ? Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(date) ? `${date}T00:00:00Z` : date) : undefined;
    }
  }
}

/** A comparator for `_sort` (absent values last either way); ties fall back to the id. */
export function comparator(sort: ParsedSearch['sort']): (a: FhirResource, b: FhirResource) => number {
  const rules = [...sort, { name: '_id', descending: false }];
  return (a, b) => {
    for (const { name, descending } of rules) {
      const ka = sortKey(a, name);
      const kb = sortKey(b, name);
      if (ka === kb) continue;
      if (ka === undefined) return 1;
      if (kb === undefined) return -1;
      const order = ka < kb ? -1 : 1;
      return descending ? -order : order;
    }
    return 0;
  };
}

/**
 * The summary elements (isSummary or mandatory) of each type's top level, as
 * the FHIR R4 StructureDefinitions mark them (search.test.ts checks them
 * against the published definitions): what `_summary=true` keeps.
 */
export const SUMMARY_ELEMENTS: Record<string, string[]> = {
  Patient: [
    'id',
    'meta',
    'implicitRules',
    'identifier',
    'active',
    'name',
    'telecom',
    'gender',
    'birthDate',
    'deceased[x]',
    'address',
    'managingOrganization',
    'link',
  ],
  Encounter: [
    'id',
    'meta',
    'implicitRules',
    'identifier',
    'status',
    'class',
    'type',
    'serviceType',
    'subject',
    'episodeOfCare',
    'participant',
    'appointment',
    'reasonCode',
    'reasonReference',
    'diagnosis',
  ],
  Observation: [
    'id',
    'meta',
    'implicitRules',
    'identifier',
    'basedOn',
    'partOf',
    'status',
    'code',
    'subject',
    'focus',
    'encounter',
    'effective[x]',
    'issued',
    'performer',
    'value[x]',
    'hasMember',
    'derivedFrom',
    'component',
  ],
  MedicationRequest: [
    'id',
    'meta',
    'implicitRules',
    'status',
    'intent',
    'priority',
    'doNotPerform',
    'reported[x]',
    'medication[x]',
    'subject',
    'authoredOn',
    'requester',
    'performerType',
    'instantiatesCanonical',
    'instantiatesUri',
    'basedOn',
    'groupIdentifier',
  ],
  DocumentReference: [
    'id',
    'meta',
    'implicitRules',
    'masterIdentifier',
    'identifier',
    'status',
    'docStatus',
    'type',
    'category',
    'subject',
    'date',
    'author',
    'relatesTo',
    'description',
    'securityLabel',
    'content',
    'context',
  ],
  List: ['id', 'meta', 'implicitRules', 'status', 'mode', 'title', 'code', 'subject', 'date', 'source'],
  Appointment: [
    'id',
    'meta',
    'implicitRules',
    'identifier',
    'status',
    'cancelationReason',
    'serviceCategory',
    'serviceType',
    'specialty',
    'appointmentType',
    'reasonCode',
    'start',
    'end',
    'participant',
  ],
};

/** The mandatory (min 1) top-level elements: `_elements` keeps them too, as FHIR R4 says servers should. */
export const MANDATORY_ELEMENTS: Record<string, string[]> = {
  Patient: [],
  Encounter: ['status', 'class'],
  Observation: ['status', 'code'],
  MedicationRequest: ['status', 'intent', 'medication[x]', 'subject'],
  DocumentReference: ['status', 'content'],
  List: ['status', 'mode'],
  Appointment: ['status', 'participant'],
};

const SUBSETTED = { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue', code: 'SUBSETTED', display: 'subsetted' };

/** A resource cut to the named top-level elements (`name[x]` keeps any choice), tagged SUBSETTED as FHIR requires. */
export function subset(resource: FhirResource, elements: string[]): FhirResource {
  const keep = (key: string) =>
    key === 'resourceType' ||
    key === 'id' ||
    key === 'meta' ||
    elements.some((e) => (e.endsWith('[x]') ? key.startsWith(e.slice(0, -3)) && /^[A-Z]/.test(key.slice(e.length - 3)) : key === e));
  const result = Object.fromEntries(Object.entries(resource).filter(([key]) => keep(key))) as FhirResource;
  return { ...result, meta: { ...resource.meta, tag: [...(resource.meta?.tag ?? []), SUBSETTED] } };
}
