import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The software of unknown provenance (SOUP) CareGraph ships: every package `npm ci --omit=dev` installs,
 * read from package-lock.json, with what each direct dependency is for and how much rides on it
 * (compliance/soup-entries.json, kept by hand).
 */

type Risk = 'high' | 'medium' | 'low';
const RISKS: readonly Risk[] = ['high', 'medium', 'low'];

interface Entry {
  purpose: string;
  risk: Risk;
}

export interface SoupPackage {
  /** Where the lock file installs it. */
  path: string;
  name: string;
  version: string;
  license: string;
  /** Direct dependencies: the entry's purpose; others: the direct dependencies that bring it in. */
  direct: boolean;
  purpose: string;
  /** A direct dependency's own; another package's is the highest of the direct dependencies that bring it in. */
  risk: Risk;
  requiredBy: string[];
}

interface LockPackage {
  version?: string;
  license?: string;
  dev?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function readEntries(root: string): Record<string, Entry> {
  return JSON.parse(readFileSync(join(root, 'compliance', 'soup-entries.json'), 'utf8')) as Record<string, Entry>;
}

/** What is wrong with the hand-kept entries: a runtime dependency without one, one without a dependency, a bad field. */
export function entryProblems(root: string): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const entries = readEntries(root);
  const problems: string[] = [];
  for (const name of Object.keys(manifest.dependencies)) {
    const entry = entries[name];
    if (!entry) problems.push(`${name}: a runtime dependency without an entry in compliance/soup-entries.json (what it is for, its risk)`);
    else {
      if (!entry.purpose?.trim()) problems.push(`${name}: no purpose`);
      if (!RISKS.includes(entry.risk)) problems.push(`${name}: risk must be one of ${RISKS.join(', ')} (got ${JSON.stringify(entry.risk)})`);
    }
  }
  for (const name of Object.keys(entries)) {
    if (!(name in manifest.dependencies)) problems.push(`${name}: an entry for a package that is no runtime dependency`);
  }
  return problems;
}

/**
 * The runtime packages, from the lock file: the closure of the direct dependencies over the lock's
 * `dependencies` and `optionalDependencies`, each resolved the way Node resolves it (the nearest
 * `node_modules` up from the package that needs it).
 */
export function runtimePackages(root: string): SoupPackage[] {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockPackage> };
  const entries = readEntries(root);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const resolve = (from: string, name: string): string | undefined => {
    for (let base = from; ;) {
      const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
      if (lock.packages[candidate]) return candidate;
      if (!base) return undefined;
      const cut = base.lastIndexOf('/node_modules/');
      base = cut < 0 ? '' : base.slice(0, cut);
    }
  };
  const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  // path -> the direct dependencies that bring it in
  const reachedBy = new Map<string, Set<string>>();
  for (const direct of Object.keys(manifest.dependencies)) {
    const start = resolve('', direct);
    if (!start) throw new Error(`${direct} is in package.json but not in package-lock.json: run npm install`);
    const queue = [start];
    const seen = new Set<string>();
    while (queue.length > 0) {
      const path = queue.pop()!;
      if (seen.has(path)) continue;
      seen.add(path);
      reachedBy.set(path, (reachedBy.get(path) ?? new Set()).add(direct));
      const pkg = lock.packages[path];
      for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
        const next = resolve(path, dep);
        if (next) queue.push(next); // An optional dependency for another platform is not in the lock.
      }
    }
  }
  const rank = (risk: Risk) => RISKS.indexOf(risk);
  return [...reachedBy.entries()]
    .map(([path, by]) => {
      const name = nameOf(path);
      const pkg = lock.packages[path];
      const direct = path === `node_modules/${name}` && name in manifest.dependencies;
      const requiredBy = [...by].filter((d) => d !== name).sort();
      const risk = direct ? entries[name].risk : requiredBy.map((d) => entries[d].risk).sort((a, b) => rank(a) - rank(b))[0];
      return {
        path,
        name,
        version: pkg.version ?? '?',
        license: pkg.license ?? 'not stated',
        direct,
        purpose: direct ? entries[name].purpose : `used by ${requiredBy.join(', ')}`,
        risk,
        requiredBy,
      };
    })
    .sort((a, b) => Number(b.direct) - Number(a.direct) || a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
}
