import type { Candidates } from '../../../compositions/clinical-index';
import { Prisma } from '../../../db/generated/client';
import { parseOpt } from '../../../clinical/opt/parse';
import { buildWebTemplate } from '../../../clinical/opt/web-template';
import { demoOpt } from '../../../clinical/templates';
import { compileToSql } from './compile-sql';
import { parseAql } from './parser';

const VITALS = [buildWebTemplate(parseOpt(demoOpt('vital_signs.v1'))).tree];
const BP = 'openEHR-EHR-OBSERVATION.blood_pressure.v2';
const FROM = `FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}]`;
const SYSTOLIC = 'o/data[at0001]/events[at0006]/data[at0003]/items[at0004]/value/magnitude';
const WINDOW = 'c/context/start_time/value > $since';
const EVENT_TIME = 'o/data[at0001]/events[at0006]/time/value';

/** The statement's parameters before and after the bindings are formed (the `b` CTE): the candidates' and the rest. */
function parametersBySection(q: string): { candidates: unknown[]; rest: unknown[] } {
  const sql = compileToSql(parseAql(q), { since: '2026-10-01T00:00:00Z' }, VITALS);
  if (!sql) throw new Error(`does not compile: ${q}`);
  const statement = sql.statement({ compositions: Prisma.sql`TRUE` });
  const split = statement.text.indexOf('b AS (');
  const numbers = (text: string) => [...text.matchAll(/\$(\d+)/g)].map((m) => statement.values[Number(m[1]) - 1]);
  return { candidates: numbers(statement.text.slice(0, split)), rest: numbers(statement.text.slice(split)) };
}

describe('AQL compiled to SQL: a composition-level condition selects the candidates', () => {
  it('moves the time window of a COUNT into the candidates, where PostgreSQL starts from it', () => {
    const { candidates, rest } = parametersBySection(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND ${WINDOW}`);
    expect(candidates).toContain('/context/start_time');
    expect(rest).not.toContain('/context/start_time');
    // The entry's value stays a condition on each binding: another entry of the same composition may not satisfy it.
    expect(candidates).not.toContain(140);
    expect(rest).toContain(140);
  });

  it('leaves the window on the rows when their order depends on the candidates', () => {
    const { candidates, rest } = parametersBySection(`SELECT c/uid/value ${FROM} WHERE ${WINDOW}`);
    expect(candidates).not.toContain('/context/start_time');
    expect(rest).toContain('/context/start_time');
  });

  it('moves only top-level AND terms', () => {
    const { candidates } = parametersBySection(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 OR ${WINDOW}`);
    expect(candidates).not.toContain('/context/start_time');
  });
});

