import { validationError } from '../../../../../common/errors';
import { valueAt } from '../../content';
import { compareForSort, compareValues, compareWith, likeRegex } from './compare';
import { PathTree, type Binding, type Row } from './fan-out';
import { callFunction } from './functions';
import { descendants, implyType, isClass, withType } from './rm-tree';
import type { Aggregate, AqlQuery, ClassExpr, Column, Condition, Containment, Path, PathPart, Predicate, Value } from './parser';

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
  entityType: 'Composition' | 'Directory' | 'EHR';
  entityId: string;
  patientId: string;
}

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
  /** Whether an object is an earlier VERSION than the latest (bound by `VERSION[ALL_VERSIONS]` and version predicates only). */
  isPrior(object: Json): boolean;
}

/** Most rows one combination of containments may produce before the query must be narrowed. */
const MAX_BINDINGS = 100_000;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const NO_ROW: Row = { binding: {}, at: new Map() };

export function parameterValue(value: { kind: 'param'; name: string }, params: Parameters): unknown {
  if (!(value.name in params))
    throw validationError(`AQL: parameter $${value.name} has no value`, [{ path: `query_parameters.${value.name}`, message: 'missing' }]);
  return params[value.name];
}

export class Evaluator {
  private readonly now = new Date();
  private paths?: PathTree;
  /** The variables FROM binds. */
  private readonly variables = new Set<string>();

  constructor(
    private readonly query: AqlQuery,
    private readonly params: Parameters,
    private readonly universe: Universe,
  ) {
    const visit = (c: Containment) => {
      if (c.kind !== 'class') return [c.left, c.right].forEach(visit);
      if (c.variable) this.variables.add(c.variable);
      if (c.contains) visit(c.contains.expr);
    };
    visit(query.from);
  }

