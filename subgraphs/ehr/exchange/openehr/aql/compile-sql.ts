import { Prisma } from '../../../db/generated/client';
import type { WebNode } from '../../../clinical/opt/web-template';
import type { Candidates } from '../../../compositions/clinical-index';
import { isIsoTime, translateLike } from './compare';
import { parameterValue, resultColumn, type Parameters, type ResultColumn } from './evaluate';
import { STRUCTURAL_ATTRIBUTES } from './fan-out';
import { andTerms } from './narrow';
import type { AqlQuery, Condition, Containment, Operator, Path, Predicate, Value } from './parser';

/**
 * AQL the clinical index answers completely, compiled to one SQL statement
 * over it, so no composition is decrypted (docs/exchange.md "Evaluation and
 * its limits"). A query compiles only when its result is provably the one
 * the in-memory evaluator gives: FROM `[EHR e] CONTAINS COMPOSITION c [CONTAINS
 * <ENTRY> x[archetype]]`, where every template that may match holds that
 * archetype only as a top-level entry (so an instance is one entry of the
 * index: composition, archetype, ordinal), and every path is an indexed leaf
 * whose data type the templates fix, or an id of the record. Anything else
 * answers undefined and runs in memory.
 *
 * Paths of SELECT, ORDER BY and aggregates that pass one repeated object (an
 * event of a history, a repeated cluster or element) give a row per instance
 * of it, as the evaluator's fan-out does (aql/fan-out.ts): the index rows'
 * `positions` tell which instance a value sits in, so values of one instance
 * pair up, and a binding with no instance gives one row of NULLs. WHERE then
 * tests a path through that object within the row's instance.
 *
 * Rows come in the evaluator's order: bindings by EHR (in the order of its
 * newest candidate), composition (newest first), entry and instance
 * (document order), stably sorted by ORDER BY; missing values sort last
 * ascending, first descending, as PostgreSQL's NULLS default does.
 */

type Kind = 'number' | 'string' | 'boolean' | 'time';
/** Where a path's index rows are: below which RM path, the data types there, and which rows (for the binding `alias`). */
interface Scope {
  prefix: string;
  types: Map<string, string>;
  rows: (alias: string) => Prisma.Sql;
}

interface Compiled {
  kind: Kind;
  /** The index rows' scope and the data value's RM path (none for a field of the record: an id, the template). */
  scope?: Scope;
  full: string;
  /** The index row's data type and the column holding the value (none for a field of the record). */
  rmType?: string;
  column?: string;
  /** The objects on the path the templates let repeat in one binding (a repeated event or element), by RM path. */
  repeats: string[];
  /** The path's value, or NULL (when it repeats: its first, document order, or the row's instance's). */
  value: Prisma.Sql;
  /** Whether some value of the path satisfies `test` (never NULL). */
  some(test: (column: Prisma.Sql) => Prisma.Sql): Prisma.Sql;
}

export interface SqlQuery {
  columns: ResultColumn[];
  /**
   * Whether the answer depends on the order of the bindings (rows, SUM, AVG): then the candidates must be
   * exactly those the in-memory path reads (narrowed by leaf), as they order the EHRs.
   */
  ordered: boolean;
  /** The statement over the candidates (the condition that selects them). */
  statement: (candidates: Candidates) => Prisma.Sql;
}
/**
 * One result row of the statement: values v0…, and the compositions it was computed from ([uid, patientId]). A row
 * of aggregates also counts the patients and compositions they were computed from, and lists those only under
 * POPULATION_MIN_PATIENTS patients (a population statistic is logged by its query, not by composition). A COUNT
 * from the kept counts knows only a lower bound of its patients (`patientsExact` false), never under that bound.
 */
export type SqlRow = Record<string, unknown> & { src: Array<[string, string]>; patients?: number; compositions?: number; patientsExact?: boolean };

/**
 * An answer made only of aggregates over at least this many patients' data is a population statistic: the
 * access log records the query once instead of each composition (docs/security.md "Access log"). Under it,
 * an aggregate can tell about a few identifiable patients, and each composition is logged.
 */
export const POPULATION_MIN_PATIENTS = 10;

