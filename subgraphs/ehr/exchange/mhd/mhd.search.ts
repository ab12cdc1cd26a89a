import { AppError } from '../../../../common/errors';
import { Prisma } from '../../db/generated/client';
import { matchesCriterion, parseDateParam, parseToken, type DateParam, type ParsedSearch, type SearchCriterion } from '../fhir/search';
import { XDS } from '../xds/ebrim';
import { all, any, column, FALSE, holdsCode, isCode, TRUE } from '../xds/registry-sql';
import { entryUuid, SUBMISSION_SET_LIST, xdsSchemes } from './mhd.mapping';
import type { RegistryType } from './mhd.service';

/**
 * MHD searches (ITI-66, ITI-67) as SQL over the registry's clear columns, on the row `r` of XdsDocument or
 * XdsSubmissionSet: the conditions and sort keys that select and order the entries exactly as FHIR search
 * (fhir/search.ts: matchesCriterion, comparator) does the resources mhd.mapping.ts makes of them, so the
 * database matches, counts and pages them. Criteria on the patients searched are left to the caller (they
 * decide whose rows are read); every other criterion becomes a condition.
 */

const constant = (value: boolean) => (value ? TRUE : FALSE);
/** NOT that reads a NULL (a key a JSON column lacks) as false, as the resource's absent element is. */
const not = (condition: Prisma.Sql) => Prisma.sql`NOT COALESCE(${condition}, FALSE)`;

/** An instant the search compares and sorts by: the SQL of its column and of a bound in epoch milliseconds. */
interface Instant {
  sql: Prisma.Sql;
  bound(ms: number): Prisma.Sql;
}

/** No stored time reaches year 10000; a bound there (the end of `9999`) lies after every one. */
const END_OF_TIME = Date.UTC(10000, 0, 1);

/** The entry's registration (meta.lastUpdated, and a DocumentReference's date): a timestamp(3), as precise as the bound. */
const CREATED_AT: Instant = { sql: Prisma.sql`r."createdAt"`, bound: (ms) => Prisma.sql`${new Date(ms).toISOString()}::timestamp` };

/**
 * A List's date, the submission time: a DTM (YYYY[MM[DD[hh[mm[ss]]]]], UTC) whose instant is its start, as FHIR
 * reads the date or dateTime the mapping makes of it. The column holding that start as 14 digits (submissionInstant,
 * indexed) compares and sorts as those instants do; a bound is compared at whole seconds, the DTM's finest precision.
 */
const SUBMITTED_AT: Instant = {
  sql: column('submissionInstant'),
  bound: (ms) => Prisma.sql`${new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace(/\D/g, '').slice(0, 14)}`,
};

const atOrAfter = (instant: Instant, ms: number) => (ms >= END_OF_TIME ? FALSE : Prisma.sql`${instant.sql} >= ${instant.bound(ms)}`);
const before = (instant: Instant, ms: number) => (ms >= END_OF_TIME ? TRUE : Prisma.sql`${instant.sql} < ${instant.bound(ms)}`);

/** matchesDate's prefixes over [lo, hi). */
function dateCondition(instant: Instant, p: DateParam): Prisma.Sql {
  switch (p.prefix) {
    case 'eq':
      return all([atOrAfter(instant, p.lo), before(instant, p.hi)]);
    case 'ne':
      return Prisma.sql`NOT ${all([atOrAfter(instant, p.lo), before(instant, p.hi)])}`;
    case 'lt':
      return before(instant, p.lo);
    case 'le':
      return before(instant, p.hi);
    case 'gt':
      return atOrAfter(instant, p.hi);
    case 'ge':
      return atOrAfter(instant, p.lo);
  }
}

/** The coded columns of a document entry, by the token parameter that searches them; `list` ones hold several codes. */
const CODED: Record<string, { column: string; list?: true }> = {
  type: { column: 'typeCode' },
  category: { column: 'classCode' },
  format: { column: 'formatCode' },
  'security-label': { column: 'confidentialityCodes', list: true },
};

