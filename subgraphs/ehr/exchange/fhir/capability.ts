import { INCLUDE_PARAMETERS, SEARCH_PARAMETERS } from './search';

export const FHIR_RESOURCE_TYPES = ['Patient', 'Encounter', 'Observation', 'MedicationRequest', 'DocumentReference', 'Appointment'] as const;
export const WRITABLE_TYPES: readonly string[] = ['Patient', 'Observation', 'Appointment'];

/** Result parameters every search takes (CapabilityStatement.rest.searchParam). */
const RESULT_PARAMETER_DOCS = [
  { name: '_count', type: 'number', documentation: 'page size, 1..100 (default 20); 0 only with _summary=count' },
  { name: '_offset', type: 'number', documentation: 'entries to skip (next links)' },
  { name: '_sort', type: 'special', documentation: 'comma-separated sort keys, - for descending (per type: _id, _lastUpdated, date; Patient: _id, name, birthdate)' },
  { name: '_summary', type: 'token', documentation: 'true (summary elements), count (total only), false' },
  { name: '_elements', type: 'special', documentation: 'top-level elements to return (id and meta always)' },
  { name: '_include', type: 'special', documentation: '<type>:patient|subject (the referenced Patients)' },
  { name: '_revinclude', type: 'special', documentation: 'on Patient: <type>:patient|subject (resources referencing the Patients)' },
];

/** The CapabilityStatement: exactly the interactions and parameters this server implements (the REST adapter adds its address, `implementation.url`). */
export function capabilityStatement(software: { version: string; date: string } = { version: process.env.npm_package_version ?? '0.1.0', date: '2026-11-23' }) {
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
        documentation:
          "Bearer token (JWT) in Authorization (except GET /metadata); tenant by X-Tenant-Id or the token's only tenant. Searches follow Prefer: handling=strict|lenient (default lenient: unknown parameters are ignored, reported in an OperationOutcome entry and left out of the self link).",
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
          conditionalCreate: WRITABLE_TYPES.includes(type),
          conditionalRead: 'not-supported',
          conditionalUpdate: WRITABLE_TYPES.includes(type),
          conditionalDelete: 'not-supported',
          searchParam: [
            ...Object.entries(SEARCH_PARAMETERS[type]).map(([name, p]) => ({ name, type: p.kind === 'id' ? 'token' : p.kind, documentation: p.documentation })),
          ],
          ...(INCLUDE_PARAMETERS[type] ? { searchInclude: INCLUDE_PARAMETERS[type].map((p) => `${type}:${p}`) } : {}),
          ...(type === 'Patient'
            ? { searchRevInclude: Object.entries(INCLUDE_PARAMETERS).flatMap(([source, params]) => params.map((p) => `${source}:${p}`)) }
            : {}),
          ...(type === 'Patient' ? { operation: [{ name: 'everything', definition: 'http://hl7.org/fhir/OperationDefinition/Patient-everything' }] } : {}),
        })),
        searchParam: RESULT_PARAMETER_DOCS,
      },
    ],
  };
}
