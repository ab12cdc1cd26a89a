import { validationError } from '../../../../../common/errors';
import { MAX_JSON_DEPTH } from '../../../../../common/json-depth';

/**
 * The AQL subset CareGraph answers (grammar in docs/exchange.md): SELECT of
 * paths, FROM [EHR e[ehr_id/value=…] CONTAINS] COMPOSITION c[template]
 * [CONTAINS <ENTRY> x[archetype] …], WHERE with comparisons, AND, OR, NOT and
 * parameters, ORDER BY, LIMIT/OFFSET. Anything else is a 400 that names the
 * construct.
 */

export type Operand = { kind: 'path'; path: Path } | { kind: 'literal'; value: string | number | boolean | null } | { kind: 'param'; name: string };
export type Expr =
  | { kind: 'and' | 'or'; left: Expr; right: Expr }
  | { kind: 'not'; expr: Expr }
  | { kind: 'compare'; op: '=' | '!=' | '<' | '>' | '<=' | '>='; left: Operand; right: Operand };

export interface Path {
  variable: string;
  /** Segments after the variable; a segment may carry an archetype predicate (`content[openEHR-…]`). */
  segments: Array<{ name: string; predicate?: string }>;
  text: string;
}

interface Containment {
  rmClass: string;
  variable?: string;
  /** Archetype id or template id, or a parameter. */
  predicate?: Operand;
}

export interface AqlQuery {
  select: Array<{ path: Path; alias?: string }>;
  ehr?: { variable?: string; ehrId?: Operand };
  /** COMPOSITION first, then the archetyped classes it contains, each inside the previous. */
  contains: Containment[];
  where?: Expr;
  orderBy: Array<{ path: Path; descending: boolean }>;
  limit?: number;
  offset?: number;
}

const ENTRY_CLASSES = ['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION', 'ADMIN_ENTRY', 'CLUSTER', 'SECTION', 'ELEMENT'];
const UNSUPPORTED_KEYWORDS = ['TOP', 'DISTINCT', 'LIKE', 'MATCHES', 'EXISTS', 'IN', 'XOR', 'GROUP', 'HAVING', 'UNION'];
/** RM classes are upper case, so `ehr_status` in a path is not the class. */
const UNSUPPORTED_CLASSES = ['VERSION', 'VERSIONED_OBJECT', 'FOLDER', 'EHR_STATUS'];
const AGGREGATES = ['COUNT', 'MIN', 'MAX', 'AVG', 'SUM', 'LENGTH', 'CONTAINS_TEXT', 'CONCAT', 'SUBSTRING'];

type Token = { type: 'word' | 'string' | 'number' | 'param' | 'symbol' | 'archetype'; value: string; pos: number };

function unsupported(construct: string, pos: number): never {
  throw validationError(`AQL: ${construct} is not supported (position ${pos})`, [{ path: 'q', message: `unsupported construct: ${construct}`, construct }]);
}

function syntax(message: string, pos: number): never {
  throw validationError(`AQL syntax error at position ${pos}: ${message}`, [{ path: 'q', message }]);
}

function tokenize(q: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const ch = q[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const rest = q.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^openEHR-EHR-[A-Z_]+\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.v\d+(\.\d+)*/.exec(rest))) {
      tokens.push({ type: 'archetype', value: m[0], pos: i });
    } else if (ch === "'" || ch === '"') {
      let j = i + 1;
      let value = '';
      while (j < q.length && q[j] !== ch) {
        if (q[j] === '\\' && j + 1 < q.length) j++;
        value += q[j++];
      }
      if (j >= q.length) syntax('unterminated string', i);
      tokens.push({ type: 'string', value, pos: i });
      i = j + 1;
      continue;
    } else if ((m = /^-?\d+(\.\d+)?/.exec(rest)) && !/^[A-Za-z_]/.test(rest.slice(m[0].length))) {
      tokens.push({ type: 'number', value: m[0], pos: i });
    } else if ((m = /^\$[A-Za-z_][A-Za-z0-9_]*/.exec(rest))) {
      tokens.push({ type: 'param', value: m[0].slice(1), pos: i });
    } else if ((m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(rest))) {
      tokens.push({ type: 'word', value: m[0], pos: i });
    } else if ((m = /^(<=|>=|!=|<>|[=<>/[\](),{}])/.exec(rest))) {
      tokens.push({ type: 'symbol', value: m[0] === '<>' ? '!=' : m[0], pos: i });
    } else {
      syntax(`unexpected character '${ch}'`, i);
    }
    i += m[0].length;
  }
  return tokens;
}

