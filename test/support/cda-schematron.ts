import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import { clearCache, parseSchematron, validate, type SchematronFinding, type SchematronMap } from 'cda-schematron-validator';

/** HL7's C-CDA 2.1 Schematron and the value-set file its assertions read, vendored unmodified (test/fixtures/cda, README there). */
const DIR = join(__dirname, '..', 'fixtures', 'cda', 'schematron');
export const SCHEMATRON = readFileSync(join(DIR, 'Consolidated CDA Templates for Clinical Notes (US Realm) DSTU R2.1.sch'), 'utf8');

// The engine's own xmldom and xpath, loaded untyped: their typings pull the browser's DOM library into the whole program.
interface XmlNode {
  getAttribute(name: string): string | null;
  getElementsByTagNameNS(namespace: string, name: string): ArrayLike<XmlNode>;
  textContent: string | null;
}
type Evaluation = { node: XmlNode; namespaces: Record<string, string>; variables?: Record<string, unknown> };
interface XPathExpression {
  evaluate(options: Evaluation): unknown;
  evaluateBoolean(options: Evaluation): boolean;
  select(options: Evaluation): XmlNode[];
}
const load = createRequire(require.resolve('cda-schematron-validator'));
const { DOMParser } = load('@xmldom/xmldom') as { DOMParser: new () => { parseFromString(xml: string, type: string): XmlNode } };
const xpath = load('xpath') as { parse(expression: string): XPathExpression };
const parseXml = (xml: string) => new DOMParser().parseFromString(xml, 'text/xml');

const NAMESPACES: Record<string, string> = { sch: 'http://purl.oclc.org/dsdl/schematron' };
const schema = parseXml(SCHEMATRON);
for (const ns of xpath.parse('//sch:ns').select({ node: schema, namespaces: NAMESPACES })) NAMESPACES[ns.getAttribute('prefix')!] = ns.getAttribute('uri')!;
const resolveDocumentCalls = load('./lib/includeExternalDocument') as (test: string, resourceDir: string) => string;

/**
 * The errors phase with each assertion's `document('voc.xml')` lookups already replaced by the codes they
 * read, as the engine itself rewrites them (lib/includeExternalDocument): it would redo that, an XPath over
 * the 2 MB value-set file, for every assertion on every document. A lookup it cannot resolve is left for the
 * engine, which reports it as not evaluated.
 */
function withValueSetsResolved(map: SchematronMap): SchematronMap {
  const resolve = (test: string) => {
    try {
      return resolveDocumentCalls(test, DIR + sep);
    } catch {
      return test;
    }
  };
  const rules = Object.entries(map.ruleAssertionMap).map(([id, rule]) => [
    id,
    { ...rule, assertionsAndExtensions: rule.assertionsAndExtensions.map((a) => (a.type === 'assertion' ? { ...a, test: resolve(a.test!) } : a)) },
  ]);
  return { ...map, ruleAssertionMap: Object.fromEntries(rules) };
}
const errorsPhase = withValueSetsResolved(parseSchematron(schema, { includeWarnings: false }));

/**
 * The C-CDA 2.1 Schematron's errors phase run on a document by cda-schematron-validator: one line per failed
 * assertion, [] when the document conforms. That engine skips rules that declare variables (`sch:let`; the
 * schema has one, the "compatible R1.1 templateId" rule); those are evaluated here with the variables bound,
 * and anything else it could not evaluate is reported as a failure, so nothing is passed unchecked.
 */
export function cdaSchematronErrors(xml: string): string[] {
  // The engine caches each rule's context nodes across calls, whatever the document: start each one afresh.
  clearCache();
  const result = validate(xml, null, { includeWarnings: false, resourceDir: DIR + sep, parsedSchematronMap: errorsPhase });
  const failures = result.errors.map((e) => `${e.assertionId}: ${e.description.trim()}`);
  for (const skipped of result.ignored)
    if (!hasVariables(skipped)) failures.push(`not evaluated: ${skipped.patternId} ${skipped.errorMessage ?? skipped.test}`);
  const document = parseXml(xml);
  for (const pattern of new Set(result.ignored.filter(hasVariables).map((skipped) => skipped.patternId)))
    failures.push(...ruleWithVariables(document, pattern));
  return failures;
}

const rulesWithVariables = new Map<string, XmlNode[]>();
const rulesOf = (pattern: string): XmlNode[] => {
  let rules = rulesWithVariables.get(pattern);
  if (!rules) {
    rules = xpath.parse(`//sch:pattern[@id='${pattern}']/sch:rule[sch:let]`).select({ node: schema, namespaces: NAMESPACES });
    rulesWithVariables.set(pattern, rules);
  }
  return rules;
};

const hasVariables = (skipped: SchematronFinding) => rulesOf(skipped.patternId).length > 0;

/** Every assertion of the pattern's rules that declare variables, for every node in the rule's context. */
function ruleWithVariables(document: XmlNode, pattern: string): string[] {
  const failures: string[] = [];
  const children = (rule: XmlNode, name: string) => Array.from(rule.getElementsByTagNameNS(NAMESPACES.sch, name));
  for (const rule of rulesOf(pattern)) {
    for (const node of xpath.parse(rule.getAttribute('context')!).select({ node: document, namespaces: NAMESPACES })) {
      const variables: Record<string, unknown> = {};
      for (const variable of children(rule, 'let')) {
        variables[variable.getAttribute('name')!] = xpath.parse(variable.getAttribute('value')!).evaluate({ node, namespaces: NAMESPACES, variables });
      }
      for (const assert of children(rule, 'assert')) {
        if (!xpath.parse(assert.getAttribute('test')!).evaluateBoolean({ node, namespaces: NAMESPACES, variables })) {
          failures.push(`${pattern}: ${assert.textContent!.trim().split('\n')[0]} at ${node.getAttribute('root')}:${node.getAttribute('extension')}`);
        }
      }
    }
  }
  return failures;
}
