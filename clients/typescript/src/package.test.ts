import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The package as an app installs it: built into node_modules/@caregraph/client of a consumer, whose imports of the
 * package and of its `webhooks` entry must type-check under every module resolution TypeScript users pick, and
 * resolve at run time. The consumer sits below the repository root, so the package's own dependencies resolve from
 * the root node_modules as they would from the app's.
 */
const root = join(__dirname, '..', '..', '..');
const pkg = join(__dirname, '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

describe('@caregraph/client as installed', () => {
  let app: string;

  beforeAll(() => {
    mkdirSync(join(root, 'test-artifacts'), { recursive: true });
    app = mkdtempSync(join(root, 'test-artifacts', 'client-package-'));
    const installed = join(app, 'node_modules', '@caregraph', 'client');
    mkdirSync(installed, { recursive: true });
    cpSync(join(pkg, 'package.json'), join(installed, 'package.json'));
    execFileSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.json'), '--outDir', join(installed, 'dist')], { stdio: 'pipe' });
    writeFileSync(
      join(app, 'consumer.ts'),
      [
        "import { createGraphQLClient, type CareGraphError } from '@caregraph/client';",
        "import { createWebhookVerifier, verifySignature } from '@caregraph/client/webhooks';",
        "const client = createGraphQLClient({ baseUrl: 'http://localhost:4000', token: 't' });",
        "const verify = createWebhookVerifier({ secret: 'a-secret-of-sixteen+' });",
        'const failure: CareGraphError | undefined = undefined;',
        'export const used = [client, verify, verifySignature, failure];',
        '',
      ].join('\n'),
    );
  }, 120_000);
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  const resolutions: [string, string][] = [
    ['node10', 'commonjs'],
    ['node16', 'node16'],
    ['nodenext', 'nodenext'],
    ['bundler', 'esnext'],
  ];
  it.each(resolutions)(
    'type-checks an app importing both entries under moduleResolution %s',
    (moduleResolution, module) => {
      // --ignoreConfig: the repository's own tsconfig.json above the app must not be read.
      const args = [tsc, '--ignoreConfig', '--noEmit', '--strict', '--skipLibCheck', '--ignoreDeprecations', '6.0', '--types', 'node'];
      args.push('--lib', 'ES2023,DOM', '--moduleResolution', moduleResolution, '--module', module, join(app, 'consumer.ts'));
      const diagnostics = spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8' });
      expect(diagnostics.stdout + diagnostics.stderr).toBe('');
      expect(diagnostics.status).toBe(0);
    },
    120_000,
  );

  it('resolves both entries at run time and ships only its build and README', () => {
    const script =
      "const c = require('@caregraph/client'); const w = require('@caregraph/client/webhooks'); console.log(typeof c.createGraphQLClient, typeof w.verifySignature);";
    expect(execFileSync(process.execPath, ['-e', script], { cwd: app, encoding: 'utf8' }).trim()).toBe('function function');
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect(manifest.files).toEqual(['dist', 'README.md']);
    expect(manifest.exports['./webhooks']).toEqual({ types: './dist/webhooks.d.ts', default: './dist/webhooks.js' });
  });
});