/** One stored code ({code, scheme}, the JSON `e`) against a token, as matchesCoding reads the Coding the mapping makes of it. */
function codingCondition(e: Prisma.Sql, value: string): Prisma.Sql {
  const token = parseToken(value);
  // `|code`: a coding without a system; a scheme-less code is the only one.
  if (token.system === null) return all([Prisma.sql`COALESCE(${e}->>'scheme', '') = ''`, isCode(e, token.code)]);
  if (token.system === undefined) return isCode(e, token.code);
  const schemes = xdsSchemes(token.system);
  return schemes.length ? isCode(e, token.code, schemes) : FALSE;
}

function codedCondition(criterion: SearchCriterion): Prisma.Sql {
  const { column: name, list } = CODED[criterion.name];
  if (criterion.modifier === 'missing') {
    const sql = column(name);
    const present = list ? Prisma.sql`(jsonb_typeof(${sql}) = 'array' AND jsonb_array_length(${sql}) > 0)` : Prisma.sql`jsonb_typeof(${sql}) = 'object'`;
    return criterion.values[0] === 'true' ? Prisma.sql`NOT ${present}` : present;
  }
  const matches = holdsCode(name, !!list, (e) => criterion.values.map((v) => codingCondition(e, v)));
  return criterion.modifier === 'not' ? not(matches) : matches;
}

/** A status token: a document entry is `current` (Approved) or `superseded` (Deprecated), so the criterion is decided for each. */
function statusCondition(criterion: SearchCriterion): Prisma.Sql {
  const current = matchesCriterion({ resourceType: 'DocumentReference', status: 'current' }, criterion);
  const superseded = matchesCriterion({ resourceType: 'DocumentReference', status: 'superseded' }, criterion);
  if (current === superseded) return constant(current);
  return current ? Prisma.sql`r.status = ${XDS.status.approved}` : Prisma.sql`r.status <> ${XDS.status.approved}`;
}

function condition(type: RegistryType, criterion: SearchCriterion): Prisma.Sql {
  const { kind, name, modifier, values } = criterion;
  // Every entry has a subject, both times and a status: `:missing` decides alike for all of them.
  if (kind === 'reference' || (kind === 'date' && modifier === 'missing')) return constant(values[0] === 'false');
  if (kind === 'id') {
    const ids = values.map(entryUuid).filter((id): id is string => !!id);
    return ids.length ? Prisma.sql`r.id = ANY(${ids}::text[])` : FALSE;
  }
  if (kind === 'date') {
    const instant = name === 'date' && type === 'List' ? SUBMITTED_AT : CREATED_AT;
    return any(values.map((v) => dateCondition(instant, parseDateParam(name, v))));
  }
  if (type === 'List' && (name === 'code' || name === 'status')) return constant(matchesCriterion({ resourceType: 'List', ...SUBMISSION_SET_LIST }, criterion));
  if (type === 'DocumentReference' && name === 'status') return statusCondition(criterion);
  if (type === 'DocumentReference' && CODED[name]) return codedCondition(criterion);
  throw new AppError('NOT_IMPLEMENTED', `Search parameter ${name} is not supported for ${type}`);
}

/**
 * The conditions a search's criteria put on the registry's rows (but the patients searched: plain `patient` and
 * `subject` criteria), and its sort keys: `_sort`, else the date newest first, then ties by id, as comparator sorts.
 */
export function registrySql(type: RegistryType, criteria: SearchCriterion[], sort: ParsedSearch['sort']): { where: Prisma.Sql[]; order: Prisma.Sql[] } {
  const where = criteria.filter((c) => c.kind !== 'reference' || c.modifier).map((c) => condition(type, c));
  const key = (name: string) => (name === '_id' ? Prisma.sql`r.id COLLATE "C"` : name === 'date' && type === 'List' ? SUBMITTED_AT.sql : CREATED_AT.sql);
  const order = [...(sort.length ? sort : [{ name: 'date', descending: true }]), { name: '_id', descending: false }].map(
    ({ name, descending }) => Prisma.sql`${key(name)} ${Prisma.raw(descending ? 'DESC' : 'ASC')}`,
  );
  return { where, order };
}
