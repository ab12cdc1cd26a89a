import { validationError } from '../../../../../common/errors';
import { valueAt } from '../../content';
import type { Aggregate, AqlQuery, Column, Condition, Containment, Operator, Path, PathPart, Predicate, Value } from './parser';

/**
 * Evaluates a parsed AQL query over RM object trees the service has already
 * narrowed (tenant, access policy and consent, EHR, templates) and decrypted:
 * one tree per EHR, `EHR` → `ehr_status` and its VERSIONs → `data`
 * (COMPOSITION) → content. Containment searches these trees; paths walk RM
 * attributes, lists fanning out, `[…]` predicates narrowing by archetype node
 * id, name or a standard comparison.
 */

export type Parameters = Record<string, unknown>;
type Json = Record<string, any>;

/** An access-log entry for data a result row was computed from. */
export interface Source {
  entityType: 'Composition' | 'EHR';
  entityId: string;
  patientId: string;
}

/** Objects CareGraph links into the tree without an RM attribute (an EHR's versions). */
export const CHILDREN = Symbol('children');

export interface Universe {
  ehrs: Json[];
  /** The record (composition or EHR) an object belongs to, for the access log. */
  sourceOf(object: Json): Source | undefined;
  /**
   * CareGraph's simple form of an object (a demo template's content, or a
   * JSON template's slot), so the paths CareGraph answered before canonical
   * RM paths existed keep working where the RM path finds nothing.
   */
  legacyOf(object: Json): unknown;
}

const ITEM_STRUCTURES = ['ITEM_TREE', 'ITEM_LIST', 'ITEM_SINGLE', 'ITEM_TABLE'];
const SUBTYPES: Record<string, string[]> = {
  CONTENT_ITEM: ['SECTION', 'OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION', 'ADMIN_ENTRY'],
  ENTRY: ['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION', 'ADMIN_ENTRY'],
  CARE_ENTRY: ['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION'],
  EVENT: ['POINT_EVENT', 'INTERVAL_EVENT'],
  ITEM_STRUCTURE: ITEM_STRUCTURES,
  ITEM: ['CLUSTER', 'ELEMENT'],
  VERSION: ['ORIGINAL_VERSION'],
};
/**
 * The RM type of an object canonical JSON may leave without `_type`: the attribute's own type where it has no
 * subtypes (by `<parent type>.<attribute>`, or the attribute alone).
 */
const IMPLIED_TYPES: Record<string, string> = {
  'COMPOSITION.context': 'EVENT_CONTEXT',
  'OBSERVATION.data': 'HISTORY',
  'OBSERVATION.state': 'HISTORY',
  'INSTRUCTION.activities': 'ACTIVITY',
  'ACTION.ism_transition': 'ISM_TRANSITION',
  'ACTION.instruction_details': 'INSTRUCTION_DETAILS',
  feeder_audit: 'FEEDER_AUDIT',
};
const impliedTypes = new WeakMap<Json, string>();
const typeOf = (object: Json): string | undefined => object._type ?? impliedTypes.get(object);
/** Notes the type `child` has as the value of `parent[attribute]`, when it does not say. */
function implyType(parent: Json, attribute: string, child: unknown): void {
  const implied = IMPLIED_TYPES[`${typeOf(parent)}.${attribute}`] ?? IMPLIED_TYPES[attribute];
  if (implied && isObject(child) && child._type === undefined) impliedTypes.set(child, implied);
}
/** Most rows one combination of containments may produce before the query must be narrowed. */
const MAX_BINDINGS = 100_000;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

type Binding = Record<string, Json>;

export function parameterValue(value: { kind: 'param'; name: string }, params: Parameters): unknown {
  if (!(value.name in params))
    throw validationError(`AQL: parameter $${value.name} has no value`, [{ path: `query_parameters.${value.name}`, message: 'missing' }]);
  return params[value.name];
}

