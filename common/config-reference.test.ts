import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_VARIABLES, loadConfig } from './config';
import { CONFIG_REFERENCE, renderConfigReference, variablesOf } from './config-reference';
import { projectRoot } from './paths';

describe('the configuration reference', () => {
  it('has one row for every variable the configuration reads, and none for a variable it does not read', () => {
    const documented = CONFIG_REFERENCE.flatMap(variablesOf);
    expect([...documented].sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  // A default written as one literal per variable must be what the variable means when it is unset, and
  // `unset` must be nothing at all.
  it('states the defaults the configuration applies', () => {
    const unset = loadConfig({}) as unknown as Record<string, unknown>;
    const checked: string[] = [];
    const wrong: Record<string, unknown>[] = [];
    for (const row of CONFIG_REFERENCE) {
      const literals = /^`[^`]*`(, `[^`]*`)*$/.test(row.default) ? [...row.default.matchAll(/`([^`]*)`/g)].map((m) => m[1]) : [];
      row.names.forEach((name, i) => {
        if (row.default === 'unset') {
          if (unset[name] !== undefined) wrong.push({ name, documented: 'unset', applied: unset[name] });
        } else if (literals.length === row.names.length) {
          const given = (loadConfig({ [name]: literals[i] }) as unknown as Record<string, unknown>)[name];
          if (JSON.stringify(given) !== JSON.stringify(unset[name])) wrong.push({ name, documented: literals[i], applied: unset[name] });
        } else return;
        checked.push(name);
      });
    }
    expect(wrong).toEqual([]);
    expect(checked.length).toBeGreaterThan(40);
  });

  it('is the table of docs/configuration.md (npm run docs:config writes it)', () => {
    const doc = readFileSync(join(projectRoot(), 'docs', 'configuration.md'), 'utf8');
    const table = /<!-- config-reference:[^\n]*-->\n([\s\S]*?)\n<!-- \/config-reference -->/.exec(doc)?.[1];
    expect(table).toBe(renderConfigReference());
  });
});