describe('AQL compiled to SQL: an aggregate read from the rows of the values it tests', () => {
  const ROWS = { compositions: Prisma.sql`c."scope"`, indexRows: (alias: string) => Prisma.sql`${Prisma.raw(alias)}."scope"` };
  const statement = (q: string, candidates: Candidates = ROWS) =>
    compileToSql(parseAql(q), { since: '2026-10-01T00:00:00Z' }, VITALS)!.statement(candidates).text;

  it('forms the bindings of a population COUNT from the systolic rows in the window, with no composition or version row', () => {
    const text = statement(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND ${WINDOW}`);
    const bindings = text.slice(0, text.indexOf('m AS NOT MATERIALIZED ('));
    expect(bindings).toContain('d."scope"');
    expect(bindings).toContain('d."startTime" IS NOT NULL AND d."startTime" >');
    // Read by the window's range of the covering index, not by the value's (whose rows PostgreSQL underestimates).
    expect(bindings).toContain('(d."magnitude" + 0) >');
    // The event repeats: a binding with two high readings is counted once.
    expect(bindings).toContain('SELECT DISTINCT ON (d."compositionId" COLLATE "C", d."entryOrdinal")');
    expect(bindings).not.toMatch(/"ehr"\."Composition"|CompositionVersion/);
    // The driving term is not tested again.
    expect(text.slice(text.indexOf('m AS NOT MATERIALIZED ('), text.indexOf('o AS ('))).not.toContain('magnitude');
    // Patients and compositions are counted by their ids' bytes, not the database's locale.
    expect(text).toContain('count(DISTINCT b."patientId" COLLATE "C")::int AS "patients"');
  });

  it('forms them from the compositions where the rows cannot tell the scope, the order matters, or no indexed value drives', () => {
    const fromCompositions = (text: string) => text.includes('cand AS (') && !text.includes('FROM "ehr"."ClinicalIndexEntry" d');
    expect(fromCompositions(statement(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND ${WINDOW}`, { compositions: Prisma.sql`TRUE` }))).toBe(true);
    expect(fromCompositions(statement(`SELECT SUM(${SYSTOLIC}) ${FROM} WHERE ${SYSTOLIC} > 140`))).toBe(true);
    expect(fromCompositions(statement(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 OR ${WINDOW}`))).toBe(true);
    expect(fromCompositions(statement(`SELECT COUNT(*) ${FROM} WHERE NOT ${SYSTOLIC} > 140`))).toBe(true);
    expect(fromCompositions(statement(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND c/context/setting/defining_code/code_string = '238'`))).toBe(true);
    expect(fromCompositions(statement(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140`))).toBe(false);
    // An event's time: its rows do not carry the composition's start time, so not in a window.
    expect(fromCompositions(statement(`SELECT COUNT(*) ${FROM} WHERE ${EVENT_TIME} > $since AND ${WINDOW}`))).toBe(true);
  });

  it("forms them from the rows of an entry's code in the window", () => {
    const LAB = 'openEHR-EHR-OBSERVATION.laboratory_test_result.v1';
    const labs = [buildWebTemplate(parseOpt(demoOpt('lab_result.v1'))).tree];
    const q = `SELECT COUNT(*) FROM EHR e CONTAINS COMPOSITION c CONTAINS OBSERVATION l[${LAB}] WHERE l/data[at0001]/events[at0002]/data[at0003]/items[at0005]/value/defining_code/code_string = '4548-4' AND ${WINDOW}`;
    const text = compileToSql(parseAql(q), { since: '2026-10-01T00:00:00Z' }, labs)!.statement(ROWS).text;
    const bindings = text.slice(0, text.indexOf('m AS NOT MATERIALIZED ('));
    expect(bindings).toContain(`(d."code" || '') =`);
    expect(bindings).toContain('d."startTime" IS NOT NULL AND d."startTime" >');
    expect(bindings).not.toMatch(/"ehr"\."Composition"|CompositionVersion/);
  });

  it('forms them from the rows of a date and time (or a code) the index holds by path, without a window', () => {
    const text = statement(`SELECT COUNT(*) ${FROM} WHERE ${EVENT_TIME} > $since`);
    const bindings = text.slice(0, text.indexOf('m AS NOT MATERIALIZED ('));
    expect(bindings).toContain('d."dateTime" IS NOT NULL AND d."dateTime" >');
    expect(bindings).toContain('d."scope"');
    expect(bindings).not.toMatch(/"ehr"\."Composition"|CompositionVersion|magnitude/);
  });
});

describe('AQL compiled to SQL: a population COUNT summed from the kept counts', () => {
  const COUNTS: Candidates = {
    compositions: Prisma.sql`c."scope"`,
    indexRows: (alias) => Prisma.sql`${Prisma.raw(alias)}."scope"`,
    counts: { on: (alias) => Prisma.sql`${Prisma.raw(alias)}."countScope"`, excluded: (alias) => Prisma.sql`${Prisma.raw(alias)}."left out"` },
  };
  const compile = (q: string, params: Record<string, unknown> = {}, candidates: Candidates = COUNTS) =>
    compileToSql(parseAql(q), params, VITALS)!.statement(candidates);
  const kept = (q: string, params: Record<string, unknown> = {}, candidates: Candidates = COUNTS) =>
    compile(q, params, candidates).text.includes('"ehr"."ClinicalValueCount"');

  it('sums the counts at entries’ highest values for > and >=, at their lowest for < and <=', () => {
    expect(compile(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140`).text).toContain('k."entriesAtMax"');
    expect(compile(`SELECT COUNT(*) ${FROM} WHERE 140 > ${SYSTOLIC}`).text).toContain('k."entriesAtMin"');
    expect(compile(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} <= 90`).text).toContain('k."compositionsAtMin"');
  });

  it('reads whole days from the counts and the days a window cuts through from the index rows', () => {
    const { text, values } = compile(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND ${WINDOW} AND c/context/start_time/value <= $until`, {
      since: '2026-10-01T08:30:00Z',
      until: '2026-10-20T12:00:00Z',
    });
    // Whole days: 2 to 19 October; the rest of the 1st and of the 20th from the rows, at the days' edges.
    expect(values).toEqual(expect.arrayContaining(['2026-10-02', '2026-10-19', '2026-10-02 00:00:00.000', '2026-10-20 00:00:00.000']));
    expect(text).toMatch(/k\."day" >= \$\d+::date AND k\."day" <= \$\d+::date/);
    expect(text).toMatch(/d\."startTime" < \$\d+::timestamp\(3\).*UNION ALL/s);
    // What the caller's scope leaves out is subtracted, read from its own rows.
    expect(text).toContain('d."left out"');
    expect(text).toContain('(kept.entries + edge.entries - out.entries)::int');
  });

  it('starts at a midnight a >= window names', () => {
    const { values } = compile(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND c/context/start_time/value >= $since`, { since: '2026-10-01' });
    expect(values).toContain('2026-10-01');
    expect(values).not.toContain('2026-10-02');
  });

  it('counts exactly where a sum would not give the answer', () => {
    const p = { since: '2026-10-01T00:00:00Z', a: 'x', until: '2026-10-01T12:00:00Z' };
    expect(kept(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND ${WINDOW}`, p)).toBe(true);
    expect(kept(`SELECT COUNT(*) FROM EHR e CONTAINS COMPOSITION c[vital_signs.v1] CONTAINS OBSERVATION o[${BP}] WHERE ${SYSTOLIC} > 140`)).toBe(true);
    expect(kept(`SELECT COUNT(DISTINCT e/ehr_id/value) ${FROM} WHERE ${SYSTOLIC} > 140`)).toBe(false);
    expect(kept(`SELECT MAX(${SYSTOLIC}) ${FROM} WHERE ${SYSTOLIC} > 140`)).toBe(false);
    expect(kept(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} = 140`)).toBe(false);
    expect(kept(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} MATCHES {140, 150}`)).toBe(false);
    expect(kept(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND e/ehr_id/value = $a`, p)).toBe(false);
    expect(kept(`SELECT COUNT(*) FROM EHR e[ehr_id/value=$a] CONTAINS COMPOSITION c CONTAINS OBSERVATION o[${BP}] WHERE ${SYSTOLIC} > 140`, p)).toBe(false);
    expect(kept(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND o/data[at0001]/events[at0006]/data[at0003]/items[at0005]/value/magnitude > 90`)).toBe(
      false,
    );
    // No whole day inside the window.
    expect(kept(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND ${WINDOW} AND c/context/start_time/value < $until`, p)).toBe(false);
    expect(kept(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140 AND c/context/start_time/value != $since`, p)).toBe(false);
    // A scope the counts cannot apply (one patient's).
    expect(kept(`SELECT COUNT(*) ${FROM} WHERE ${SYSTOLIC} > 140`, {}, { compositions: COUNTS.compositions, indexRows: COUNTS.indexRows })).toBe(false);
  });
});

