/**
 * What the FHIR R4 facade serves: its resource types, search parameters, sort
 * keys and includes, and the CapabilityStatement built from them. Plain data
 * shared by the ehr subgraph (which searches by these definitions) and the
 * gateway (which answers `GET /fhir/R4/metadata` without a token).
 */
export type ParamKind = 'token' | 'string' | 'date' | 'reference' | 'id' | 'quantity';

export interface ParamDefinition {
  kind: ParamKind;
  documentation: string;
}

const PATIENT_REFERENCE: ParamDefinition = { kind: 'reference', documentation: 'Patient/<id>' };
const SUBJECT_REFERENCE: ParamDefinition = { kind: 'reference', documentation: 'Patient/<id> (the subject; only patients are subjects here)' };
const ID: ParamDefinition = { kind: 'id', documentation: 'Logical id' };
const LAST_UPDATED: ParamDefinition = { kind: 'date', documentation: 'meta.lastUpdated (the version commit time), prefixes eq, ne, lt, le, gt, ge' };
/** The search parameters every resource type with a subject has: its id, its last update, and its patient as `patient` or `subject`. */
const SUBJECT_RESOURCE_PARAMETERS = { _id: ID, _lastUpdated: LAST_UPDATED, patient: PATIENT_REFERENCE, subject: SUBJECT_REFERENCE };

export const SEARCH_PARAMETERS: Record<string, Record<string, ParamDefinition>> = {
  Patient: {
    _id: { kind: 'id', documentation: 'The patient id' },
    identifier: { kind: 'token', documentation: `urn:caregraph:patient-id|<id> or urn:openehr:ehr-id|<ehr id>` },
    name: { kind: 'string', documentation: 'Starts with (case-insensitive) a given or family name; :exact for equality' },
    birthdate: { kind: 'date', documentation: 'Birth date, prefixes eq, ne, lt, le, gt, ge; :missing' },
    gender: { kind: 'token', documentation: 'male | female | other | unknown; :not, :missing' },
  },
  Encounter: {
    ...SUBJECT_RESOURCE_PARAMETERS,
    date: { kind: 'date', documentation: 'period.start' },
  },
  Observation: {
    ...SUBJECT_RESOURCE_PARAMETERS,
    category: { kind: 'token', documentation: 'vital-signs | laboratory' },
    code: { kind: 'token', documentation: 'LOINC code, e.g. http://loinc.org|85354-9' },
    date: { kind: 'date', documentation: 'effectiveDateTime' },
    'value-quantity': { kind: 'quantity', documentation: 'valueQuantity: [prefix]number[|system|code], e.g. gt100||/min' },
  },
  MedicationRequest: {
    ...SUBJECT_RESOURCE_PARAMETERS,
    intent: { kind: 'token', documentation: 'order' },
    status: { kind: 'token', documentation: 'active | completed' },
  },
  DocumentReference: {
    ...SUBJECT_RESOURCE_PARAMETERS,
    category: { kind: 'token', documentation: 'clinical-note; for XDS documents (MHD), the XDS classCode' },
    type: { kind: 'token', documentation: 'LOINC document type (XDS typeCode)' },
    date: { kind: 'date', documentation: 'date (authored; for XDS documents, when registered)' },
    status: { kind: 'token', documentation: 'current | superseded (an XDS document replaced by another)' },
    'security-label': { kind: 'token', documentation: 'XDS confidentialityCode, e.g. http://terminology.hl7.org/CodeSystem/v3-Confidentiality|N' },
    format: { kind: 'token', documentation: 'XDS formatCode (content.format)' },
  },
  List: {
    ...SUBJECT_RESOURCE_PARAMETERS,
    code: { kind: 'token', documentation: 'submissionset (https://profiles.ihe.net/ITI/MHD/CodeSystem/MHDlistTypes): XDS submission sets (MHD ITI-66)' },
    status: { kind: 'token', documentation: 'current' },
    date: { kind: 'date', documentation: 'date (the submission time)' },
  },
  Binary: {},
  Appointment: {
    _id: ID,
    _lastUpdated: LAST_UPDATED,
    patient: PATIENT_REFERENCE,
    date: { kind: 'date', documentation: 'start' },
    status: { kind: 'token', documentation: 'booked | cancelled | fulfilled | noshow' },
  },
  AuditEvent: {
    patient: { kind: 'reference', documentation: 'Patient/<id> (required): the patient whose record was read; a patient token, its own' },
    date: { kind: 'date', documentation: 'recorded, prefixes eq, lt, le, gt, ge' },
  },
};

/** Sort keys per type (`_sort=a,-b`); a key is a search parameter of the type. */
export const SORT_PARAMETERS: Record<string, string[]> = {
  Patient: ['_id', 'name', 'birthdate'],
  Encounter: ['_id', '_lastUpdated', 'date'],
  Observation: ['_id', '_lastUpdated', 'date'],
  MedicationRequest: ['_id', '_lastUpdated'],
  DocumentReference: ['_id', '_lastUpdated', 'date'],
  List: ['_id', '_lastUpdated', 'date'],
  Appointment: ['_id', '_lastUpdated', 'date'],
};

