import { generate, type Parser } from 'peggy';
import { validationError } from '../../../../../common/errors';
import { MAX_JSON_DEPTH } from '../../../../../common/json-depth';
import { AQL_GRAMMAR } from './grammar';

/**
 * openEHR AQL 1.1 (grammar in ./grammar.ts, supported features in
 * docs/exchange.md). The parser is generated from the grammar on first use
 * (about 0.3 s, once per process; a parse then takes about 1 ms) rather than
 * checked in as generated code: the grammar stays the one source, with no
 * generated file to regenerate or keep in step, and peggy is a runtime
 * dependency anyway. A syntax error is a 400 naming line and column;
 * constructs the engine cannot answer are refused here, before any data is read.
 */

type Primitive = string | number | boolean | null;
export type Value =
  { kind: 'literal'; value: Primitive } | { kind: 'param'; name: string } | Path | { kind: 'call'; name: string; args: Value[]; text: string };
export type Aggregate = { kind: 'aggregate'; fn: 'COUNT' | 'MIN' | 'MAX' | 'SUM' | 'AVG'; distinct: boolean; path?: Path; text: string };

/** A node predicate (`[at0004]`, `[openEHR-…, 'name']`, `[$param]`) or a standard one (`[name/value='x']`), combined with AND/OR. */
export type Predicate =
  | { kind: 'node'; id: string | { kind: 'param'; name: string }; name?: Value }
  | { kind: 'compare'; path: PathPart[]; op: Operator; value: Value }
  | { kind: 'and' | 'or'; left: Predicate; right: Predicate };
export interface PathPart {
  name: string;
  predicate?: Predicate;
}
export interface Path {
  kind: 'path';
  variable: string;
  predicate?: Predicate;
  parts: PathPart[];
  text: string;
}
export type Operator = '=' | '!=' | '<' | '>' | '<=' | '>=';
export type Condition =
  | { kind: 'and' | 'or'; left: Condition; right: Condition }
  | { kind: 'not'; expr: Condition }
  | { kind: 'compare'; op: Operator; left: Value; right: Value }
  | { kind: 'exists'; path: Path }
  | { kind: 'like'; path: Path; pattern: Value }
  | { kind: 'matches'; path: Path; values: Value[] };

export interface ClassExpr {
  kind: 'class';
  rmClass: string;
  variable?: string;
  predicate?: Predicate;
  /** VERSION's predicate. */
  version?: { kind: 'latest' | 'all' } | Extract<Predicate, { kind: 'compare' }>;
  contains?: { not: boolean; expr: Containment };
  location: { start: { line: number; column: number } };
}
export type Containment = ClassExpr | { kind: 'and'; left: Containment; right: Containment } | { kind: 'or'; left: Containment; right: Containment };

export interface Column {
  expr: Value | Aggregate;
  text: string;
  alias?: string;
}
export interface AqlQuery {
  distinct: boolean;
  top?: { count: number; direction: 'FORWARD' | 'BACKWARD' };
  select: Column[];
  from: Containment;
  where?: Condition;
  orderBy: Array<{ path: Path; descending: boolean }>;
  limit?: number;
  offset?: number;
}

/** Functions of the spec the engine evaluates; TERMINOLOGY needs a terminology service CareGraph does not have. */
const FUNCTIONS = new Set([
  'LENGTH',
  'CONTAINS',
  'POSITION',
  'SUBSTRING',
  'CONCAT',
  'CONCAT_WS',
  'ABS',
  'MOD',
  'CEIL',
  'FLOOR',
  'ROUND',
  'NOW',
  'CURRENT_DATE',
  'CURRENT_TIME',
  'CURRENT_DATE_TIME',
  'CURRENT_TIMEZONE',
]);
/** The RM classes a FROM clause may name: what CareGraph stores (no PARTY or demographic classes). */
const RM_CLASSES = new Set([
  'EHR',
  'EHR_STATUS',
  'FOLDER',
  'VERSION',
  'COMPOSITION',
  'EVENT_CONTEXT',
  'CONTENT_ITEM',
  'SECTION',
  'ENTRY',
  'CARE_ENTRY',
  'OBSERVATION',
  'EVALUATION',
  'INSTRUCTION',
  'ACTION',
  'ADMIN_ENTRY',
  'ACTIVITY',
  'INSTRUCTION_DETAILS',
  'HISTORY',
  'EVENT',
  'POINT_EVENT',
  'INTERVAL_EVENT',
  'DATA_STRUCTURE',
  'ITEM_STRUCTURE',
  'ITEM_TREE',
  'ITEM_LIST',
  'ITEM_SINGLE',
  'ITEM_TABLE',
  'CLUSTER',
  'ITEM',
  'ELEMENT',
  'FEEDER_AUDIT',
]);
const MAX_LENGTH = 10_000;