function children(object: Json): Json[] {
  const found: Json[] = [];
  const add = (key: string | undefined, v: unknown) => {
    if (Array.isArray(v)) v.forEach((item) => add(key, item));
    else if (isObject(v)) {
      if (key) implyType(object, key, v);
      found.push(v);
    }
  };
  for (const [key, value] of Object.entries(object)) add(key, value);
  add(undefined, object[CHILDREN as unknown as string]);
  return found;
}

/** Every object below `root` (not `root` itself), depth first, document order. */
function descendants(root: Json): Json[] {
  const found: Json[] = [];
  const stack = children(root).reverse();
  while (stack.length > 0) {
    const next = stack.pop()!;
    found.push(next);
    stack.push(...children(next).reverse());
  }
  return found;
}

export class Evaluator {
  private readonly now = new Date();

  constructor(
    private readonly query: AqlQuery,
    private readonly params: Parameters,
    private readonly universe: Universe,
  ) {}

  run(): { columns: Array<{ name: string; path: string }>; rows: unknown[][]; sources: Source[] } {
    const { query } = this;
    let bindings: Binding[] = [];
    for (const ehr of this.universe.ehrs) {
      bindings.push(...this.bind(query.from, ehr, true));
      if (bindings.length > MAX_BINDINGS) throw validationError(`AQL: more than ${MAX_BINDINGS} rows before WHERE; narrow the query`);
    }
    if (query.where) bindings = bindings.filter((b) => this.test(query.where!, b));

    type Out = { values: unknown[]; keys: unknown[]; sources: Binding[] };
    let out: Out[];
    const aggregated = query.select.some((s) => s.expr.kind === 'aggregate');
    if (aggregated) {
      const groups = new Map<string, Binding[]>();
      for (const b of bindings) {
        const key = JSON.stringify(query.select.map((s) => (s.expr.kind === 'aggregate' ? null : this.value(s.expr, b))));
        groups.set(key, [...(groups.get(key) ?? []), b]);
      }
      // Aggregates over no rows answer one row (COUNT 0), unless there is something to group by.
      if (groups.size === 0 && query.select.every((s) => s.expr.kind === 'aggregate')) groups.set('', []);
      out = [...groups.values()].map((group) => {
        const values = query.select.map((s) => (s.expr.kind === 'aggregate' ? this.aggregate(s.expr, group) : this.value(s.expr, group[0])));
        return { values, keys: query.orderBy.map((o) => this.columnValue(o.path, values)), sources: group };
      });
    } else {
      out = bindings.map((b) => {
        const values = query.select.map((s) => this.value(s.expr as Value, b));
        const keys = query.orderBy.map((o) =>
          o.path.parts.length === 0 && !(o.path.variable in b) ? this.columnValue(o.path, values) : this.value(o.path, b),
        );
        return { values, keys, sources: [b] };
      });
    }
    if (query.orderBy.length > 0) {
      out.sort((a, b) => {
        for (const [i, order] of query.orderBy.entries()) {
          const result = compareForSort(a.keys[i], b.keys[i]);
          if (result !== 0) return order.descending ? -result : result;
        }
        return 0;
      });
    }
    if (query.distinct) {
      const seen = new Map<string, Out>();
      for (const row of out) {
        const key = JSON.stringify(row.values);
        const first = seen.get(key);
        if (first) first.sources.push(...row.sources);
        else seen.set(key, { ...row, sources: [...row.sources] });
      }
      out = [...seen.values()];
    }
    if (query.top) out = query.top.direction === 'BACKWARD' ? out.slice(Math.max(0, out.length - query.top.count)) : out.slice(0, query.top.count);
    if (query.offset) out = out.slice(query.offset);
    if (query.limit !== undefined) out = out.slice(0, query.limit);
    return {
      columns: query.select.map((s, i) => ({ name: s.alias ?? `#${i}`, path: columnPath(s) })),
      rows: out.map((r) => r.values),
      sources: this.sources(out.flatMap((r) => r.sources)),
    };
  }

