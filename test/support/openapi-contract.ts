import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../gateway/openapi/document';
import type { TestResponse } from '../harness';

/**
 * Checks real answers against the OpenAPI document (gateway/openapi): the
 * operation for the method and path, a documented status, the required and
 * present response headers, the media type and the JSON body, with the
 * document's own JSON Schemas (2020-12, as OpenAPI 3.1 uses them) in Ajv.
 *
 *   const contract = openApiContract();
 *   contract.check('GET', '/v1/messages?limit=5', await t.request('GET', '/v1/messages?limit=5'));
 *
 * Any e2e test can call it; it throws naming what does not match.
 */
export interface OpenApiContract {
  check(method: string, url: string, response: TestResponse): void;
  /** `METHOD template status` of every response checked so far. */
  covered: Set<string>;
  /** What does not match in `value` against the document's schema at `path` (a JSON pointer without `#/`, e.g. `components/schemas/Composition`). */
  schemaProblems(path: string, value: unknown): string[];
}

type Json = Record<string, any>;
const ID = 'https://caregraph.invalid/openapi.json';
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export interface ContractOptions {
  /** Stripped from request paths before matching (a document whose paths are relative to a base, e.g. `/openehr/v1`). */
  pathPrefix?: string;
  /** Accept a JSON error body (4xx/5xx) where the document declares none (openEHR declares most errors without content). */
  undocumentedErrorBodies?: boolean;
  /** Accept an empty body where one is documented (openEHR's `Prefer: return=minimal`). */
  emptyBodies?: boolean;
  /** Extra string formats the document uses (e.g. openEHR's `url`, which must admit a test server's IP host). */
  formats?: Record<string, (value: string) => boolean>;
}

export function openApiContract(document: Json = openApiDocument(), options: ContractOptions = {}): OpenApiContract {
  // strict: false, because OpenAPI keywords (example, description of media types, …) sit beside the schemas.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const [name, test] of Object.entries(options.formats ?? {})) ajv.addFormat(name, test);
  ajv.addSchema(document, ID);
  const compiled = new Map<string, ValidateFunction>();
  const schemaAt = (path: string) => {
    let fn = compiled.get(path);
    if (!fn) {
      fn = ajv.compile({ $ref: `${ID}#/${path}` });
      compiled.set(path, fn);
    }
    return fn;
  };
  const resolve = (value: Json): [Json, string | undefined] => {
    if (typeof value?.$ref !== 'string') return [value, undefined];
    const parts = value.$ref.replace(/^#\//, '').split('/');
    return [parts.reduce((node: Json, part: string) => node[part.replace(/~1/g, '/').replace(/~0/g, '~')], document), value.$ref.replace(/^#\//, '')];
  };

  function schemaProblems(path: string, value: unknown): string[] {
    const validate = schemaAt(path);
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  // Literal paths first, so /v1/messages/batch is not taken for /v1/messages/{id}.
  const templates = Object.keys(document.paths)
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
    }))
    .sort((a, b) => a.params - b.params);
  const covered = new Set<string>();

  function check(method: string, url: string, response: TestResponse): void {
    const fullPath = new URL(url, 'http://localhost').pathname;
    const path = options.pathPrefix && fullPath.startsWith(options.pathPrefix) ? fullPath.slice(options.pathPrefix.length) : fullPath;
    const verb = method.toLowerCase();
    const match = templates.find((t) => t.regex.test(path) && document.paths[t.template][verb]);
    const where = `${method} ${path} → ${response.status}`;
    if (!match) throw new Error(`${where}: no operation in the OpenAPI document`);
    const operation = document.paths[match.template][verb];
    const status = String(response.status);
    const declared = operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default;
    if (!declared) throw new Error(`${where}: status not documented (documented: ${Object.keys(operation.responses).join(', ')})`);
    const [spec, refPath] = resolve(declared);
    const base = refPath ?? pointer('paths', match.template, verb, 'responses', operation.responses[status] ? status : `${status[0]}XX`);
    const problems: string[] = [];

    for (const [name, header] of Object.entries<Json>(spec.headers ?? {})) {
      const [definition] = resolve(header);
      const value = response.headers.get(name);
      if (value === null) {
        if (definition.required) problems.push(`header ${name} is required`);
        continue;
      }
      const type = definition.schema?.type;
      const parsed = type === 'integer' || type === 'number' ? Number(value) : value;
      const ok = ajv.validate(definition.schema ?? {}, parsed);
      if (!ok) problems.push(`header ${name}=${value}: ${ajv.errorsText(ajv.errors)}`);
    }

    const contentType = (response.headers.get('content-type') ?? '').split(';')[0].trim();
    const media = Object.keys(spec.content ?? {});
    if (media.length === 0) {
      if (response.text !== '' && !(options.undocumentedErrorBodies && response.status >= 400 && contentType === 'application/json'))
        problems.push(`no body documented, got ${contentType}: ${response.text.slice(0, 200)}`);
    } else if (options.emptyBodies && response.text === '') {
      // Documented body left out on request (Prefer: return=minimal).
    } else if (!media.includes(contentType)) {
      problems.push(`content type ${contentType || '(none)'} not documented (${media.join(', ')})`);
    } else if (contentType === 'application/json') {
      problems.push(...schemaProblems(`${base}/${pointer('content', 'application/json', 'schema')}`, response.body).map((p) => `body${p}`));
    }
    if (problems.length > 0) throw new Error(`${where} does not match the OpenAPI document:\n  ${problems.join('\n  ')}\nbody: ${response.text.slice(0, 500)}`);
    covered.add(`${method.toUpperCase()} ${match.template} ${status}`);
  }

  return { check, covered, schemaProblems };
}