describe('AQL compiled to SQL: what stays in memory', () => {
  it('does not compile an OR in FROM, at any level: the evaluator pairs its operands', () => {
    const PULSE = 'openEHR-EHR-OBSERVATION.pulse.v2';
    const compiles = (q: string) => compileToSql(parseAql(q), {}, VITALS) !== undefined;
    expect(compiles(`SELECT c/uid/value ${FROM}`)).toBe(true);
    expect(compiles(`SELECT c/uid/value FROM EHR e CONTAINS COMPOSITION c CONTAINS (OBSERVATION o[${BP}] OR OBSERVATION p[${PULSE}])`)).toBe(false);
    expect(compiles(`SELECT c/uid/value FROM EHR e CONTAINS (COMPOSITION c CONTAINS OBSERVATION o[${BP}] OR COMPOSITION d)`)).toBe(false);
    expect(compiles(`SELECT c/uid/value FROM COMPOSITION c OR COMPOSITION d`)).toBe(false);
  });
});

describe('AQL compiled to SQL: paths through a repeated event', () => {
  const EVENT = 'o/data[at0001]/events[at0006]';
  const compiles = (q: string) => compileToSql(parseAql(q), {}, VITALS) !== undefined;

  it('fans out over the event when every such path reaches an element of it through its structure', () => {
    expect(compiles(`SELECT ${SYSTOLIC}, ${EVENT}/data[at0003]/items[at0005]/value/magnitude ${FROM}`)).toBe(true);
    expect(compiles(`SELECT ${EVENT}/state[at0007]/items[at0008]/value/defining_code/code_string ${FROM} ORDER BY ${SYSTOLIC}`)).toBe(true);
    expect(compiles(`SELECT MAX(${SYSTOLIC}), COUNT(*) ${FROM}`)).toBe(true);
  });

  it("keeps in memory what the event's instances alone cannot decide: its time, which every instance has", () => {
    expect(compiles(`SELECT ${SYSTOLIC} ${FROM} ORDER BY ${EVENT}/time/value`)).toBe(false);
  });

  it('pairs values by the positions of the event, and tests WHERE within the row’s event', () => {
    const sql = compileToSql(parseAql(`SELECT ${SYSTOLIC} ${FROM} WHERE ${SYSTOLIC} > 140`), {}, VITALS)!.statement({ compositions: Prisma.sql`TRUE` });
    // The event is the third step of its path: /content[…]/data[at0001]/events[at0006].
    expect(sql.text).toMatch(/"positions"\[1:\$\d+::int\] = b\."inst"/);
    expect(sql.text).toMatch(/b\."inst" IS NULL OR l\."positions"\[1:\$\d+::int\] = b\."inst"/);
    expect(sql.values).toContain(3);
  });
});
