import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The layering of docs/architecture.md, checked on the import graph of the
 * source (tests aside): who may import whom, and what the standalone gateway
 * loads.
 */
const ROOT = resolve(__dirname, '..');
const SUBGRAPHS = readdirSync(join(ROOT, 'subgraphs')).filter((name) => statSync(join(ROOT, 'subgraphs', name)).isDirectory());

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' || entry.name === 'admin' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The project files a file imports (relative specifiers resolved; packages left out). */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => {
      const base = join(dirname(file), spec);
      const found = [`${base}.ts`, join(base, 'index.ts'), base].find(
        (candidate) => existsSync(join(ROOT, candidate)) && statSync(join(ROOT, candidate)).isFile(),
      );
      if (!found) throw new Error(`${file}: cannot resolve '${spec}'`);
      return relative(ROOT, join(ROOT, found));
    });
}

function closure(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    queue.push(...importsOf(file));
  }
  return seen;
}

const publicModules = SUBGRAPHS.map((name) => `subgraphs/${name}/public.ts`).filter((path) => existsSync(join(ROOT, path)));
const layerOf = (file: string) => file.split('/')[0];
const subgraphOf = (file: string) => (file.startsWith('subgraphs/') ? file.split('/')[1] : undefined);

describe('layers (docs/architecture.md)', () => {
  it('the gateway imports a subgraph only through its public.ts', () => {
    const offending = sourceFiles('gateway').flatMap((file) =>
      importsOf(file)
        .filter((target) => layerOf(target) === 'subgraphs' && !publicModules.includes(target))
        .map((target) => `${file} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it("a subgraph's public.ts loads no resolver, service, database or server code", () => {
    for (const entry of publicModules) {
      const loaded = [...closure([entry])].filter((file) => file !== entry);
      const heavy = loaded.filter((file) => !file.startsWith('common/') && !/^subgraphs\/[^/]+\/policy\/rules\.ts$/.test(file));
      const commonHeavy = loaded.filter((file) => /^common\/(db|graphql|http)\//.test(file));
      expect({ entry, heavy, commonHeavy }).toEqual({ entry, heavy: [], commonHeavy: [] });
    }
  });

  it('the standalone gateway (gateway/server.ts) loads no subgraph code beyond the public modules', () => {
    const allowed = closure(publicModules);
    const loaded = [...closure(['gateway/server.ts'])].filter((file) => layerOf(file) === 'subgraphs' && !allowed.has(file));
    expect(loaded).toEqual([]);
  });

  it('common imports neither gateway, subgraphs nor bin; subgraphs import neither gateway nor bin nor each other', () => {
    const offending = [...sourceFiles('common'), ...sourceFiles('subgraphs')].flatMap((file) =>
      importsOf(file)
        .filter((target) => {
          const layer = layerOf(target);
          if (layer === 'gateway' || layer === 'bin' || layer === 'scripts') return true;
          if (layer !== 'subgraphs') return false;
          return layerOf(file) === 'common' || subgraphOf(target) !== subgraphOf(file);
        })
        .map((target) => `${file} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('nothing outside test/ imports test code (it would be compiled into dist/)', () => {
    const offending = ['bin', 'common', 'gateway', 'subgraphs', 'scripts', 'bench'].flatMap(sourceFiles).flatMap((file) =>
      importsOf(file)
        .filter((target) => layerOf(target) === 'test')
        .map((target) => `${file} -> ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it("subgraphs name none of the gateway's REST paths (those are the adapters')", () => {
    const paths = ['/v1/', "'/v1'", '/api/ehr', '/fhir/R4', '/openehr/v1'];
    const offending = sourceFiles('subgraphs').flatMap((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      return paths.filter((path) => text.includes(path)).map((path) => `${file}: ${path}`);
    });
    expect(offending).toEqual([]);
  });
});