let parser: Parser | undefined;

function unsupported(construct: string, at?: { line: number; column: number }): never {
  const where = at ? ` (line ${at.line}, column ${at.column})` : '';
  throw validationError(`AQL: ${construct} is not supported${where}`, [{ path: 'q', message: `unsupported construct: ${construct}`, construct }]);
}

/** Deepest paren nesting outside string literals: the generated parser recurses per level, so it is bounded before parsing. */
function parenDepth(q: string): number {
  let depth = 0;
  let max = 0;
  let quote: string | undefined;
  for (let i = 0; i < q.length; i++) {
    const ch = q[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '(') max = Math.max(max, ++depth);
    else if (ch === ')') depth--;
  }
  return max;
}

function tooDeep(): never {
  throw validationError(`AQL: the WHERE condition nests deeper than ${MAX_JSON_DEPTH} levels`, [
    { path: 'q', message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
  ]);
}

export function parseAql(q: string): AqlQuery {
  if (q.length > MAX_LENGTH) throw validationError(`AQL: the query is longer than ${MAX_LENGTH} characters`);
  if (parenDepth(q) > MAX_JSON_DEPTH) tooDeep();
  parser ??= generate(AQL_GRAMMAR);
  let query: AqlQuery;
  try {
    query = parser.parse(q) as AqlQuery;
  } catch (err) {
    if (err instanceof RangeError) tooDeep();
    const e = err as { message: string; location?: { start: { line: number; column: number } } };
    if (!e.location) throw err;
    const { line, column } = e.location.start;
    throw validationError(`AQL syntax error at line ${line}, column ${column}: ${e.message}`, [{ path: 'q', message: e.message, line, column }]);
  }
  check(query);
  return query;
}

/** What the grammar accepts but the engine refuses, and every path starting at a variable FROM declares (or an alias in ORDER BY). */
function check(query: AqlQuery): void {
  const declared = new Set<string>();
  const walkFrom = (c: Containment) => {
    if (c.kind !== 'class') {
      walkFrom(c.left);
      walkFrom(c.right);
      return;
    }
    if (!RM_CLASSES.has(c.rmClass)) unsupported(`FROM ${c.rmClass}`, c.location.start);
    if (c.variable) {
      if (declared.has(c.variable))
        throw validationError(`AQL: variable '${c.variable}' is declared twice in FROM`, [{ path: 'q', message: 'duplicate variable' }]);
      declared.add(c.variable);
    }
    if (c.contains) walkFrom(c.contains.expr);
  };
  walkFrom(query.from);
  if (query.top && query.limit !== undefined) throw validationError('AQL: TOP and LIMIT cannot be used together', [{ path: 'q', message: 'TOP with LIMIT' }]);

  const aliases = new Set(query.select.map((s) => s.alias).filter(Boolean));
  const path = (p: Path, aliasOk = false) => {
    if (declared.has(p.variable) || (aliasOk && p.parts.length === 0 && aliases.has(p.variable))) return;
    throw validationError(`AQL: '${p.variable}' in ${p.text} is not a variable declared in FROM`, [{ path: 'q', message: `unknown variable ${p.variable}` }]);
  };
  const value = (v: Value | Aggregate) => {
    if (v.kind === 'path') path(v);
    else if (v.kind === 'aggregate') {
      if (v.path) path(v.path);
    } else if (v.kind === 'call') {
      if (!FUNCTIONS.has(v.name)) unsupported(v.name === 'TERMINOLOGY' ? 'TERMINOLOGY() (no terminology service)' : `function ${v.name}()`);
      v.args.forEach(value);
    }
  };
  query.select.forEach((s) => value(s.expr));
  query.orderBy.forEach((o) => path(o.path, true));
  const condition = (c: Condition, depth: number) => {
    if (depth > MAX_JSON_DEPTH) tooDeep();
    switch (c.kind) {
      case 'and':
      case 'or':
        condition(c.left, depth);
        condition(c.right, depth);
        return;
      case 'not':
        condition(c.expr, depth + 1);
        return;
      case 'compare':
        value(c.left);
        value(c.right);
        return;
      case 'matches':
        path(c.path);
        c.values.forEach(value);
        return;
      default:
        path(c.path);
    }
  };
  if (query.where) condition(query.where, 0);
}