  /** The distinct records the rows were computed from: their compositions, or the EHR where a row binds no composition. */
  private sources(bindings: Binding[]): Source[] {
    const seen = new Map<string, Source>();
    for (const b of bindings) {
      const found = Object.values(b).flatMap((object) => this.universe.sourceOf(object) ?? []);
      const compositions = found.filter((s) => s.entityType === 'Composition');
      for (const source of compositions.length > 0 ? compositions : found) seen.set(`${source.entityType}:${source.entityId}`, source);
    }
    return [...seen.values()];
  }

  /** An ORDER BY of an aggregate query, or by an alias, names a column. */
  private columnValue(path: Path, values: unknown[]): unknown {
    const index = this.query.select.findIndex((s) => (path.parts.length === 0 && s.alias === path.variable) || s.text === path.text);
    if (index < 0) throw validationError(`AQL: ORDER BY ${path.text} must name a column of this query`, [{ path: 'q', message: 'ORDER BY column' }]);
    return values[index];
  }

  // ---- containment -----------------------------------------------------------

  private bind(expr: Containment, scope: Json, includeScope: boolean): Binding[] {
    if (expr.kind === 'or') return [...this.bind(expr.left, scope, includeScope), ...this.bind(expr.right, scope, includeScope)];
    if (expr.kind === 'and') {
      const right = this.bind(expr.right, scope, includeScope);
      return this.bind(expr.left, scope, includeScope).flatMap((l) => right.map((r) => ({ ...l, ...r })));
    }
    const candidates = (includeScope ? [scope, ...descendants(scope)] : descendants(scope)).filter(
      (o) => this.isClass(o, expr.rmClass) && this.matches(o, expr.predicate),
    );
    const result: Binding[] = [];
    for (const candidate of candidates) {
      const own: Binding = { [expr.variable ?? `\u0000${expr.location.start.line}:${expr.location.start.column}`]: candidate };
      if (!expr.contains) result.push(own);
      else if (expr.contains.not) {
        if (this.bind(expr.contains.expr, candidate, false).length === 0) result.push(own);
      } else result.push(...this.bind(expr.contains.expr, candidate, false).map((inner) => ({ ...own, ...inner })));
    }
    return result;
  }

  private isClass(object: Json, rmClass: string): boolean {
    const type = typeOf(object);
    return type !== undefined && (type === rmClass || (SUBTYPES[rmClass]?.includes(type) ?? false));
  }

  /** Whether an object satisfies a predicate (`[at0004]`, `[openEHR-…, 'name']`, `[name/value='x']`, AND/OR). */
  private matches(object: Json, predicate: Predicate | undefined): boolean {
    if (!predicate) return true;
    switch (predicate.kind) {
      case 'and':
        return this.matches(object, predicate.left) && this.matches(object, predicate.right);
      case 'or':
        return this.matches(object, predicate.left) || this.matches(object, predicate.right);
      case 'compare': {
        const right = this.value(predicate.value, {});
        return this.walk(object, predicate.path, 0).some((left) => compareWith(predicate.op, left, right));
      }
      case 'node': {
        const id = typeof predicate.id === 'string' ? predicate.id : String(parameterValue(predicate.id, this.params));
        // A COMPOSITION's archetype predicate may name its template (a CareGraph extension).
        const idMatches = object.archetype_node_id === id || (object._type === 'COMPOSITION' && object.archetype_details?.template_id?.value === id);
        if (!idMatches) return false;
        if (!predicate.name) return true;
        return object.name?.value === this.value(predicate.name, {});
      }
    }
  }

  // ---- paths and values --------------------------------------------------------

  /** Every value a path reaches in a binding (lists fan out). */
  private resolve(path: Path, binding: Binding): unknown[] {
    const root = binding[path.variable];
    if (!root || !this.matches(root, path.predicate)) return [];
    const found = this.walk(root, path.parts, 0);
    if (found.length > 0) return found;
    const legacy = this.universe.legacyOf(root);
    if (legacy === undefined || path.parts.some((p) => p.predicate)) return [];
    const value = valueAt(
      legacy,
      path.parts.map((p) => p.name),
    );
    return value === undefined ? [] : [value];
  }

