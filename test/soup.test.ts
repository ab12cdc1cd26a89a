import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../common/paths';
import { entryProblems, runtimePackages } from '../scripts/support/soup';

const root = projectRoot();

describe('the SOUP list', () => {
  it('has an entry, with a purpose and a risk, for every runtime dependency and for nothing else', () => {
    expect(entryProblems(root)).toEqual([]);
  });

  it('lists what a production install brings and nothing only the development tools need', () => {
    const packages = runtimePackages(root);
    const names = new Set(packages.map((p) => p.name));
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: object; devDependencies: object };
    for (const direct of Object.keys(manifest.dependencies)) expect(packages.find((p) => p.name === direct && p.direct)).toBeDefined();
    // Transitive runtime packages come in, with the direct dependencies that need them and their risk.
    expect(packages.find((p) => p.name === 'pg-protocol')).toMatchObject({ direct: false, requiredBy: expect.arrayContaining(['pg']), risk: 'high' });
    // A development tool and what only it needs stay out.
    for (const tool of ['jest', 'typescript', 'prisma', 'eslint']) expect(names.has(tool)).toBe(false);
    // The same packages npm itself marks as not for development only in the lock file.
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
    const runtime = Object.entries(lock.packages).filter(([path, p]) => path && !p.dev && !p.devOptional);
    expect(packages.map((p) => p.path).sort()).toEqual(runtime.map(([path]) => path).sort());
    // Every package says its licence as the lock file records it.
    expect(packages.filter((p) => p.license === 'not stated').map((p) => p.name)).toEqual([]);
  });
});
