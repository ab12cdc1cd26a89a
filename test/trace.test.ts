import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../common/paths';
import { collectTests, readRequirements, taggedTests, traceProblems } from '../scripts/support/trace';

const root = projectRoot();
const run = promisify(execFile);

describe('the traceability matrix', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'trace-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every id a test names is a requirement, listed once', () => {
    const tests = collectTests(root);
    expect(tests.length).toBeGreaterThan(100);
    expect(traceProblems(readRequirements(root), tests)).toEqual([]);
  });

  it('refuses a test naming an unknown id, a malformed id and a duplicate requirement', () => {
    const requirements = readRequirements(root);
    // Written so that this file's own source names no such test.
    const open = '(';
    const source = [`it${open}'[MSG-001, NOPE-999] sends', () => {});`, `test${open}\`[] nothing\`, () => {});`].join('\n');
    const tests = taggedTests('test/x.test.ts', source);
    expect(tests).toEqual([
      { file: 'test/x.test.ts', line: 1, ids: ['MSG-001', 'NOPE-999'], title: 'sends' },
      { file: 'test/x.test.ts', line: 2, ids: [''], title: 'nothing' },
    ]);
    expect(traceProblems([...requirements, { ...requirements[0] }, { id: 'msg-1', area: 'a', text: 't', docs: 'd' }], tests)).toEqual([
      'requirement id MSG-001 is listed twice',
      'requirement id msg-1 is not of the form AREA-NNN',
      'test/x.test.ts:1 names NOPE-999, which compliance/requirements.yaml does not list',
      'test/x.test.ts:2 names an empty id, which compliance/requirements.yaml does not list',
    ]);
  });

  it('renders requirement → tests → last result from a Jest report, "not run" without one, and lists requirements without a test', async () => {
    const tests = collectTests(root);
    const byId = (id: string) => tests.filter((t) => t.ids.includes(id));
    const [sends] = byId('MSG-001');
    const [optedOut] = byId('MSG-003');
    const interpolated = byId('WHK-010').find((t) => t.title.includes('${'))!;
    // A report made in another checkout, one test passed, one failed, an interpolated title passed.
    const title = (t: (typeof tests)[number]) => `[${t.ids.join(', ')}] ${t.title.replace(/\$\{[^}]*\}/g, '40')}`;
    const report = join(dir, 'results.json');
    writeFileSync(
      report,
      JSON.stringify({
        testResults: [
          {
            name: `/elsewhere/caregraph/${sends.file}`,
            assertionResults: [
              { title: title(sends), status: 'passed' },
              { title: title(optedOut), status: 'failed' },
            ],
          },
          { name: `/elsewhere/caregraph/${interpolated.file}`, assertionResults: [{ title: title(interpolated), status: 'passed' }] },
        ],
      }),
    );

    await run(process.execPath, [join(root, 'dist', 'scripts', 'trace.js'), '--results', report, '--out', join(dir, 'with')], { cwd: root });
    const matrix = JSON.parse(readFileSync(join(dir, 'with', 'traceability.json'), 'utf8')) as {
      reports: number;
      requirements: { id: string; result: string; tests: { file: string; title: string; result: string }[] }[];
      untested: string[];
    };
    const row = (id: string) => matrix.requirements.find((r) => r.id === id)!;
    expect(matrix.reports).toBe(1);
    expect(row('MSG-001')).toMatchObject({ result: 'passed', tests: [{ file: sends.file, title: sends.title, result: 'passed' }] });
    expect(row('MSG-003').result).toBe('failed');
    expect(row('WHK-010').tests.find((t) => t.title === interpolated.title)?.result).toBe('passed');
    // MSG-002 has this passed test among others the report did not run.
    expect(row('MSG-002').result).toBe('not run');
    expect(matrix.requirements.length).toBe(readRequirements(root).length);
    const untested = matrix.requirements.filter((r) => r.tests.length === 0).map((r) => r.id);
    expect(matrix.untested).toEqual(untested);
    expect(untested.every((id) => row(id).result === 'no test')).toBe(true);
    const markdown = readFileSync(join(dir, 'with', 'traceability.md'), 'utf8');
    expect(markdown).toContain(`| MSG-001 | Messaging |`);
    expect(markdown).toContain(`${sends.file}:${sends.line} ${sends.title} (passed)`);
    expect(markdown).toContain('## Requirements without a test');

    // Without a report (a clean clone) every tagged test is "not run".
    await run(process.execPath, [join(root, 'dist', 'scripts', 'trace.js'), '--out', join(dir, 'without')], { cwd: root });
    const clean = JSON.parse(readFileSync(join(dir, 'without', 'traceability.json'), 'utf8')) as typeof matrix;
    expect(clean.reports).toBe(0);
    expect(clean.requirements.every((r) => r.result === (r.tests.length > 0 ? 'not run' : 'no test'))).toBe(true);
    expect(readFileSync(join(dir, 'without', 'traceability.md'), 'utf8')).toContain('| MSG-001 |');
  });
});