  private walk(value: unknown, parts: PathPart[], i: number): unknown[] {
    if (i === parts.length) return value === undefined || value === null ? [] : [value];
    if (!isObject(value)) return [];
    const part = parts[i];
    const next = value[part.name];
    if (next === undefined) {
      const legacy = this.universe.legacyOf(value);
      if (legacy === undefined || parts.slice(i).some((p) => p.predicate)) return [];
      const found = valueAt(
        legacy,
        parts.slice(i).map((p) => p.name),
      );
      return found === undefined ? [] : [found];
    }
    const items = Array.isArray(next) ? next : [next];
    for (const item of items) implyType(value, part.name, item);
    return items.filter((item) => !part.predicate || (isObject(item) && this.matches(item, part.predicate))).flatMap((item) => this.walk(item, parts, i + 1));
  }

  private values(value: Value, binding: Binding): unknown[] {
    if (value.kind === 'path') return this.resolve(value, binding);
    const single = this.value(value, binding);
    return single === null || single === undefined ? [] : [single];
  }

  /** One value: a path's first, a literal, a parameter, a function's result; null when there is none. */
  private value(value: Value, binding: Binding): unknown {
    switch (value.kind) {
      case 'literal':
        return value.value;
      case 'param':
        return parameterValue(value, this.params);
      case 'path': {
        // An object answered whole says its type, as EHRbase writes it, where the stored JSON left it implied.
        const found = this.resolve(value, binding)[0] ?? null;
        return isObject(found) && found._type === undefined && impliedTypes.has(found) ? { _type: impliedTypes.get(found), ...found } : found;
      }
      case 'call':
        return this.call(
          value.name,
          value.args.map((a) => this.value(a, binding)),
        );
    }
  }

  private call(name: string, args: unknown[]): unknown {
    const bad = (message: string): never => {
      throw validationError(`AQL: ${name}() ${message}`, [{ path: 'q', message: `${name}: ${message}` }]);
    };
    const arity = (min: number, max = min) => {
      if (args.length < min || args.length > max) bad(`takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}`);
    };
    const now = this.now.toISOString();
    switch (name) {
      case 'NOW':
      case 'CURRENT_DATE_TIME':
        arity(0);
        return now;
      case 'CURRENT_DATE':
        arity(0);
        return now.slice(0, 10);
      case 'CURRENT_TIME':
        arity(0);
        return now.slice(11, 19);
      case 'CURRENT_TIMEZONE':
        arity(0);
        return 'Z';
      case 'CONCAT':
        if (args.length === 0) bad('takes at least one argument');
        return args.some((a) => a === null) ? null : args.map(text).join('');
      case 'CONCAT_WS':
        if (args.length < 2) bad('takes a separator and at least one value');
        return args[0] === null
          ? null
          : args
              .slice(1)
              .filter((a) => a !== null)
              .map(text)
              .join(text(args[0]));
      default:
    }
    if (args.some((a) => a === null || a === undefined)) {
      // Arity is still checked: a wrong call is a 400 whatever the data.
      arity(...ARITY[name]);
      return null;
    }
    arity(...ARITY[name]);
    switch (name) {
      case 'LENGTH':
        return text(args[0]).length;
      case 'CONTAINS':
        return text(args[0]).includes(text(args[1]));
      case 'POSITION':
        return text(args[1]).indexOf(text(args[0])) + 1;
      case 'SUBSTRING': {
        const start = number(args[1], bad) - 1;
        return args.length === 3 ? text(args[0]).substr(Math.max(0, start), number(args[2], bad)) : text(args[0]).slice(Math.max(0, start));
      }
      case 'ABS':
        return Math.abs(number(args[0], bad));
      case 'MOD':
        return number(args[0], bad) % number(args[1], bad);
      case 'CEIL':
        return Math.ceil(number(args[0], bad));
      case 'FLOOR':
        return Math.floor(number(args[0], bad));
      case 'ROUND': {
        const factor = 10 ** (args.length === 2 ? number(args[1], bad) : 0);
        return Math.round(number(args[0], bad) * factor) / factor;
      }
      default:
        return bad('is not supported');
    }
  }

