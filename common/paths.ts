import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/** The folder holding package.json, from sources (ts-jest) and from dist/ alike. */
export function projectRoot(): string {
  if (cached) return cached;
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${__dirname}`);
    dir = parent;
  }
  cached = dir;
  return dir;
}