/** The reference parameters `_include` follows (all point at Patient), and which types `_revinclude` may bring back. */
export const INCLUDE_PARAMETERS: Record<string, string[]> = {
  Encounter: ['patient', 'subject'],
  Observation: ['patient', 'subject'],
  MedicationRequest: ['patient', 'subject'],
  DocumentReference: ['patient', 'subject'],
  List: ['patient', 'subject'],
  Appointment: ['patient'],
};

export const FHIR_RESOURCE_TYPES = [
  'Patient',
  'Encounter',
  'Observation',
  'MedicationRequest',
  'DocumentReference',
  'Appointment',
  'List',
  'Binary',
  'AuditEvent',
] as const;
/** The access log (NEN 7513) as AuditEvents: entries are never changed, so read and search only, no versions. */
const UNVERSIONED = (type: string) => type === 'AuditEvent';
/** Binary is read by id only (MHD ITI-68: the document of an XDS DocumentReference). */
const SEARCHABLE = (type: string) => type !== 'Binary';
export const WRITABLE_TYPES: readonly string[] = ['Patient', 'Observation', 'Appointment'];
/**
 * Types a FHIR DELETE (and a conditional delete) removes: an Observation is an entry of an openEHR composition, and
 * its deletion is a new version of that composition (the composition's deletion when it was its only entry).
 */
export const DELETABLE_TYPES: readonly string[] = ['Observation'];

/** Result parameters every search takes (CapabilityStatement.rest.searchParam). */
const RESULT_PARAMETER_DOCS = [
  { name: '_count', type: 'number', documentation: 'page size, 1..100 (default 20); 0 only with _summary=count' },
  { name: '_offset', type: 'number', documentation: 'entries to skip (next links)' },
  {
    name: '_sort',
    type: 'special',
    documentation: 'comma-separated sort keys, - for descending (per type: _id, _lastUpdated, date; Patient: _id, name, birthdate)',
  },
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
    implementation: {
      description: 'CareGraph FHIR R4 facade over the openEHR clinical record, and IHE MHD Document Recipient and Responder over its XDS registry',
    },
    instantiates: [
      'https://profiles.ihe.net/ITI/MHD/CapabilityStatement/IHE.MHD.DocumentRecipient',
      'https://profiles.ihe.net/ITI/MHD/CapabilityStatement/IHE.MHD.DocumentResponder',
    ],
    fhirVersion: '4.0.1',
    format: ['application/fhir+json', 'json'],
    patchFormat: ['application/json-patch+json'],
    rest: [
      {
        mode: 'server',
        documentation:
          "Bearer token (JWT) in Authorization (except GET /metadata); tenant by X-Tenant-Id or the token's only tenant. Media types may carry fhirVersion=4.0; another version answers 406 (Accept) or 415 (Content-Type). PATCH takes JSON Patch (application/json-patch+json) and If-Match. Searches follow Prefer: handling=strict|lenient (default lenient: unknown parameters are ignored, reported in an OperationOutcome entry and left out of the self link).",
        security: { description: 'Authorization: Bearer <JWT>; records of other tenants answer 404.' },
        resource: FHIR_RESOURCE_TYPES.map((type) => ({
          type,
          interaction: [
            { code: 'read' },
            ...(UNVERSIONED(type) ? [] : [{ code: 'vread' }, { code: 'history-instance' }]),
            ...(SEARCHABLE(type) ? [{ code: 'search-type' }] : []),
            ...(WRITABLE_TYPES.includes(type) ? [{ code: 'create' }, { code: 'update' }, { code: 'patch' }] : []),
            ...(DELETABLE_TYPES.includes(type) ? [{ code: 'delete' }] : []),
          ],
          versioning: UNVERSIONED(type) ? 'no-version' : 'versioned',
          readHistory: !UNVERSIONED(type),
          updateCreate: false,
          conditionalCreate: WRITABLE_TYPES.includes(type),
          conditionalRead: 'not-supported',
          conditionalUpdate: WRITABLE_TYPES.includes(type),
          conditionalDelete: DELETABLE_TYPES.includes(type) ? 'single' : 'not-supported',
          ...(SEARCHABLE(type)
            ? {
                searchParam: Object.entries(SEARCH_PARAMETERS[type]).map(([name, p]) => ({
                  name,
                  type: p.kind === 'id' ? 'token' : p.kind,
                  documentation: p.documentation,
                })),
              }
            : {}),
          ...(INCLUDE_PARAMETERS[type] ? { searchInclude: INCLUDE_PARAMETERS[type].map((p) => `${type}:${p}`) } : {}),
          ...(type === 'Patient'
            ? { searchRevInclude: Object.entries(INCLUDE_PARAMETERS).flatMap(([source, params]) => params.map((p) => `${source}:${p}`)) }
            : {}),
          ...(type === 'Patient' ? { operation: [{ name: 'everything', definition: 'http://hl7.org/fhir/OperationDefinition/Patient-everything' }] } : {}),
        })),
        searchParam: RESULT_PARAMETER_DOCS,
        interaction: [
          {
            code: 'transaction',
            documentation:
              'IHE MHD ITI-65 Provide Document Bundle only: POST [base] with a transaction Bundle of one SubmissionSet List, DocumentReferences and Binaries, stored in the XDS registry and repository; all or nothing.',
          },
        ],
      },
    ],
  };
}
