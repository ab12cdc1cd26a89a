import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The gateway first, as in the server: the adapters' zod schemas are made before gateway/openapi is loaded.
import '../server';
import { OPENAPI_FILE } from '../../scripts/openapi-export';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { WEBHOOK_EVENT_TYPES } from '../../common/events/types';
import { MESSAGE_STATUSES } from '../../subgraphs/messaging/delivery/status';
import { MESSAGE_STATUSES as DOCUMENTED_STATUSES } from './messaging';
import { DEFAULT_SERVER_URL, openApiDocument, openApiJson } from './document';

describe('the OpenAPI document', () => {
  it('is checked in as generated (run npm run openapi:export after changing gateway/openapi or the adapters)', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(openApiJson());
  });

  // The validator is an ES module, which this CommonJS test runtime cannot load: its own CLI runs in a child Node.
  const validate = (document: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const cli = join(require.resolve('@seriousme/openapi-schema-validator/package.json'), '..', 'bin', 'validate-api-cli.js');
      // It exits non-zero for an invalid document; its verdict is the JSON it prints.
      return JSON.parse(spawnSync(process.execPath, [cli, file], { encoding: 'utf8' }).stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('is a valid OpenAPI 3.1 document by the specification schema', () => {
    expect(validate(openApiDocument())).toEqual({ valid: true });
    // The validator does judge: a response without its required description is refused.
    const broken = openApiDocument() as any;
    delete broken.paths['/healthz'].get.responses['200'].description;
    expect(validate(broken).valid).toBe(false);
  });

  it('names the message statuses of the lifecycle', () => {
    expect(DOCUMENTED_STATUSES).toEqual(MESSAGE_STATUSES);
  });

  it('catalogues every webhook event type with its own data schema', () => {
    const webhooks = (openApiDocument() as any).webhooks;
    expect(Object.keys(webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    for (const type of WEBHOOK_EVENT_TYPES) expect(webhooks[type].post.requestBody.content['application/json'].example.type).toBe(type);
  });

  it('describes every operation with an id, its errors in the error format, and the bearer scheme', () => {
    const document = openApiDocument('https://care.example.org') as any;
    expect(document.servers).toEqual([{ url: 'https://care.example.org' }]);
    expect(openApiDocument().servers).toEqual([{ url: DEFAULT_SERVER_URL }]);
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ids = new Set<string>();
    for (const [path, item] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        expect(`${method} ${path} ${operation.operationId}`).not.toMatch(/undefined$/);
        expect(ids.has(operation.operationId)).toBe(false);
        ids.add(operation.operationId);
        const open = Array.isArray(operation.security) && operation.security.length === 0;
        if (!open && (path.startsWith('/v1') || path.startsWith('/api/ehr'))) {
          expect([path, operation.responses['401']]).toEqual([path, { $ref: '#/components/responses/Error401' }]);
          expect(operation.responses['429']).toEqual({ $ref: '#/components/responses/Error429' });
        }
      }
    }
    expect(document.components.responses.Error429.headers).toHaveProperty('Retry-After');
  });

  it('types every limit and offset query parameter as an integer, so generated clients pass numbers', () => {
    const paging: string[] = [];
    for (const [path, item] of Object.entries<any>(openApiDocument().paths ?? {})) {
      for (const operation of Object.values<any>(item)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in !== 'query' || !['limit', 'offset'].includes(parameter.name)) continue;
          paging.push(`${path} ${parameter.name}`);
          expect([path, parameter.name, parameter.schema.type]).toEqual([path, parameter.name, 'integer']);
        }
      }
    }
    expect(paging).toContain('/v1/messages limit');
  });

  it('has examples that are valid by their own schemas', () => {
    const document = openApiDocument() as any;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const ID = 'https://caregraph.invalid/openapi.json';
    ajv.addSchema(document, ID);
    const escape = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
    const failures: string[] = [];
    let checked = 0;
    const visit = (node: any, path: string[]) => {
      if (!node || typeof node !== 'object') return;
      if ('schema' in node && ('example' in node || 'examples' in node)) {
        const validate = ajv.compile({ $ref: `${ID}#/${[...path, 'schema'].map(escape).join('/')}` });
        const examples =
          'example' in node ? { example: node.example } : Object.fromEntries(Object.entries<any>(node.examples).map(([name, e]) => [name, e.value]));
        for (const [name, example] of Object.entries(examples)) {
          checked++;
          if (!validate(example)) failures.push(`${path.join(' ')} ${name}: ${ajv.errorsText(validate.errors)}`);
        }
      }
      for (const [key, value] of Object.entries(node)) if (!['schema', 'example', 'examples'].includes(key)) visit(value, [...path, key]);
    };
    visit(document.paths, ['paths']);
    visit(document.webhooks, ['webhooks']);
    visit(document.components.responses, ['components', 'responses']);
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  });
});