  run(): { columns: ResultColumn[]; rows: unknown[][]; sources: Source[] } {
    const { query } = this;
    const tree = this.tree;
    let rows: Row[] = [];
    for (const ehr of this.universe.ehrs) {
      for (const binding of this.bind(query.from, ehr, true)) for (const row of tree.rows(binding)) rows.push(row);
      if (rows.length > MAX_BINDINGS) throw validationError(`AQL: more than ${MAX_BINDINGS} rows before WHERE; narrow the query`);
    }
    if (query.where) {
      this.checkLikePatterns(query.where);
      rows = rows.filter((r) => this.test(query.where!, r));
    }

    type Out = { values: unknown[]; keys: unknown[]; sources: Row[] };
    let out: Out[];
    const aggregated = query.select.some((s) => s.expr.kind === 'aggregate');
    if (aggregated) {
      const groups = new Map<string, Row[]>();
      for (const r of rows) {
        const key = JSON.stringify(query.select.map((s) => (s.expr.kind === 'aggregate' ? null : this.value(s.expr, r))));
        groups.set(key, [...(groups.get(key) ?? []), r]);
      }
      // Aggregates over no rows answer one row (COUNT 0), unless there is something to group by.
      if (groups.size === 0 && query.select.every((s) => s.expr.kind === 'aggregate')) groups.set('', []);
      out = [...groups.values()].map((group) => {
        const values = query.select.map((s) => (s.expr.kind === 'aggregate' ? this.aggregate(s.expr, group) : this.value(s.expr, group[0])));
        return { values, keys: query.orderBy.map((o) => this.columnValue(o.path, values)), sources: group };
      });
    } else {
      out = rows.map((r) => {
        const values = query.select.map((s) => this.value(s.expr as Value, r));
        const keys = query.orderBy.map((o) => (this.namesColumn(o.path) ? this.columnValue(o.path, values) : this.value(o.path, r)));
        return { values, keys, sources: [r] };
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
      columns: query.select.map(resultColumn),
      rows: out.map((r) => r.values),
      sources: this.sources(out.flatMap((r) => r.sources.map((row) => row.binding))),
    };
  }

  /**
   * The paths each row holds a value of (SELECT, aggregates, and ORDER BY of a plain query), as one tree:
   * the rows fan out over them.
   */
  private get tree(): PathTree {
    const paths: Path[] = [];
    const collect = (v: Value | Aggregate) => {
      if (v.kind === 'path') paths.push(v);
      else if (v.kind === 'aggregate' && v.path) paths.push(v.path);
      else if (v.kind === 'call') v.args.forEach(collect);
    };
    this.query.select.forEach((s) => collect(s.expr));
    if (!this.query.select.some((s) => s.expr.kind === 'aggregate')) paths.push(...this.query.orderBy.map((o) => o.path).filter((p) => !this.namesColumn(p)));
    return (this.paths ??= new PathTree(paths, {
      step: (object, part) => this.walk(object, [part], 0, false),
      matches: (object, predicate) => this.matches(object, predicate),
      hasLegacy: (object) => this.universe.legacyOf(object) !== undefined,
      legacy: (object, parts) =>
        valueAt(
          this.universe.legacyOf(object),
          parts.map((p) => p.name),
        ),
    }));
  }

  /** Whether an ORDER BY names a column by its alias rather than a path of a FROM variable. */
  private namesColumn(path: Path): boolean {
    return path.parts.length === 0 && !this.variables.has(path.variable);
  }

  /** The distinct records the rows were computed from: their compositions and directories, or the EHR where a row binds neither. */
  private sources(bindings: Binding[]): Source[] {
    const seen = new Map<string, Source>();
    for (const b of bindings) {
      const found = Object.values(b).flatMap((object) => this.universe.sourceOf(object) ?? []);
      const records = found.filter((s) => s.entityType !== 'EHR');
      for (const source of records.length > 0 ? records : found) seen.set(`${source.entityType}:${source.entityId}`, source);
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

  /**
   * The bindings of a containment below `scope`: every class binds (inner joins), except within an OR (`either`).
   * An unbound variable is absent from a binding, so its paths are NULL.
   */
  private bind(expr: Containment, scope: Json, includeScope: boolean): Binding[] {
    if (expr.kind === 'or') return this.either(expr, scope, includeScope).filter((b) => this.holds(expr, b));
    if (expr.kind === 'and') return product(this.bind(expr.left, scope, includeScope), this.bind(expr.right, scope, includeScope));
    return this.classBindings(expr, scope, includeScope, (inner, object) => this.bind(inner, object, false));
  }

  /**
   * The rows of an OR, as EHRbase forms them (its AQL engine left-joins every operand to the same scope and keeps
   * the rows where one holds; `bind` then drops those where none does): each operand binds on its own and the rows
   * are the product of the operands' bindings, an operand that finds nothing giving one binding without its
   * variables. So a composition holding both branches gives a row per pair, not a row per branch. A CONTAINS chain
   * operand binds whole or not at all; a single class or a parenthesised AND binds class by class (`optional`), so
   * the classes it found stay in the row even where the operand does not hold.
   */
  private either(expr: Extract<Containment, { kind: 'or' }>, scope: Json, includeScope: boolean): Binding[] {
    const operand = (c: Containment): Binding[] => {
      if (!isChain(c)) return this.optional(c, scope, includeScope);
      const found = this.bind(c, scope, includeScope);
      return found.length > 0 ? found : [{}];
    };
    return product(operand(expr.left), operand(expr.right));
  }

  /** The bindings of a containment where each class is optional (a left join): at least one, without the classes it did not find. */
  private optional(expr: Containment, scope: Json, includeScope: boolean): Binding[] {
    if (expr.kind === 'or') return this.either(expr, scope, includeScope);
    if (expr.kind === 'and') return product(this.optional(expr.left, scope, includeScope), this.optional(expr.right, scope, includeScope));
    const found = this.classBindings(expr, scope, includeScope, (inner, object) => this.optional(inner, object, false));
    return found.length > 0 ? found : [{}];
  }

  /** A class's bindings: each object it names, with the bindings `contained` finds below it (NOT CONTAINS: where there are none). */
  private classBindings(expr: ClassExpr, scope: Json, includeScope: boolean, contained: (inner: Containment, object: Json) => Binding[]): Binding[] {
    return this.candidates(expr, scope, includeScope).flatMap((candidate) => {
      const own: Binding = { [bindingKey(expr)]: candidate };
      if (!expr.contains) return [own];
      if (expr.contains.not) return this.bind(expr.contains.expr, candidate, false).length === 0 ? [own] : [];
      return contained(expr.contains.expr, candidate).map((inner) => ({ ...own, ...inner }));
    });
  }

  /** Whether a binding holds a containment whole: every class of it bound, one operand of each OR. */
  private holds(expr: Containment, binding: Binding): boolean {
    if (expr.kind === 'or') return this.holds(expr.left, binding) || this.holds(expr.right, binding);
    if (expr.kind === 'and') return this.holds(expr.left, binding) && this.holds(expr.right, binding);
    if (!(bindingKey(expr) in binding)) return false;
    return !expr.contains || expr.contains.not || this.holds(expr.contains.expr, binding);
  }

  /** The objects at or below `scope` a class expression names. */
  private candidates(expr: ClassExpr, scope: Json, includeScope: boolean): Json[] {
    // An at-code names a node of the archetype it is written in, as EHRbase reads it: inside an archetyped scope
    // (`OBSERVATION o CONTAINS ELEMENT[at0004]`) it is not looked for inside another archetype below it.
    const id = expr.predicate?.kind === 'node' ? expr.predicate.id : undefined;
    const withinArchetype = typeof id === 'string' && AT_CODE.test(id) && typeof scope.archetype_node_id === 'string';
    // Earlier versions are searched only for a VERSION that asks for them: every other class sees the latest versions' data.
    const everyVersion = expr.version !== undefined && expr.version.kind !== 'latest';
    const skip = (o: Json) => (withinArchetype && isArchetypeRoot(o)) || (!everyVersion && this.universe.isPrior(o));
    const below = descendants(scope, skip);
    return (includeScope ? [scope, ...below] : below).filter(
      (o) => isClass(o, expr.rmClass) && this.matches(o, expr.predicate) && (expr.version?.kind !== 'compare' || this.matches(o, expr.version)),
    );
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
        const right = this.value(predicate.value);
        const options = { numericText: predicate.value.kind === 'param' };
        return this.walk(object, predicate.path, 0).some((left) => compareWith(predicate.op, left, right, options));
      }
      case 'node': {
        const id = typeof predicate.id === 'string' ? predicate.id : String(parameterValue(predicate.id, this.params));
        // A COMPOSITION's archetype predicate may name its template (a CareGraph extension).
        const idMatches = object.archetype_node_id === id || (object._type === 'COMPOSITION' && object.archetype_details?.template_id?.value === id);
        if (!idMatches) return false;
        if (!predicate.name) return true;
        return object.name?.value === this.value(predicate.name);
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

  /**
   * Every value a path reaches in a row: below the deepest object of the path the row holds (so WHERE tests the
   * row's own event, participation…), any value beyond it.
   */
  private resolveIn(path: Path, row: Row): unknown[] {
    const anchor = this.tree.anchor(path, row);
    return anchor && anchor.depth > 0 ? this.walk(anchor.value, path.parts, anchor.depth) : this.resolve(path, row.binding);
  }

  private walk(value: unknown, parts: PathPart[], i: number, legacy = true): unknown[] {
    if (i === parts.length) return value === undefined || value === null ? [] : [value];
    if (!isObject(value)) return [];
    const part = parts[i];
    const next = value[part.name];
    if (next === undefined) {
      const simple = legacy ? this.universe.legacyOf(value) : undefined;
      if (simple === undefined || parts.slice(i).some((p) => p.predicate)) return [];
      const found = valueAt(
        simple,
        parts.slice(i).map((p) => p.name),
      );
      return found === undefined ? [] : [found];
    }
    const items = Array.isArray(next) ? next : [next];
    for (const item of items) implyType(value, part.name, item);
    return items
      .filter((item) => !part.predicate || (isObject(item) && this.matches(item, part.predicate)))
      .flatMap((item) => this.walk(item, parts, i + 1, legacy));
  }

  private values(value: Value, row: Row): unknown[] {
    if (value.kind === 'path') return this.resolveIn(value, row);
    const single = this.value(value, row);
    return single === null || single === undefined ? [] : [single];
  }

  /** One value: the row's value of a path, a literal, a parameter, a function's result; null when there is none. */
  private value(value: Value, row: Row = NO_ROW): unknown {
    switch (value.kind) {
      case 'literal':
        return value.value;
      case 'param':
        return parameterValue(value, this.params);
      case 'path': {
        // An object answered whole says its type, as EHRbase writes it, where the stored JSON left it implied.
        return withType(this.resolveIn(value, row)[0] ?? null);
      }
      case 'call':
        return callFunction(
          value.name,
          value.args.map((a) => this.value(a, row)),
          this.now,
        );
    }
  }

  private aggregate(agg: Aggregate, group: Row[]): unknown {
    if (!agg.path) return group.length;
    const values = group.map((r) => this.value(agg.path!, r)).filter((v) => v !== null && v !== undefined);
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

  /** A LIKE pattern is checked before rows are tested: an invalid one is a 400 even where no row reaches it. */
  private checkLikePatterns(condition: Condition): void {
    if (condition.kind === 'and' || condition.kind === 'or') [condition.left, condition.right].forEach((c) => this.checkLikePatterns(c));
    else if (condition.kind === 'not') this.checkLikePatterns(condition.expr);
    else if (condition.kind === 'like') {
      const pattern = this.value(condition.pattern);
      if (typeof pattern === 'string') likeRegex(pattern);
    }
  }

  private test(condition: Condition, row: Row): boolean {
    switch (condition.kind) {
      case 'and':
        return this.test(condition.left, row) && this.test(condition.right, row);
      case 'or':
        return this.test(condition.left, row) || this.test(condition.right, row);
      case 'not':
        return !this.test(condition.expr, row);
      case 'exists':
        return this.resolveIn(condition.path, row).length > 0;
      case 'like': {
        const pattern = this.value(condition.pattern, row);
        if (typeof pattern !== 'string') throw validationError('AQL: LIKE takes a string pattern', [{ path: 'q', message: 'LIKE pattern' }]);
        const regex = likeRegex(pattern);
        return this.resolveIn(condition.path, row).some((v) => typeof v === 'string' && regex.test(v));
      }
      case 'matches': {
        const options = condition.values.map((v) => this.value(v, row));
        const loose = condition.values.map((v) => ({ numericText: v.kind === 'param' }));
        return this.resolveIn(condition.path, row).some((v) => options.some((o, i) => compareValues(v, o, loose[i]) === 0));
      }
      case 'compare': {
        const { op, left, right } = condition;
        // NULL: `= NULL` holds where the value is missing, `!= NULL` where it is present.
        if (isNull(right) || isNull(left)) {
          const other = isNull(right) ? left : right;
          const present = this.values(other, row).length > 0;
          if (op === '=') return !present;
          if (op === '!=') return present;
          return false;
        }
        const rights = this.values(right, row);
        // A parameter may come from a URL, as text: one that reads as a number compares with numbers as one.
        const options = { numericText: left.kind === 'param' || right.kind === 'param' };
        return this.values(left, row).some((l) => rights.some((r) => compareWith(op, l, r, options)));
      }
    }
  }
}

const AT_CODE = /^(at|id)\d/;
/** An object that starts an archetype of its own (its node id is an archetype id, not an at-code). */
const isArchetypeRoot = (o: Json) => typeof o.archetype_node_id === 'string' && !AT_CODE.test(o.archetype_node_id);

const isNull = (v: Value) => v.kind === 'literal' && v.value === null;

/** The key a class binds its object under: its variable, or one unique to its place in the query. */
const bindingKey = (expr: ClassExpr) => expr.variable ?? `\u0000${expr.location.start.line}:${expr.location.start.column}`;

/** A CONTAINS chain (`SECTION s CONTAINS OBSERVATION o`): as an OR operand it binds whole or not at all, as EHRbase joins it. */
export const isChain = (c: Containment) => c.kind === 'class' && c.contains !== undefined && !c.contains.not;

const product = (left: Binding[], right: Binding[]): Binding[] => left.flatMap((l) => right.map((r) => ({ ...l, ...r })));

/** A ResultSet column: its `path` only where it is one (as EHRbase answers), not for an aggregate, function or primitive. */
export function resultColumn(column: Column, index: number): ResultColumn {
  const name = column.alias ?? `#${index}`;
  return column.expr.kind === 'path' ? { name, path: column.expr.text } : { name };
}

export type ResultColumn = { name: string; path?: string };
