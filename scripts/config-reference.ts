import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfigReference } from '../common/config-reference';
import { projectRoot } from '../common/paths';

/** `npm run docs:config`: writes the configuration reference's table into docs/configuration.md between its markers. */
const file = join(projectRoot(), 'docs', 'configuration.md');
const doc = readFileSync(file, 'utf8');
const section = /(<!-- config-reference:[^\n]*-->\n)[\s\S]*?(\n<!-- \/config-reference -->)/;
if (!section.test(doc)) throw new Error(`${file} has no config-reference markers`);
writeFileSync(
  file,
  doc.replace(section, (_, start: string, end: string) => `${start}${renderConfigReference()}${end}`),
);
console.log(`configuration reference written to ${file}`);
