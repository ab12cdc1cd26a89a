import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { TestPlatform } from '../harness';
import { envelope, VITALS } from '../ehr-fixtures';
import { openApiContract, type OpenApiContract } from './openapi-contract';

/**
 * The openEHR REST API's published validation OAS files (vendored unmodified
 * under test/fixtures/openehr-its-rest) as contracts for real answers of
 * /openehr/v1: `check(method, url, response)` throws naming what does not match.
 */
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'openehr-its-rest');
const PREFIX = '/openehr/v1';

export interface OpenEhrContracts {
  /** Checks an answer against the document whose paths hold its URL. */
  check(method: string, url: string, response: Parameters<OpenApiContract['check']>[2]): void;
  covered(): string[];
  /** What does not match in `value` against a schema of the EHR API document (`Composition`, `EhrStatus`, …). */
  schemaProblems(name: string, value: unknown): string[];
}

export function openEhrContracts(): OpenEhrContracts {
  const contracts = ['ehr', 'query', 'definition'].map((name) => {
    const document = parse(readFileSync(path.join(FIXTURES, `${name}-validation.openapi.yaml`), 'utf8'));
    return {
      paths: Object.keys(document.paths),
      contract: openApiContract(document, {
        pathPrefix: PREFIX,
        undocumentedErrorBodies: true,
        emptyBodies: true,
        formats: { url: (value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) },
      }),
    };
  });
  const owner = (url: string) => {
    const relative = new URL(url, 'http://localhost').pathname.slice(PREFIX.length);
    const root = relative.split('/')[1];
    return contracts.find((c) => c.paths.some((p) => p.split('/')[1] === root)) ?? contracts[0];
  };
  return {
    check: (method, url, response) => owner(url).contract.check(method, url, response),
    covered: () => contracts.flatMap((c) => [...c.contract.covered]).sort(),
    schemaProblems: (name, value) => contracts[0].contract.schemaProblems(`components/schemas/${name}`, value),
  };
}

type RequestOptions = Parameters<TestPlatform['request']>[2];

/**
 * Calls below /openehr/v1 of a test platform: `checked` answers must match the
 * openEHR OAS (it throws naming what does not), `raw` answers are not checked
 * (for those the documents do not name: 403, 415).
 */
export function openEhrCalls(platform: () => TestPlatform, contracts: OpenEhrContracts = openEhrContracts()) {
  const raw = (method: string, path: string, options: RequestOptions = {}) => platform().request(method, `/openehr/v1${path}`, options);
  const checked = async (method: string, path: string, options: RequestOptions = {}) => {
    const res = await raw(method, path, options);
    contracts.check(method, `/openehr/v1${path}`, res);
    return res;
  };
  /** A new EHR without a subject: its id. */
  const newEhr = async () => (await checked('POST', '/ehr', { headers: { prefer: 'return=representation' } })).body.ehr_id.value as string;
  /** A vital-signs composition (the demo body) in an EHR: its version uid. */
  const newComposition = async (ehrId: string) =>
    (
      await raw('POST', `/ehr/${ehrId}/composition`, {
        body: envelope(VITALS),
        headers: { 'content-type': 'application/json', prefer: 'return=identifier' },
      })
    ).body.uid as string;
  return { contracts, checked, raw, newEhr, newComposition };
}
