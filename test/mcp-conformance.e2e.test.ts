import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startTestPlatform, backendName, type TestPlatform } from './harness';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance) against the
 * real /mcp. Its scenarios connect without credentials, so a local proxy adds
 * a bearer token, as an MCP client configured with one would. The scenarios
 * that apply to this server: the others test the suite's own reference tools
 * (test_simple_text, test://…, elicitation, sampling, progress), logging and
 * completion (not offered), SSE resumption (stateless JSON answers), or DNS
 * rebinding of unauthenticated localhost servers (this one needs a token).
 */
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list'];
const CLI = require.resolve('@modelcontextprotocol/conformance/dist/index.js');
const NODE20 = join(__dirname, 'support', 'mcp-conformance', 'node20.mjs');

describe(`MCP conformance suite against /mcp (${backendName})`, () => {
  let t: TestPlatform;
  let proxy: Server;
  let proxyUrl: string;
  const output = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));

  beforeAll(async () => {
    t = await startTestPlatform();
    const token = await t.token({ roles: ['clinician'], clientId: 'mcp-conformance' });
    const target = new URL(t.url);
    proxy = createServer((req, res) => {
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host, authorization: `Bearer ${token}` },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await t?.stop();
    rmSync(output, { recursive: true, force: true });
  });

  it.each(APPLICABLE)('passes %s', async (scenario) => {
    const dir = join(output, scenario);
    const run = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--import', NODE20, CLI, 'server', '--url', proxyUrl, '--scenario', scenario, '-o', dir],
        { timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      ),
    );
    const files = readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('checks.json'));
    expect(files.length).toBeGreaterThan(0);
    const checks = files.flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Array<{ id: string; status: string; errorMessage?: string }>);
    expect(checks.filter((c) => c.status === 'FAILURE')).toEqual([]);
    expect(checks.some((c) => c.status === 'SUCCESS')).toBe(true);
    expect({ code: run.code, out: run.out }).toMatchObject({ code: 0 });
  });
});
