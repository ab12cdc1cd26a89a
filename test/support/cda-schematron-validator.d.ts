// The part of cda-schematron-validator (no types of its own) the Schematron check uses.
declare module 'cda-schematron-validator' {
  interface SchematronFinding {
    assertionId: string;
    patternId: string;
    description: string;
    context: string;
    test: string;
    errorMessage?: string;
  }
  interface SchematronResult {
    errors: SchematronFinding[];
    ignored: SchematronFinding[];
  }
  /** The engine's reading of a schema (rules, assertions, namespaces), reusable across documents. */
  interface SchematronMap {
    namespaceMap: Record<string, string>;
    patternRuleMap: Record<string, string[]>;
    ruleAssertionMap: Record<
      string,
      { abstract: boolean; context: string; assertionsAndExtensions: Array<{ type: 'assertion' | 'extension'; test?: string }> }
    >;
  }
  export function parseSchematron(schema: unknown, options: { includeWarnings: boolean }): SchematronMap;
  export function validate(
    xml: string,
    schematron: string | null,
    options: { includeWarnings: boolean; resourceDir: string; parsedSchematronMap: SchematronMap },
  ): SchematronResult;
  /** Drops the engine's caches, among them the context nodes it keeps from the last document. */
  export function clearCache(): void;
}