  private aggregate(agg: Aggregate, group: Binding[]): unknown {
    if (!agg.path) return group.length;
    const values = group.map((b) => this.value(agg.path!, b)).filter((v) => v !== null && v !== undefined);
    switch (agg.fn) {
      case 'COUNT':
        return agg.distinct ? new Set(values.map((v) => JSON.stringify(v))).size : values.length;
      case 'MIN':
      case 'MAX': {
        if (values.length === 0) return null;
        const sorted = [...values].sort(compareForSort);
        return agg.fn === 'MIN' ? sorted[0] : sorted[sorted.length - 1];
      }
      case 'SUM':
      case 'AVG': {
        const numbers = values.map((v) => (isObject(v) && typeof v.magnitude === 'number' ? v.magnitude : v));
        if (numbers.some((n) => typeof n !== 'number'))
          throw validationError(`AQL: ${agg.fn}(${agg.path.text}) needs numbers`, [{ path: 'q', message: `${agg.fn} of a non-numeric path` }]);
        if (numbers.length === 0) return null;
        const sum = (numbers as number[]).reduce((s, n) => s + n, 0);
        return agg.fn === 'SUM' ? sum : sum / numbers.length;
      }
    }
  }

  // ---- WHERE -------------------------------------------------------------------

  private test(condition: Condition, binding: Binding): boolean {
    switch (condition.kind) {
      case 'and':
        return this.test(condition.left, binding) && this.test(condition.right, binding);
      case 'or':
        return this.test(condition.left, binding) || this.test(condition.right, binding);
      case 'not':
        return !this.test(condition.expr, binding);
      case 'exists':
        return this.resolve(condition.path, binding).length > 0;
      case 'like': {
        const pattern = this.value(condition.pattern, binding);
        if (typeof pattern !== 'string') throw validationError('AQL: LIKE takes a string pattern', [{ path: 'q', message: 'LIKE pattern' }]);
        const regex = likeRegex(pattern);
        return this.resolve(condition.path, binding).some((v) => typeof v === 'string' && regex.test(v));
      }
      case 'matches': {
        const options = condition.values.map((v) => this.value(v, binding));
        return this.resolve(condition.path, binding).some((v) => options.some((o) => compareValues(v, o) === 0));
      }
      case 'compare': {
        const { op, left, right } = condition;
        // NULL: `= NULL` holds where the value is missing, `!= NULL` where it is present.
        if (isNull(right) || isNull(left)) {
          const other = isNull(right) ? left : right;
          const present = this.values(other, binding).length > 0;
          if (op === '=') return !present;
          if (op === '!=') return present;
          return false;
        }
        const rights = this.values(right, binding);
        return this.values(left, binding).some((l) => rights.some((r) => compareWith(op, l, r)));
      }
    }
  }
}

const ARITY: Record<string, [number, number]> = {
  LENGTH: [1, 1],
  CONTAINS: [2, 2],
  POSITION: [2, 2],
  SUBSTRING: [2, 3],
  ABS: [1, 1],
  MOD: [2, 2],
  CEIL: [1, 1],
  FLOOR: [1, 1],
  ROUND: [1, 2],
};

const isNull = (v: Value) => v.kind === 'literal' && v.value === null;

export function columnPath(column: Column): string {
  return column.expr.kind === 'path' ? column.expr.text : column.text;
}

function text(v: unknown): string {
  if (isObject(v) && typeof v.value === 'string') return v.value;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function number(v: unknown, bad: (message: string) => never): number {
  if (typeof v === 'number') return v;
  if (isObject(v) && typeof v.magnitude === 'number') return v.magnitude;
  return bad('takes numbers');
}

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
function compareValues(x: unknown, y: unknown): number | undefined {
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

function compareWith(op: Operator, a: unknown, b: unknown): boolean {
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
function compareForSort(a: unknown, b: unknown): number {
  if (a === undefined || a === null) return b === undefined || b === null ? 0 : 1;
  if (b === undefined || b === null) return -1;
  return compareValues(a, b) ?? JSON.stringify(a).localeCompare(JSON.stringify(b));
}