const ENTRY_CLASSES: Record<string, string[]> = {
  ENTRY: ['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION', 'ADMIN_ENTRY'],
  CARE_ENTRY: ['OBSERVATION', 'EVALUATION', 'INSTRUCTION', 'ACTION'],
  OBSERVATION: ['OBSERVATION'],
  EVALUATION: ['EVALUATION'],
  INSTRUCTION: ['INSTRUCTION'],
  ACTION: ['ACTION'],
  ADMIN_ENTRY: ['ADMIN_ENTRY'],
};
const ARCHETYPE = /^openEHR-EHR-([A-Z_]+)\.[a-zA-Z0-9_-]+\.v\d+$/;
const AT_CODE = /^at\d+(\.\d+)*$/;
/** Per data type, the attribute paths below it the index holds: column and kind. */
const LEAVES: Record<string, Record<string, [column: string, kind: Kind]>> = {
  DV_QUANTITY: { magnitude: ['magnitude', 'number'], units: ['unit', 'string'] },
  DV_COUNT: { magnitude: ['magnitude', 'number'] },
  DV_CODED_TEXT: { 'defining_code/code_string': ['code', 'string'], 'defining_code/terminology_id/value': ['terminology', 'string'] },
  DV_BOOLEAN: { value: ['boolean', 'boolean'] },
  DV_DATE_TIME: { value: ['dateTime', 'time'] },
};
/** The leaf columns an index of the clinical index holds by entry archetype, path and value (prisma/ehr schema). */
const VALUE_INDEXED = new Set(['magnitude', 'code', 'dateTime']);
/** The leaf columns whose rows carry the composition's start time, indexed by entry archetype, path and it. */
const START_TIME_INDEXED = new Set(['magnitude', 'code']);
const FLIPPED: Record<Operator, Operator> = { '=': '=', '!=': '!=', '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

/** A time window on the composition's start time: the operator, the instant, and the test of an index row (alias `d`). */
interface Window {
  op: Operator;
  at: Date;
  sql: Prisma.Sql;
}
/** An aggregate's bindings read from the index rows of the values one WHERE term tests (Compiler.driver). */
interface Driver {
  term: Condition;
  path: Compiled;
  test: (column: Prisma.Sql) => Prisma.Sql;
  windows: Window[];
  /** FROM and WHERE of the rows that pass the term in the windows (alias `d`), in `scope`, with `extra` conditions. */
  rows: (scope: Prisma.Sql, extra?: Prisma.Sql) => Prisma.Sql;
  /** The bindings those rows give, each once. */
  bindings: (scope: Prisma.Sql, extra?: Prisma.Sql) => Prisma.Sql;
}

const DAY_MS = 86_400_000;
/** Index rows a kept COUNT reads to find POPULATION_MIN_PATIENTS distinct patients before it trusts its sum. */
const SAMPLE_ROWS = 1000;

/**
 * The whole UTC days (of the composition's start time) inside every window: from `first` to `last`, either open
 * where no window bounds that side; undefined when a window is not a range (`=`, `!=`) or no whole day is inside.
 * A day counts as whole only when all of it certainly passes (`<=` a day's last instant leaves that day to the rows).
 */
function wholeDays(windows: Window[]): { first?: Date; last?: Date } | undefined {
  let first: Date | undefined;
  let last: Date | undefined;
  for (const { op, at } of windows) {
    const day = Math.floor(at.getTime() / DAY_MS) * DAY_MS;
    if (op === '>' || op === '>=') {
      const from = new Date(op === '>=' && day === at.getTime() ? day : day + DAY_MS);
      if (!first || from > first) first = from;
    } else if (op === '<' || op === '<=') {
      const to = new Date(day - DAY_MS);
      if (!last || to < last) last = to;
    } else return undefined;
  }
  return first && last && first > last ? undefined : { first, last };
}

class Unsupported extends Error {}
function no(): never {
  throw new Unsupported();
}

/** The compiled query, or undefined when it must run in memory. `templates`: the web trees of every template the query may match. */
export function compileToSql(query: AqlQuery, params: Parameters, templates: WebNode[]): SqlQuery | undefined {
  try {
    return new Compiler(query, params, templates).compile();
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

class Compiler {
  private ehr?: string;
  private composition?: string;
  /** The template id FROM names the composition by (`c[vital_signs.v1]`), where it does. */
  private template?: string;
  private entry?: { variable: string; archetypeId: string; rmClass: string; types: Map<string, string> };
  private readonly from: Prisma.Sql[] = [];
  /** The data types of the composition's own leaves (context, category), by path. */
  private readonly compositionTypes = new Map<string, string>();
  /** Whose index rows a path reads: the binding's (`b`), or while narrowing the candidates, the composition's (`c`). */
  private row: 'b' | 'c' = 'b';
  /**
   * The repeated object SELECT, ORDER BY or an aggregate fans out over: its RM path, its number of steps (how much
   * of an index row's positions names it), and the ELEMENTs below it those paths read, whose presence makes an
   * instance give a row.
   */
  private instance?: { path: string; depth: number; elements: Set<string>; scope: (alias: string) => Prisma.Sql };

  constructor(
    private readonly query: AqlQuery,
    private readonly params: Parameters,
    private readonly templates: WebNode[],
  ) {}

  compile(): SqlQuery {
    const { query } = this;
    this.bindFrom(query.from);
    const aggregated = query.select.some((s) => s.expr.kind === 'aggregate');
    if (aggregated && (query.select.some((s) => s.expr.kind !== 'aggregate') || query.orderBy.length > 0)) no();
    const aliases = new Map(query.select.map((s, i) => [s.alias, i]));
    if ([this.ehr, this.composition, this.entry?.variable].some((v) => v !== undefined && aliases.has(v))) no();
    const binding = Prisma.sql`b."erank", b."crank", b."ord", b."inst"`;
    const values = query.select.map((s, i) => {
      const e = s.expr;
      if (e.kind === 'aggregate') {
        if (!e.path) return Prisma.sql`count(*)::int AS ${col(i)}`;
        const p = this.single(e.path);
        if (e.fn === 'COUNT') return Prisma.sql`count(${e.distinct ? Prisma.sql`DISTINCT ` : Prisma.empty}${p.value})::int AS ${col(i)}`;
        if (p.kind !== 'number') no();
        // Floating-point sums depend on the order: the evaluator's.
        const order = e.fn === 'SUM' || e.fn === 'AVG' ? Prisma.sql` ORDER BY ${binding}` : Prisma.empty;
        return Prisma.sql`${Prisma.raw(e.fn.toLowerCase())}(${p.value}${order}) AS ${col(i)}`;
      }
      if (e.kind !== 'path') no();
      const p = this.single(e);
      if (p.kind === 'time') no(); // the index holds the instant, not the text a row shows
      return Prisma.sql`${p.value} AS ${col(i)}`;
    });
    const keys = query.orderBy.map((o) => {
      const index = o.path.parts.length === 0 ? aliases.get(o.path.variable) : undefined;
      const source = index !== undefined ? query.select[index].expr : o.path;
      const p = this.single(source as Path);
      const collated = p.kind === 'string' ? Prisma.sql`${p.value} COLLATE "C"` : p.value;
      return Prisma.sql`${collated} ${Prisma.raw(o.descending ? 'DESC' : 'ASC')}`;
    });
    const ordered = !aggregated || query.select.some((s) => s.expr.kind === 'aggregate' && (s.expr.fn === 'SUM' || s.expr.fn === 'AVG'));
    // WHERE's terms on the composition alone select the candidates instead, where the answer allows it.
    const terms = andTerms(query.where);
    const narrowing = ordered ? new Map<Condition, Prisma.Sql>() : this.compositionNarrowing(terms);
    const driver = aggregated && !ordered ? this.driver(terms, narrowing) : undefined;
    const tested = terms.filter((t) => !narrowing.has(t)).map((t) => [t, this.condition(t)] as const);
    // With driver bindings, the driving term holds for each of them already.
    const where = (bindings: 'composition' | 'driver') =>
      Prisma.join([Prisma.sql`TRUE`, ...tested.filter(([t]) => !(bindings === 'driver' && t === driver?.term)).map(([, sql]) => sql)], ' AND ');
    const from = this.from.length ? Prisma.join(this.from, ' AND ') : Prisma.sql`TRUE`;
    const selected = Prisma.join(values, ', ');
    const names = Prisma.join(
      values.map((_, i) => col(i)),
      ', ',
    );
    const source = Prisma.sql`jsonb_build_array(b."uid", b."patientId")`;
    let out: Prisma.Sql | undefined;
    if (!aggregated) {
      const sorted = Prisma.sql`SELECT ${selected}, ${source} AS s,
          row_number() OVER (ORDER BY ${keys.length ? Prisma.sql`${Prisma.join(keys, ', ')}, ` : Prisma.empty}${binding}) AS pos
        FROM b WHERE ${from} AND ${where('composition')}`;
      out = query.distinct
        ? Prisma.sql`SELECT ${names}, jsonb_agg(DISTINCT s) AS src, min(pos) AS pos FROM (${sorted}) r GROUP BY ${names}`
        : Prisma.sql`SELECT ${names}, jsonb_build_array(s) AS src, pos FROM (${sorted}) r`;
    }
    const entry = this.entry;
    const entryBindings = entry
      ? Prisma.sql`SELECT k.*, x."entryOrdinal" AS ord FROM k JOIN "ehr"."ClinicalIndexEntry" x ON x."tenantId" = k."tenantId" AND x."compositionId" = k."id"
          AND x."entryArchetypeId" = ${entry.archetypeId} AND x."path" = ${`/content[${entry.archetypeId}]`} AND x."rmType" = ${entry.rmClass}`
      : Prisma.sql`SELECT k.*, 0 AS ord FROM k`;
    const bindings = this.instances(entryBindings);
    const compositionBindings = (candidates: Candidates) => Prisma.sql`
        cand AS (
          SELECT c."tenantId", c."id", c."ehrId", c."patientId", c."templateId", v."uid",
                 row_number() OVER (ORDER BY c."createdAt" DESC, c."id" ASC) AS crank
          FROM "ehr"."Composition" c
          JOIN "ehr"."CompositionVersion" v ON v."tenantId" = c."tenantId" AND v."compositionId" = c."id" AND v."version" = c."latestVersion"
          WHERE ${Prisma.join([candidates.compositions, ...narrowing.values()], ' AND ')}),
        k AS (SELECT cand.*, min(cand.crank) OVER (PARTITION BY cand."ehrId") AS erank FROM cand),
        b AS (${bindings})`;
    const numbered = Prisma.sql`n AS (SELECT o.*, row_number() OVER (ORDER BY pos) AS n, count(*) OVER () AS total FROM o)`;
    if (out) {
      const rows = out;
      return {
        columns: query.select.map(resultColumn),
        ordered,
        statement: (candidates) => Prisma.sql`
        WITH ${compositionBindings(candidates)},
        o AS (${rows}),
        ${numbered}
        SELECT * FROM n WHERE ${this.window()} ORDER BY n`,
      };
    }
    // Aggregates: over the bindings WHERE keeps (`m`), with the patients and compositions they cover; the versions'
    // uids are read only for an answer under POPULATION_MIN_PATIENTS patients, whose compositions are logged. `m` is
    // not materialized: PostgreSQL would write every binding of a population to a work file for a second reading
    // that only an answer under that bound makes. Ids are counted in byte order ("C"): equality is the same under
    // any deterministic collation, and sorting them by the database's locale is the slow part of a population count.
    const aggregates = Prisma.sql`
        o AS (SELECT ${selected}, count(DISTINCT b."patientId" COLLATE "C")::int AS "patients", count(DISTINCT b."id" COLLATE "C")::int AS "compositions",
          TRUE AS "patientsExact", 1 AS pos FROM m b),
        ${numbered}`;
    const answer = (gate: Prisma.Sql) => Prisma.sql`
        SELECT n.*, CASE WHEN n."patients" < ${POPULATION_MIN_PATIENTS}::int THEN (
          SELECT coalesce(jsonb_agg(DISTINCT jsonb_build_array(v."uid", s."patientId")), '[]'::jsonb)
          FROM (SELECT DISTINCT m."tenantId", m."id", m."patientId" FROM m) s
          JOIN "ehr"."Composition" c ON c."tenantId" = s."tenantId" AND c."id" = s."id"
          JOIN "ehr"."CompositionVersion" v ON v."tenantId" = c."tenantId" AND v."compositionId" = c."id" AND v."version" = c."latestVersion"
        ) ELSE '[]'::jsonb END AS src
        FROM n WHERE ${this.window()} AND ${gate}`;
    // A template FROM names is the only condition of FROM the kept counts can apply (they are kept per template).
    const fromTemplateOnly = this.from.length === 0 || (this.from.length === 1 && this.template !== undefined);
    const kept = driver && this.keptCount(driver, tested.length === 1 && tested[0][0] === driver.term && fromTemplateOnly);
    return {
      columns: query.select.map(resultColumn),
      ordered,
      statement: (candidates) => {
        const rowsScope = candidates.indexRows;
        if (driver && rowsScope) {
          const exact = Prisma.sql`
        b AS (${driver.bindings(rowsScope('d'))}),
        m AS NOT MATERIALIZED (SELECT b.* FROM b WHERE ${from} AND ${where('driver')}),
        ${aggregates}`;
          if (kept && candidates.counts) return kept(rowsScope('d'), candidates.counts, exact, answer);
          return Prisma.sql`WITH ${exact} ${answer(Prisma.sql`TRUE`)} ORDER BY n`;
        }
        return Prisma.sql`
        WITH ${compositionBindings(candidates)},
        m AS NOT MATERIALIZED (SELECT b.* FROM b WHERE ${from} AND ${where('composition')}),
        ${aggregates} ${answer(Prisma.sql`TRUE`)} ORDER BY n`;
      },
    };
  }

  /**
   * Bindings of an aggregate read from the index rows of the values one WHERE term tests, where that makes the
   * answer an index-only scan (a population COUNT of `systolic > 140` in a time window reads the rows of the values
   * in the window and nothing else; docs/benchmarks.md "Clinical queries"). It applies when a top-level AND term
   * tests a value of the entry (each binding it keeps has a row that passes) and either every term selecting
   * candidates is a window on the composition's start time, which the rows of numeric values and of codes carry
   * (`startTime`), and the value is one of those, or no term selects candidates and an index holds the value by path
   * (a code, a quantity, a date and time: a population COUNT of one lab test's code reads that code's rows, not
   * every composition).
   * The scope of the candidates is tested on those rows too (CompositionService.queryCandidates). The term is then
   * not tested again; the other terms are, per binding.
   */
  private driver(terms: Condition[], narrowing: Map<Condition, Prisma.Sql>): Driver | undefined {
    const entry = this.entry;
    if (!entry || this.instance) return undefined;
    const windows: Window[] = [];
    for (const term of narrowing.keys()) {
      const window = this.startTimeWindow(term);
      if (!window) return undefined;
      windows.push(window);
    }
    for (const term of terms) {
      if (narrowing.has(term)) continue;
      const leaf = this.leafTest(term);
      if (!leaf || leaf.path.variable !== entry.variable) continue;
      const p = this.path(leaf.path);
      // In a window, only the rows of numeric values and codes carry the start time; without one, any leaf an index
      // serves by path and value.
      const served = p.column !== undefined && (windows.length ? START_TIME_INDEXED : VALUE_INDEXED).has(p.column);
      if (!served || p.scope?.prefix !== `/content[${entry.archetypeId}]`) continue;
      // A value the entry may hold several times (in each event) gives a binding once: one per entry of a composition,
      // whose rows all carry the same EHR, patient and template.
      const distinct = p.repeats.length > 0 ? Prisma.sql`DISTINCT ON (d."compositionId" COLLATE "C", d."entryOrdinal") ` : Prisma.empty;
      const timed = windows.length
        ? Prisma.sql` AND d."startTime" IS NOT NULL AND ${Prisma.join(
            windows.map((w) => w.sql),
            ' AND ',
          )}`
        : Prisma.empty;
      // In a window, the value is tested as an expression no index on values serves: PostgreSQL multiplies the
      // selectivities of a path and a value as if independent (estimating a hundred rows where there are 383,769
      // at 1M) and would read them all, each from the table; the window's range, which it estimates well, is read
      // from the covering index instead (for a lab code at 1M: 23 against 81 ms).
      const column = Prisma.raw(`d."${p.column}"`);
      const tested = !windows.length ? column : p.kind === 'number' ? Prisma.sql`(${column} + 0)` : Prisma.sql`(${column} || '')`;
      const rows = (scope: Prisma.Sql, extra = Prisma.empty) => Prisma.sql`FROM "ehr"."ClinicalIndexEntry" d
            WHERE ${scope} AND d."entryArchetypeId" = ${entry.archetypeId} AND d."path" = ${p.full} AND d."rmType" = ${p.rmType}
            AND ${column} IS NOT NULL AND ${leaf.test(tested)}${timed}${extra}`;
      return {
        term,
        path: p,
        test: leaf.test,
        windows,
        rows,
        bindings: (scope, extra) => Prisma.sql`
          SELECT ${distinct}d."tenantId", d."compositionId" AS "id", d."ehrId", d."patientId", d."templateId", d."entryOrdinal" AS "ord", NULL::int[] AS "inst"
          ${rows(scope, extra)}`,
      };
    }
    return undefined;
  }

  /**
   * A population COUNT(*) from the kept counts of values (ClinicalValueCount: per entry path, day and value, kept by
   * the database as index rows change), where summing them gives the answer: every SELECT term is `COUNT(*)`, WHERE
   * is the driver's comparison of a numeric value (`>`, `>=`, `<`, `<=`) and time windows on the composition's start
   * time, and nothing else (`alone`). The sum reads a row per day and value in the window instead of a row per value
   * counted; the days the window cuts through are counted from the index rows, and the values of the patients and
   * EHRs the caller's scope leaves out are subtracted. An entry passes `> x` exactly when its highest value does, so
   * `>`/`>=` sum the counts at entries' highest values, `<`/`<=` at their lowest. A composition without a start time
   * (no context) is counted on the day '-infinity', which only a query without a window sums.
   *
   * The distinct patients are not summable: a sample of the first matching rows must show POPULATION_MIN_PATIENTS
   * of them, and then the answer is logged as a population statistic with that lower bound; otherwise the exact
   * statement (`exact`) answers, counting them, as without kept counts (decided inside the one statement).
   */
  private keptCount(driver: Driver, alone: boolean) {
    const { query } = this;
    const term = driver.term;
    if (!alone || driver.path.column !== 'magnitude' || term.kind !== 'compare') return undefined;
    if (!query.select.every((s) => s.expr.kind === 'aggregate' && s.expr.fn === 'COUNT' && !s.expr.path)) return undefined;
    const op = term.left.kind === 'path' ? term.op : FLIPPED[term.op];
    const at = op === '>' || op === '>=' ? 'AtMax' : op === '<' || op === '<=' ? 'AtMin' : undefined;
    if (!at) return undefined;
    const days = wholeDays(driver.windows);
    if (!days) return undefined;
    const { first, last } = days;
    const date = (d: Date) => Prisma.sql`${d.toISOString().slice(0, 10)}::date`;
    const instant = (d: Date) => Prisma.sql`${d.toISOString().slice(0, 23).replace('T', ' ')}::timestamp(3)`;
    const afterLast = last && new Date(last.getTime() + DAY_MS);
    const inDays = Prisma.join(
      [
        ...(first ? [Prisma.sql`d."startTime" >= ${instant(first)}`] : []),
        ...(afterLast ? [Prisma.sql`d."startTime" < ${instant(afterLast)}`] : []),
        Prisma.sql`TRUE`,
      ],
      ' AND ',
    );
    const entry = this.entry!;
    const p = driver.path;
    const counted = (kind: 'entries' | 'compositions') => Prisma.raw(`k."${kind}${at}"`);
    const values = query.select.map((_, i) => Prisma.sql`(kept.entries + edge.entries - out.entries)::int AS ${col(i)}`);
    const tally = (bindings: Prisma.Sql) => Prisma.sql`SELECT count(*) AS entries, count(DISTINCT x."id" COLLATE "C") AS compositions FROM (${bindings}) x`;
    const template = this.template;
    const pinned = (alias: string) => (template === undefined ? Prisma.sql`TRUE` : Prisma.sql`${Prisma.raw(alias)}."templateId" = ${template}`);
    return (scope: Prisma.Sql, counts: NonNullable<Candidates['counts']>, exact: Prisma.Sql, answer: (gate: Prisma.Sql) => Prisma.Sql) => {
      const rowsScope = Prisma.sql`${scope} AND ${pinned('d')}`;
      const edges = [
        ...(first ? [driver.bindings(rowsScope, Prisma.sql` AND d."startTime" < ${instant(first)}`)] : []),
        ...(afterLast ? [driver.bindings(rowsScope, Prisma.sql` AND d."startTime" >= ${instant(afterLast)}`)] : []),
      ];
      const leftOut = counts.excluded
        ? tally(driver.bindings(Prisma.sql`${counts.on('d')} AND ${pinned('d')} AND ${counts.excluded('d')}`, Prisma.sql` AND ${inDays}`))
        : Prisma.sql`SELECT 0 AS entries, 0 AS compositions`;
      return Prisma.sql`
        WITH sample AS (
          SELECT count(DISTINCT s."patientId" COLLATE "C")::int AS n FROM (SELECT d."patientId" ${driver.rows(rowsScope)} LIMIT ${SAMPLE_ROWS}::int) s),
        kept AS (
          SELECT coalesce(sum(${counted('entries')}), 0) AS entries, coalesce(sum(${counted('compositions')}), 0) AS compositions
          FROM "ehr"."ClinicalValueCount" k
          WHERE ${counts.on('k')} AND ${pinned('k')} AND k."entryArchetypeId" = ${entry.archetypeId} AND k."path" = ${p.full} AND k."rmType" = ${p.rmType}
            AND ${driver.test(Prisma.sql`k."magnitude"`)}${first ? Prisma.sql` AND k."day" >= ${date(first)}` : Prisma.empty}${
              last ? Prisma.sql` AND k."day" <= ${date(last)} AND k."day" > '-infinity'::date` : Prisma.empty
            }),
        edge AS (${edges.length ? tally(Prisma.join(edges, ' UNION ALL ')) : Prisma.sql`SELECT 0 AS entries, 0 AS compositions`}),
        out AS (${leftOut}),
        ko AS (SELECT ${Prisma.join(values, ', ')}, sample.n AS "patients", (kept.compositions + edge.compositions - out.compositions)::int AS "compositions",
          FALSE AS "patientsExact", 1 AS pos FROM sample, kept, edge, out),
        kn AS (SELECT ko.*, row_number() OVER (ORDER BY pos) AS n, count(*) OVER () AS total FROM ko),
        ${exact}
        ${answer(Prisma.sql`(SELECT n FROM sample) < ${POPULATION_MIN_PATIENTS}::int`)}
        UNION ALL
        SELECT kn.*, '[]'::jsonb AS src FROM kn WHERE ${this.window()} AND (SELECT n FROM sample) >= ${POPULATION_MIN_PATIENTS}::int
        ORDER BY n`;
    };
  }

  /** `c/context/start_time/value <op> <time>` as a test of an index row's `startTime` (alias `d`), else undefined. */
  private startTimeWindow(term: Condition): Window | undefined {
    if (term.kind !== 'compare') return undefined;
    const flipped = term.left.kind !== 'path';
    const [path, other, op] = flipped ? [term.right, term.left, FLIPPED[term.op]] : [term.left, term.right, term.op];
    if (path.kind !== 'path' || path.variable !== this.composition || (other.kind === 'literal' && other.value === null)) return undefined;
    this.row = 'c';
    try {
      const p = this.path(path);
      if (p.full !== '/context/start_time' || p.column !== 'dateTime') return undefined;
      return { op, at: this.instant(other), sql: Prisma.sql`d."startTime" ${Prisma.raw(op === '!=' ? '<>' : op)} ${this.literal(other, 'time')}` };
    } finally {
      this.row = 'b';
    }
  }

  /**
   * The top-level AND terms of WHERE that read only the composition's own leaves (its context's start time, say),
   * as conditions on the candidates. Each holds or fails for a composition as a whole, so testing it before the
   * candidates are numbered keeps the same rows, and PostgreSQL starts from it: a time window is often far more
   * selective than an entry's value, whose selectivity it misestimates (docs/benchmarks.md "Clinical queries").
   * Only for answers that do not depend on the bindings' order: fewer candidates rank the EHRs differently.
   */
  private compositionNarrowing(terms: Condition[]): Map<Condition, Prisma.Sql> {
    const narrowing = new Map<Condition, Prisma.Sql>();
    for (const term of terms) {
      this.row = 'c';
      try {
        narrowing.set(term, this.condition(term));
      } catch (err) {
        if (!(err instanceof Unsupported)) throw err;
      } finally {
        this.row = 'b';
      }
    }
    return narrowing;
  }

  /** The bindings, each once per instance of the repeated object the query fans out over (`inst`: NULL where it has none). */
  private instances(bindings: Prisma.Sql): Prisma.Sql {
    const instance = this.instance;
    if (!instance) return Prisma.sql`SELECT r.*, NULL::int[] AS inst FROM (${bindings}) r`;
    // An instance gives a row where it holds one of the ELEMENTs read (a value or a null flavour: a row below it).
    const holds = Prisma.join(
      [...instance.elements].map((element) => Prisma.sql`starts_with(l."path", ${`${element}/`})`),
      ' OR ',
    );
    return Prisma.sql`SELECT r.*, i."inst" FROM (${bindings}) r LEFT JOIN LATERAL (
        SELECT DISTINCT l."positions"[1:${instance.depth}::int] AS inst FROM "ehr"."ClinicalIndexEntry" l
        WHERE l."tenantId" = r."tenantId" AND l."compositionId" = r."id" AND ${instance.scope('r')} AND (${holds})) i ON TRUE`;
  }

  /** TOP, LIMIT and OFFSET on the numbered rows. */
  private window(): Prisma.Sql {
    const { top, limit, offset } = this.query;
    if (top) return top.direction === 'BACKWARD' ? Prisma.sql`n > total - ${top.count}::int` : Prisma.sql`n <= ${top.count}::int`;
    const from = offset ?? 0;
    return limit === undefined ? Prisma.sql`n > ${from}::int` : Prisma.sql`n > ${from}::int AND n <= ${from + limit}::int`;
  }

  // ---- FROM ----------------------------------------------------------------

  private bindFrom(c: Containment): void {
    if (c.kind !== 'class' || c.contains?.not) no();
    const node = c;
    if (node.rmClass === 'EHR') {
      if (!node.contains) no();
      this.ehr = node.variable ?? '\u0000ehr';
      if (node.predicate) {
        const p = node.predicate;
        if (
          p.kind !== 'compare' ||
          p.op !== '=' ||
          p.path.length !== 2 ||
          p.path[0].name !== 'ehr_id' ||
          p.path[1].name !== 'value' ||
          p.path.some((s) => s.predicate)
        )
          no();
        this.from.push(Prisma.sql`b."ehrId" = ${this.literal(p.value, 'string')}`);
      }
      return this.bindComposition(node.contains.expr);
    }
    this.bindComposition(node);
  }

  private bindComposition(c: Containment): void {
    if (c.kind !== 'class' || c.rmClass !== 'COMPOSITION' || c.contains?.not) no();
    const node = c;
    this.composition = node.variable ?? '\u0000composition';
    if (node.predicate) {
      const id = this.nodeId(node.predicate);
      if (!ARCHETYPE.test(id)) this.template = id;
      this.from.push(
        Prisma.sql`(b."templateId" = ${id} OR EXISTS (SELECT 1 FROM "ehr"."ClinicalIndexEntry" r WHERE r."tenantId" = b."tenantId" AND r."compositionId" = b."id" AND r."seq" = 0 AND r."archetypeId" = ${id}))`,
      );
    }
    const visitOwn = (n: WebNode) => {
      if (n.aqlPath.startsWith('/content')) return;
      if (n.rmType.startsWith('DV_')) addType(this.compositionTypes, n);
      n.children?.forEach(visitOwn);
    };
    this.templates.forEach(visitOwn);
    if (!node.contains) return;
    const inner = node.contains.expr;
    if (inner.kind !== 'class' || inner.contains || !inner.predicate || !ENTRY_CLASSES[inner.rmClass]) no();
    const entry = inner;
    const archetypeId = this.nodeId(entry.predicate!);
    const rmClass = ARCHETYPE.exec(archetypeId)?.[1];
    if (!rmClass || !ENTRY_CLASSES[entry.rmClass].includes(rmClass)) no();
    // Every instance of the archetype a candidate can hold is a top-level entry; the data types of its leaves.
    const types = new Map<string, string>();
    const root = `/content[${archetypeId}]`;
    const visit = (n: WebNode) => {
      if (n.nodeId === archetypeId && (n.aqlPath !== root || n.rmType !== rmClass)) no();
      if (n.aqlPath.startsWith(`${root}/`) && n.rmType.startsWith('DV_')) addType(types, n);
      n.children?.forEach(visit);
    };
    this.templates.forEach(visit);
    this.entry = { variable: entry.variable ?? '\u0000entry', archetypeId, rmClass, types };
  }

  private nodeId(p: Predicate): string {
    if (p.kind !== 'node' || p.name) no();
    const id = p.id;
    const value = typeof id === 'string' ? id : parameterValue(id, this.params);
    return typeof value === 'string' && !value.includes('::') ? value : no();
  }

  // ---- paths ---------------------------------------------------------------

  /**
   * A path of SELECT, ORDER BY or an aggregate. One the templates let reach several values gives a row per value
   * (docs/exchange.md "AQL"): compiled where every such path passes the same one repeated object of the entry and
   * reaches from it, through structural attributes only, an ELEMENT's value. Then an instance gives a row exactly
   * where it holds one of those ELEMENTs, as the fan-out's joins of the archetyped structure decide.
   */
  private single(p: Path): Compiled {
    const compiled = this.path(p);
    if (compiled.repeats.length === 0) return compiled;
    const [repeated] = compiled.repeats;
    if (compiled.repeats.length > 1 || !compiled.scope || compiled.scope.prefix === '' || (this.instance && this.instance.path !== repeated)) no();
    const below = compiled.full.slice(repeated.length).split('/').slice(1);
    const element = compiled.full.slice(0, -'/value'.length);
    if (
      !compiled.full.startsWith(`${repeated}/`) ||
      below[below.length - 1] !== 'value' ||
      below.slice(0, -1).some((step) => !STRUCTURAL_ATTRIBUTES.has(step.replace(/\[.*$/, '')))
    )
      no();
    this.instance ??= { path: repeated, depth: stepsOf(repeated), elements: new Set(), scope: compiled.scope.rows };
    this.instance.elements.add(element);
    return this.path(p);
  }

  private path(p: Path): Compiled {
    if (p.kind !== 'path' || p.predicate) no();
    const names = p.parts.map((s) => s.name).join('/');
    const plain = !p.parts.some((s) => s.predicate);
    const field = (column: string): Compiled => {
      if (this.row !== 'b') no();
      const value = Prisma.raw(`b."${column}"`);
      return { kind: 'string', repeats: [], full: '', value, some: (test) => Prisma.sql`(${test(value)})` };
    };
    if (p.variable === this.ehr && plain && names === 'ehr_id/value') return field('ehrId');
    if (p.variable === this.composition && plain && names === 'uid/value') return field('uid');
    if (p.variable === this.composition && plain && names === 'archetype_details/template_id/value') return field('templateId');
    const entry = this.entry;
    let scope: Scope;
    if (entry && p.variable === entry.variable && this.row === 'b')
      scope = {
        prefix: `/content[${entry.archetypeId}]`,
        types: entry.types,
        rows: (alias) => Prisma.sql`l."entryArchetypeId" = ${entry.archetypeId} AND l."entryOrdinal" = ${Prisma.raw(alias)}."ord"`,
      };
    else if (p.variable === this.composition) scope = { prefix: '', types: this.compositionTypes, rows: () => Prisma.sql`l."entryArchetypeId" IS NULL` };
    else return no();
    // The data value's path, as the templates spell it: node ids exactly where the RM objects carry them.
    for (let split = p.parts.length - 1; split >= 1; split--) {
      const steps = p.parts.slice(0, split);
      if (
        steps.some(
          (s) => s.predicate && (s.predicate.kind !== 'node' || typeof s.predicate.id !== 'string' || s.predicate.name || !AT_CODE.test(s.predicate.id)),
        )
      )
        continue;
      const rel = steps.map((s) => `/${s.name}${s.predicate ? `[${(s.predicate as { id: string }).id}]` : ''}`).join('');
      const full = `${scope.prefix}${rel}`;
      const rmType = scope.types.get(full);
      const attribute = p.parts
        .slice(split)
        .map((s) => s.name)
        .join('/');
      const leaf = rmType && LEAVES[rmType]?.[attribute];
      if (!leaf || p.parts.slice(split).some((s) => s.predicate)) continue;
      const [column, kind] = leaf;
      const row = Prisma.raw(this.row);
      // Within the fanned-out object: the row's instance's values (every instance's, in a row where there is none).
      const instance = this.instance;
      const within = instance && full.startsWith(`${instance.path}/`) ? instance : undefined;
      if (within && this.row !== 'b') no();
      const slice = within ? Prisma.sql`l."positions"[1:${within.depth}::int]` : undefined;
      const rows = (
        extra: Prisma.Sql,
        inRow: (slice: Prisma.Sql) => Prisma.Sql,
      ) => Prisma.sql`FROM "ehr"."ClinicalIndexEntry" l WHERE l."tenantId" = ${row}."tenantId" AND l."compositionId" = ${row}."id"
        AND ${scope.rows(this.row)} AND l."path" = ${full} AND l."rmType" = ${rmType}
        AND l.${Prisma.raw(`"${column}"`)} IS NOT NULL ${slice ? inRow(slice) : Prisma.empty} ${extra}`;
      const c = Prisma.raw(`l."${column}"`);
      return {
        kind,
        repeats: this.repeating(scope.prefix, full),
        scope,
        full,
        rmType,
        column,
        value: Prisma.sql`(SELECT ${c} ${rows(Prisma.empty, (at) => Prisma.sql`AND ${at} = b."inst"`)} ORDER BY l."seq" LIMIT 1)`,
        some: (test) => Prisma.sql`EXISTS (SELECT 1 ${rows(Prisma.sql`AND ${test(c)}`, (at) => Prisma.sql`AND (b."inst" IS NULL OR ${at} = b."inst")`)})`,
      };
    }
    return no();
  }

  /**
   * The objects on the way from `scope` down to `path` (the data value) that a template lets occur more than once,
   * by RM path: a folded ELEMENT (a data value node of the web template) repeats as the ELEMENT, one step up.
   */
  private repeating(scope: string, path: string): string[] {
    const found = new Set<string>();
    const on = (n: WebNode) => n.aqlPath.length > scope.length && (path === n.aqlPath || path.startsWith(`${n.aqlPath}/`));
    const visit = (n: WebNode) => {
      if (on(n) && n.max !== 1) found.add(n.rmType.startsWith('DV_') && n.aqlPath.endsWith('/value') ? n.aqlPath.slice(0, -'/value'.length) : n.aqlPath);
      n.children?.forEach(visit);
    };
    this.templates.forEach(visit);
    return [...found];
  }

  /** A literal or parameter as a statement parameter of the path's kind (a value of another type does not compile). */
  private literal(v: Value, kind: Kind): Prisma.Sql {
    if (v.kind !== 'literal' && v.kind !== 'param') no();
    const value = v.kind === 'literal' ? v.value : parameterValue(v, this.params);
    if (kind === 'number' && typeof value === 'number' && Number.isFinite(value)) return Prisma.sql`${value}::float8`;
    if (kind === 'boolean' && typeof value === 'boolean') return Prisma.sql`${value}::boolean`;
    // A string that reads as a date compares as one in memory: strings compile only when they do not.
    if (kind === 'string' && typeof value === 'string' && !isIsoTime(value)) return Prisma.sql`${value}::text`;
    if (kind === 'time') return Prisma.sql`${this.instant(v).toISOString().slice(0, 23).replace('T', ' ')}::timestamp(3)`;
    return no();
  }

  /** A literal or parameter that reads as a date or date and time, as the instant it names. */
  private instant(v: Value): Date {
    const value = v.kind === 'literal' ? v.value : v.kind === 'param' ? parameterValue(v, this.params) : undefined;
    const at = typeof value === 'string' && isIsoTime(value) ? Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value) : NaN;
    return Number.isNaN(at) ? no() : new Date(at);
  }

  // ---- WHERE ---------------------------------------------------------------

  private condition(c: Condition): Prisma.Sql {
    switch (c.kind) {
      case 'and':
      case 'or':
        return Prisma.sql`(${this.condition(c.left)} ${Prisma.raw(c.kind.toUpperCase())} ${this.condition(c.right)})`;
      case 'not':
        return Prisma.sql`NOT ${this.condition(c.expr)}`;
      case 'matches': {
        const p = this.path(c.path);
        if (p.kind !== 'string' && p.kind !== 'number') no();
        if (c.values.every((v) => v.kind === 'literal' && v.value === null)) return Prisma.sql`FALSE`;
        break;
      }
      case 'compare': {
        const [path, other, op] = c.left.kind !== 'path' ? [c.right, c.left, FLIPPED[c.op]] : [c.left, c.right, c.op];
        if (path.kind !== 'path') no();
        if (other.kind === 'literal' && other.value === null) {
          const p = this.path(path);
          if (op === '=') return Prisma.sql`NOT ${p.some(() => Prisma.sql`TRUE`)}`;
          return op === '!=' ? p.some(() => Prisma.sql`TRUE`) : Prisma.sql`FALSE`;
        }
      }
    }
    const leaf = this.leafTest(c) ?? no();
    return this.path(leaf.path).some(leaf.test);
  }

  /** A term that some value of one path must pass (EXISTS, LIKE, MATCHES, a comparison with a value): the path and the test. */
  private leafTest(c: Condition): { path: Path; test: (column: Prisma.Sql) => Prisma.Sql } | undefined {
    switch (c.kind) {
      case 'exists':
        return { path: c.path, test: () => Prisma.sql`TRUE` };
      case 'like': {
        const p = this.path(c.path);
        const pattern = c.pattern.kind === 'literal' ? c.pattern.value : c.pattern.kind === 'param' ? parameterValue(c.pattern, this.params) : undefined;
        if (p.kind !== 'string' || typeof pattern !== 'string') no();
        return { path: c.path, test: (column) => Prisma.sql`${column} LIKE ${likePattern(pattern)} ESCAPE '\\'` };
      }
      case 'matches': {
        const p = this.path(c.path);
        if (p.kind !== 'string' && p.kind !== 'number') no();
        const options = c.values.filter((v) => !(v.kind === 'literal' && v.value === null)).map((v) => this.literal(v, p.kind));
        return options.length ? { path: c.path, test: (column) => Prisma.sql`${column} IN (${Prisma.join(options, ', ')})` } : undefined;
      }
      case 'compare': {
        const [path, other, op] = c.left.kind !== 'path' ? [c.right, c.left, FLIPPED[c.op]] : [c.left, c.right, c.op];
        if (path.kind !== 'path' || (other.kind === 'literal' && other.value === null)) return undefined;
        const p = this.path(path);
        if ((p.kind === 'string' || p.kind === 'boolean') && op !== '=' && op !== '!=') no();
        const value = this.literal(other, p.kind);
        return { path, test: (column) => Prisma.sql`${column} ${Prisma.raw(op === '!=' ? '<>' : op)} ${value}` };
      }
      default:
        return undefined;
    }
  }
}

/** A path's data type; a path with a choice of types (in one template or across them) gets none, so it is not compiled. */
function addType(types: Map<string, string>, n: WebNode): void {
  const known = types.get(n.aqlPath);
  types.set(n.aqlPath, known === undefined || known === n.rmType ? n.rmType : '');
}

const col = (i: number) => Prisma.raw(`"v${i}"`);

/** How many steps an RM path has (`/content[…]/data[at0001]/events[at0006]`: 3); its node ids hold no `/`. */
const stepsOf = (path: string) => path.split('/').length - 1;

/** AQL LIKE as SQL LIKE with `\` as escape. */
const likePattern = (pattern: string) =>
  translateLike(pattern, { anyRun: '%', oneChar: '_', literal: (ch) => (ch === '%' || ch === '_' || ch === '\\' ? `\\${ch}` : ch) });
