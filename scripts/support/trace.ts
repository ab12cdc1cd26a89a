import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { parse } from 'yaml';

/**
 * The traceability matrix (docs/compliance.md): the requirements of compliance/requirements.yaml, the tests
 * that name their ids at the start of their titles (`it('[MSG-001] …')`), and each test's last result from
 * Jest JSON reports.
 */

export interface Requirement {
  id: string;
  area: string;
  text: string;
  docs: string;
}

export interface TaggedTest {
  /** Relative to the project root, with forward slashes. */
  file: string;
  line: number;
  ids: string[];
  /** The title without its id tag; `${…}` (or it.each's `%s`, `$name`) where the source interpolates. */
  title: string;
}

export type Result = 'passed' | 'failed' | 'skipped' | 'not run';

const ID = /^[A-Z]{2,5}-\d{3}$/;
/** it( or test( (with .only/.skip/.each(…) allowed), then a string literal that opens with a [ID, …] tag. */
const TAGGED = /\b(?:it|test)(?:\.\w+)*(?:\([^()]*\))?\(\s*(['"`])\[([^\]]*)\]\s*((?:\\.|(?!\1)[^\\])*)\1/g;
const TEST_ROOTS = ['test', 'common', 'gateway', 'subgraphs', 'clients', 'bench'];

export function readRequirements(root: string): Requirement[] {
  const parsed: unknown = parse(readFileSync(join(root, 'compliance', 'requirements.yaml'), 'utf8'));
  if (!Array.isArray(parsed)) throw new Error('compliance/requirements.yaml must be a list of requirements');
  return parsed.map((entry: Record<string, unknown>, index) => {
    for (const field of ['id', 'area', 'text', 'docs'])
      if (typeof entry?.[field] !== 'string' || !entry[field]) throw new Error(`requirement ${index + 1} has no ${field}`);
    return entry as unknown as Requirement;
  });
}

function testFiles(root: string): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'generated') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.test.ts')) found.push(path);
    }
  };
  for (const dir of TEST_ROOTS) if (existsSync(join(root, dir))) visit(join(root, dir));
  return found.sort();
}

/** The tagged tests of one source text. */
export function taggedTests(file: string, source: string): TaggedTest[] {
  const tests: TaggedTest[] = [];
  for (const match of source.matchAll(TAGGED)) {
    const [, , tag, title] = match;
    tests.push({
      file,
      line: source.slice(0, match.index).split('\n').length,
      ids: tag.split(',').map((id) => id.trim()),
      title: title.replace(/\\(.)/g, '$1'),
    });
  }
  return tests;
}

export function collectTests(root: string): TaggedTest[] {
  return testFiles(root).flatMap((path) => taggedTests(relative(root, path).split(sep).join('/'), readFileSync(path, 'utf8')));
}

/** What is wrong with the requirements and the tags: the command and its test fail on any of it. */
export function traceProblems(requirements: Requirement[], tests: TaggedTest[]): string[] {
  const problems: string[] = [];
  const known = new Set<string>();
  for (const r of requirements) {
    if (!ID.test(r.id)) problems.push(`requirement id ${r.id} is not of the form AREA-NNN`);
    if (known.has(r.id)) problems.push(`requirement id ${r.id} is listed twice`);
    known.add(r.id);
  }
  for (const t of tests)
    for (const id of t.ids)
      if (!known.has(id)) problems.push(`${t.file}:${t.line} names ${id || 'an empty id'}, which compliance/requirements.yaml does not list`);
  return problems;
}

interface JestReport {
  testResults: { name: string; assertionResults: { title: string; status: string }[] }[];
}

/** Per test file (relative path), the title and status of each test run of every report. */
export function readResults(root: string, reports: string[]): Map<string, { title: string; status: string }[]> {
  const byFile = new Map<string, { title: string; status: string }[]>();
  for (const report of reports) {
    const parsed = JSON.parse(readFileSync(report, 'utf8')) as JestReport;
    if (!Array.isArray(parsed.testResults)) throw new Error(`${report} is not a Jest JSON report`);
    for (const file of parsed.testResults) {
      // Reports made in another checkout: the part from the first test root on names the file.
      let name = isAbsolute(file.name) ? relative(root, file.name) : file.name;
      name = name.split(sep).join('/');
      if (name.startsWith('..')) {
        const at = TEST_ROOTS.map((dir) => name.indexOf(`/${dir}/`)).filter((i) => i >= 0);
        if (at.length > 0) name = name.slice(Math.min(...at) + 1);
      }
      byFile.set(name, [...(byFile.get(name) ?? []), ...file.assertionResults]);
    }
  }
  return byFile;
}

/** A test's result: failed if any run of its title failed (in any report), passed if one passed, else skipped or not run. */
export function resultOf(test: TaggedTest, results: Map<string, { title: string; status: string }[]>): Result {
  const tag = `[${test.ids.join(', ')}] `;
  const pattern = new RegExp(
    `^${(tag + test.title)
      .split(/\$\{[^}]*\}|%[sdifjop#]|\$[A-Za-z_][\w.]*/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  const runs = (results.get(test.file) ?? []).filter((r) => pattern.test(r.title)).map((r) => r.status);
  if (runs.includes('failed')) return 'failed';
  if (runs.includes('passed')) return 'passed';
  if (runs.length > 0) return 'skipped';
  return 'not run';
}

/** A requirement's result over its tests: failed over not run over skipped over passed; none without tests. */
export function combined(results: Result[]): Result | 'no test' {
  if (results.length === 0) return 'no test';
  for (const r of ['failed', 'not run', 'skipped'] as const) if (results.includes(r)) return r;
  return 'passed';
}
