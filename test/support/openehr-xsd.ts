import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The openEHR ITS-XML schema files, vendored unmodified (test/fixtures/openehr-its-xml). */
export const PUBLISHED_XSD = join(__dirname, '..', 'fixtures', 'openehr-its-xml', 'components');

let compiled: string | undefined;

/**
 * The published RM schema (root element `composition`) as libxml2 can compile
 * it. One pattern facet of BaseTypes.xsd (archetype node ids) is written in the
 * Java/.NET regex dialect: groups `(?:…)`, which XML Schema does not have, and
 * `\w` meaning letters, digits and `_` (in XML Schema `_` is punctuation, so
 * `body_temperature` would fail). Translated to XML Schema's dialect it matches
 * what its authors meant; everything else is the vendored file as published.
 */
function compositionSchema(): string {
  if (compiled) return compiled;
  const dir = mkdtempSync(join(tmpdir(), 'rm-xsd-'));
  cpSync(PUBLISHED_XSD, dir, { recursive: true });
  const base = join(dir, 'BASE/latest/BaseTypes.xsd');
  const translate = (pattern: string) => pattern.replaceAll('(?:', '(').replaceAll('[\\w-]', '[a-zA-Z0-9_\\-]').replaceAll('\\w', '[a-zA-Z0-9_]');
  const xsd = readFileSync(base, 'utf8').replace(/value="(\(\(\?:[^"]*)"/, (_, pattern: string) => `value="${translate(pattern)}"`);
  if (xsd.includes('(?:')) throw new Error('BaseTypes.xsd changed: the archetype node id pattern was not translated');
  writeFileSync(base, xsd);
  return (compiled = join(dir, 'RM/Release-1.1.0/documents/Composition.xsd'));
}

/** xmllint's verdict on a composition document against the published schema: '' when valid, its complaints otherwise. */
export function compositionSchemaErrors(xml: string): string {
  try {
    execFileSync('xmllint', ['--noout', '--schema', compositionSchema(), '-'], { input: xml, stdio: ['pipe', 'pipe', 'pipe'] });
    return '';
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err);
  }
}
