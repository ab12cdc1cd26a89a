import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { generate } from '@graphql-codegen/cli';
import { execFileSync } from 'node:child_process';
import config from '../codegen';

/** The generated code is checked in; run `npm run codegen` in clients/typescript when this fails. */
describe('generated client code matches the checked-in schemas', () => {
  const root = join(__dirname, '..');

  it('src/gql/ is what graphql-codegen makes from schema/api.graphql and src/operations/', async () => {
    const cwd = process.cwd();
    process.chdir(root);
    try {
      const files: { filename: string; content: string }[] = await generate({ ...config, silent: true }, false);
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) expect(readFileSync(join(root, file.filename), 'utf8')).toBe(file.content);
    } finally {
      process.chdir(cwd);
    }
  });

  it('src/rest/openapi.d.ts is what openapi-typescript makes from schema/openapi.json', async () => {
    // Its CLI, as `npm run codegen` runs it (the library is ESM-only inside, which this jest setup does not load).
    const cli = join(root, '../../node_modules/openapi-typescript/bin/cli.js');
    const out = join(mkdtempSync(join(tmpdir(), 'caregraph-openapi-')), 'openapi.d.ts');
    execFileSync(process.execPath, [cli, '../../schema/openapi.json', '-o', out], { cwd: root, stdio: 'ignore' });
    expect(readFileSync(join(root, 'src/rest/openapi.d.ts'), 'utf8')).toBe(readFileSync(out, 'utf8'));
    rmSync(dirname(out), { recursive: true });
  });
});
