import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../common/paths';
import { killIfRunning, startServer, type ServerProcess } from '../scripts/support/server-process';
import { processDatabase, type ProcessDatabase } from './support/process-database';

const run = promisify(execFile);
const root = projectRoot();

/** The README's shell blocks, in order. */
function readmeBlocks(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
}

/**
 * What each example of the README answers when pasted against `npm start`, found by what the block does.
 * A block no entry matches fails the test: a new example comes with what it should show.
 */
const EXAMPLES: { name: string; block: RegExp; shows: RegExp[] }[] = [
  { name: 'GraphQL query', block: /\/graphql .*patient\(id/s, shows: [/"data":\{"patient":\{"id":"p-1001"/] },
  { name: 'GraphQL subscription', block: /graphql-ws/, shows: [/"type":"MESSAGE_DELIVERED"/] },
  { name: 'REST send', block: /\/v1\/messages/, shows: [/"patientId":"p-1001"/, /"status":"(queued|sending|sent|delivered)"/] },
  { name: 'clinical REST', block: /\/api\/ehr\/compositions/, shows: [/"id":"p-1001"/, /"templateId":"vital_signs\.v1"/] },
  { name: 'FHIR search', block: /\/fhir\/R4\/Observation/, shows: [/"resourceType":"Bundle"/, /"resourceType":"Observation"/] },
  { name: 'openEHR AQL', block: /\/openehr\/v1\/query\/aql/, shows: [/"rows":\[\[/] },
  { name: 'MHD and CDA', block: /DocumentReference/, shows: [/"resourceType":"Bundle"/, /ClinicalDocument/] },
  { name: 'MCP', block: /\/mcp/, shows: [/"granted":true/, /"serverInfo"/] },
];

/** The two blocks of the quick start, which the whole CI run is the test of. */
const QUICK_START = [/^npm install && npm start/, /^npm test/];

/**
 * The README's examples, each run by bash as written against a real server started the way `npm start`
 * starts it. The one change: the server listens on a free port, so `localhost:4000` is replaced by it.
 */
describe('the README examples', () => {
  let dataDir: string;
  let database: ProcessDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'caregraph-readme-'));
    database = await processDatabase(dataDir);
    server = await startServer({ DATA_DIR: dataDir, ...database.env }, { readyTimeoutMs: 240_000 });
  }, 300_000);
  afterAll(async () => {
    killIfRunning(server);
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const blocks = readmeBlocks().filter((block) => !QUICK_START.some((start) => start.test(block)));

  it('has an expectation for every example and an example for every expectation', () => {
    expect(blocks.map((block) => EXAMPLES.filter((example) => example.block.test(block)).map((example) => example.name))).toEqual(
      EXAMPLES.map((example) => [example.name]),
    );
  });

  it.each(EXAMPLES)(
    '$name runs as pasted',
    async ({ block, shows }) => {
      const script = blocks.find((candidate) => block.test(candidate));
      expect(script).toBeDefined();
      const port = new URL(server.base).port;
      const { stdout } = await run('bash', ['-c', script!.replaceAll('localhost:4000', `127.0.0.1:${port}`)], {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, ...database.env },
        timeout: 60_000,
      });
      for (const shown of shows) expect(stdout).toMatch(shown);
      // Neither GraphQL's errors nor the REST error body.
      expect(stdout).not.toMatch(/"errors":|"error":\{/);
    },
    90_000,
  );
});
