import { SEARCH_PARAMETERS, RESULT_PARAMETERS } from './search';

export const FHIR_RESOURCE_TYPES = ['Patient', 'Encounter', 'Observation', 'MedicationRequest', 'DocumentReference', 'Appointment'] as const;
export const WRITABLE_TYPES: readonly string[] = ['Patient', 'Observation', 'Appointment'];

/** The CapabilityStatement: exactly the interactions and parameters this server implements (the REST adapter adds its address, `implementation.url`). */
export function capabilityStatement(software: { version: string; date: string }) {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: software.date,
    publisher: 'CareGraph',
    kind: 'instance',
    software: { name: 'CareGraph', version: software.version },
    implementation: { description: 'CareGraph FHIR R4 facade over the openEHR clinical record' },
    fhirVersion: '4.0.1',
    format: ['application/fhir+json', 'json'],
    rest: [
      {
        mode: 'server',
        documentation: "Bearer token (JWT) in Authorization; tenant by X-Tenant-Id or the token's only tenant.",
        security: { description: 'Authorization: Bearer <JWT>; records of other tenants answer 404.' },
        resource: FHIR_RESOURCE_TYPES.map((type) => ({
          type,
          interaction: [
            { code: 'read' },
            { code: 'vread' },
            { code: 'history-instance' },
            { code: 'search-type' },
            ...(WRITABLE_TYPES.includes(type) ? [{ code: 'create' }, { code: 'update' }] : []),
          ],
          versioning: 'versioned',
          readHistory: true,
          updateCreate: false,
          conditionalCreate: false,
          conditionalRead: 'not-supported',
          conditionalUpdate: false,
          conditionalDelete: 'not-supported',
          searchParam: [
            ...Object.entries(SEARCH_PARAMETERS[type]).map(([name, p]) => ({ name, type: p.kind === 'id' ? 'token' : p.kind, documentation: p.documentation })),
          ],
          ...(type === 'Patient' ? { operation: [{ name: 'everything', definition: 'http://hl7.org/fhir/OperationDefinition/Patient-everything' }] } : {}),
        })),
        searchParam: RESULT_PARAMETERS.map((name) => ({
          name,
          type: 'number',
          documentation: name === '_count' ? 'page size, 1..100 (default 20)' : 'entries to skip (next links)',
        })),
      },
    ],
  };
}