export function parseAql(q: string): AqlQuery {
  if (q.length > 10_000) throw validationError('AQL: the query is longer than 10000 characters');
  const tokens = tokenize(q);
  let index = 0;
  const peek = (offset = 0): Token | undefined => tokens[index + offset];
  const end = () => q.length;
  const isWord = (value: string, t = peek()) => t?.type === 'word' && t.value.toUpperCase() === value;
  const isSymbol = (value: string, t = peek()) => t?.type === 'symbol' && t.value === value;
  const next = () => tokens[index++];
  const expectWord = (value: string) => {
    if (!isWord(value)) syntax(`expected ${value}`, peek()?.pos ?? end());
    return next();
  };
  const expectSymbol = (value: string) => {
    if (!isSymbol(value)) syntax(`expected '${value}'`, peek()?.pos ?? end());
    return next();
  };
  const checkUnsupported = (t = peek()) => {
    if (t?.type !== 'word') return;
    const upper = t.value.toUpperCase();
    if (UNSUPPORTED_KEYWORDS.includes(upper) || UNSUPPORTED_CLASSES.includes(t.value)) unsupported(upper, t.pos);
    if (AGGREGATES.includes(upper) && isSymbol('(', tokens[tokens.indexOf(t) + 1])) unsupported(`function ${upper}()`, t.pos);
  };

  const variables = new Set<string>();
  const parsePath = (): Path => {
    const first = peek();
    checkUnsupported(first);
    if (first?.type !== 'word') syntax('expected a path', first?.pos ?? end());
    next();
    const start = first.pos;
    const path: Path = { variable: first.value, segments: [], text: '' };
    while (isSymbol('/')) {
      next();
      const segment = peek();
      if (segment?.type !== 'word') syntax('expected a path segment after /', segment?.pos ?? end());
      next();
      let predicate: string | undefined;
      if (isSymbol('[')) {
        next();
        const p = next();
        if (p?.type !== 'archetype') unsupported('a path predicate other than an archetype id', p?.pos ?? end());
        predicate = p.value;
        expectSymbol(']');
      }
      path.segments.push({ name: segment.value, predicate });
    }
    if (isSymbol('[')) unsupported('a predicate on the variable in a path', peek()!.pos);
    path.text = q.slice(start, peek()?.pos ?? end()).trim();
    return path;
  };

  const parseOperand = (): Operand => {
    const t = peek();
    if (!t) syntax('expected a value', end());
    if (t.type === 'string') return (next(), { kind: 'literal', value: t.value });
    if (t.type === 'number') return (next(), { kind: 'literal', value: Number(t.value) });
    if (t.type === 'param') return (next(), { kind: 'param', name: t.value });
    if (isWord('TRUE') || isWord('FALSE')) return (next(), { kind: 'literal', value: t.value.toUpperCase() === 'TRUE' });
    if (isWord('NULL')) unsupported('NULL comparisons', t.pos);
    return { kind: 'path', path: parsePath() };
  };

  // Parentheses and NOT recurse (here and in evaluation): bounded, so a deep condition is a 400, not a stack overflow.
  let nesting = 0;
  const nested = <T>(parse: () => T): T => {
    if (++nesting > MAX_JSON_DEPTH)
      throw validationError(`AQL: the WHERE condition nests deeper than ${MAX_JSON_DEPTH} levels`, [
        { path: 'q', message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    const result = parse();
    nesting--;
    return result;
  };
  const parsePrimary = (): Expr => {
    if (isSymbol('(')) {
      next();
      const expr = nested(parseOr);
      expectSymbol(')');
      return expr;
    }
    if (isWord('NOT')) {
      next();
      return { kind: 'not', expr: nested(parsePrimary) };
    }
    checkUnsupported();
    const left = parseOperand();
    checkUnsupported();
    const op = peek();
    if (op?.type !== 'symbol' || !['=', '!=', '<', '>', '<=', '>='].includes(op.value))
      syntax('expected a comparison operator (=, !=, <, >, <=, >=)', op?.pos ?? end());
    next();
    checkUnsupported();
    return { kind: 'compare', op: op.value as '=', left, right: parseOperand() };
  };
  const parseAnd = (): Expr => {
    let left = parsePrimary();
    while (isWord('AND')) {
      next();
      left = { kind: 'and', left, right: parsePrimary() };
    }
    return left;
  };
  function parseOr(): Expr {
    let left = parseAnd();
    while (isWord('OR')) {
      next();
      left = { kind: 'or', left, right: parseAnd() };
    }
    return left;
  }

  const parseInteger = (what: string) => {
    const t = next();
    if (t?.type !== 'number' || !/^\d{1,7}$/.test(t.value)) syntax(`${what} takes a whole number`, t?.pos ?? end());
    return Number(t.value);
  };

  // SELECT
  expectWord('SELECT');
  checkUnsupported();
  const select: AqlQuery['select'] = [];
  do {
    if (select.length > 0) next();
    checkUnsupported();
    const path = parsePath();
    let alias: string | undefined;
    if (isWord('AS')) {
      next();
      const a = next();
      if (a?.type !== 'word') syntax('expected an alias after AS', a?.pos ?? end());
      alias = a.value;
    }
    select.push({ path, alias });
  } while (isSymbol(','));

  // FROM
  expectWord('FROM');
  const query: AqlQuery = { select, contains: [], orderBy: [] };
  const parseClass = (): { rmClass: string; variable?: string; predicate?: Operand; pos: number } => {
    const t = next();
    if (t?.type !== 'word') syntax('expected an RM class (EHR, COMPOSITION, OBSERVATION, …)', t?.pos ?? end());
    let variable: string | undefined;
    if (peek()?.type === 'word' && !isWord('CONTAINS') && !isWord('WHERE') && !isWord('ORDER') && !isWord('LIMIT') && !isWord('AND') && !isWord('OR')) {
      variable = next().value;
      variables.add(variable);
    }
    let predicate: Operand | undefined;
    if (isSymbol('[')) {
      next();
      const p = peek();
      if (t.value === 'EHR') {
        const path = parsePath();
        if (path.text.replace(/\s/g, '') !== 'ehr_id/value') unsupported(`EHR predicate on ${path.text}`, p!.pos);
        expectSymbol('=');
        predicate = parseOperand();
      } else if (p?.type === 'archetype' || p?.type === 'param') {
        next();
        predicate = p.type === 'param' ? { kind: 'param', name: p.value } : { kind: 'literal', value: p.value };
      } else if (p?.type === 'word' && t.value === 'COMPOSITION') {
        next();
        predicate = { kind: 'literal', value: p.value };
      } else {
        unsupported(`the predicate of ${t.value}`, p?.pos ?? end());
      }
      expectSymbol(']');
    }
    return { rmClass: t.value, variable, predicate, pos: t.pos };
  };

  let cls = parseClass();
  if (cls.rmClass === 'EHR') {
    query.ehr = { variable: cls.variable, ehrId: cls.predicate };
    if (!isWord('CONTAINS')) syntax('EHR must CONTAIN a COMPOSITION', peek()?.pos ?? end());
    next();
    if (isSymbol('(')) unsupported('a containment expression with AND/OR', peek()!.pos);
    cls = parseClass();
  }
  if (cls.rmClass !== 'COMPOSITION') {
    if (ENTRY_CLASSES.includes(cls.rmClass)) unsupported(`FROM ${cls.rmClass} without COMPOSITION`, cls.pos);
    unsupported(`FROM ${cls.rmClass}`, cls.pos);
  }
  query.contains.push({ rmClass: cls.rmClass, variable: cls.variable, predicate: cls.predicate });
  while (isWord('CONTAINS')) {
    next();
    if (isSymbol('(')) unsupported('a containment expression with AND/OR', peek()!.pos);
    const inner = parseClass();
    if (!ENTRY_CLASSES.includes(inner.rmClass)) unsupported(`CONTAINS ${inner.rmClass}`, inner.pos);
    if (!inner.predicate) unsupported(`${inner.rmClass} without an archetype id predicate`, inner.pos);
    query.contains.push({ rmClass: inner.rmClass, variable: inner.variable, predicate: inner.predicate });
  }
  if (isWord('AND') || isWord('OR')) unsupported(`${peek()!.value.toUpperCase()} in the FROM clause`, peek()!.pos);

  if (isWord('WHERE')) {
    next();
    query.where = parseOr();
  }
  if (isWord('ORDER')) {
    next();
    expectWord('BY');
    do {
      if (query.orderBy.length > 0) next();
      const path = parsePath();
      let descending = false;
      if (isWord('DESC') || isWord('DESCENDING')) {
        next();
        descending = true;
      } else if (isWord('ASC') || isWord('ASCENDING')) next();
      query.orderBy.push({ path, descending });
    } while (isSymbol(','));
  }
  if (isWord('LIMIT')) {
    next();
    query.limit = parseInteger('LIMIT');
    if (isWord('OFFSET')) {
      next();
      query.offset = parseInteger('OFFSET');
    }
  }
  if (peek()) {
    checkUnsupported();
    syntax(`unexpected '${peek()!.value}'`, peek()!.pos);
  }

  // Every path starts at a declared variable.
  const declared = new Set([query.ehr?.variable, ...query.contains.map((c) => c.variable)].filter(Boolean) as string[]);
  const check = (path: Path) => {
    if (!declared.has(path.variable))
      throw validationError(`AQL: '${path.variable}' in ${path.text} is not a variable declared in FROM`, [
        { path: 'q', message: `unknown variable ${path.variable}` },
      ]);
  };
  select.forEach((s) => check(s.path));
  query.orderBy.forEach((o) => check(o.path));
  const walk = (e?: Expr) => {
    if (!e) return;
    if (e.kind === 'and' || e.kind === 'or') {
      walk(e.left);
      walk(e.right);
    } else if (e.kind === 'not') walk(e.expr);
    else for (const o of [e.left, e.right]) if (o.kind === 'path') check(o.path);
  };
  walk(query.where);
  return query;
}
