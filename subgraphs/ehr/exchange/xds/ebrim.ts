import { parseUntrustedXml, xmlReader, xmlWriter as builder } from '../../../../common/xml';

/**
 * ebXML Registry 3.0 (ebRIM objects, ebRS requests and responses) as the IHE
 * XDS.b transactions use them (ITI TF-3 §4.2): reading a request's payload
 * (the SOAP Body's element, namespace prefixes ignored) into plain objects
 * and writing answers. No SOAP, no HTTP: the gateway's adapter wraps these.
 */

const NS = {
  rim: 'urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0',
  rs: 'urn:oasis:names:tc:ebxml-regrep:xsd:rs:3.0',
  query: 'urn:oasis:names:tc:ebxml-regrep:xsd:query:3.0',
  lcm: 'urn:oasis:names:tc:ebxml-regrep:xsd:lcm:3.0',
  xdsb: 'urn:ihe:iti:xds-b:2007',
} as const;

/** The identifiers ITI TF-3 §4.2.5 gives the XDS metadata attributes. */
export const XDS = {
  stableDocument: 'urn:uuid:7edca82f-054d-47f2-a032-9b2a5b5186c1',
  onDemandDocument: 'urn:uuid:34268e47-fdf5-41a6-ba33-82133c465248',
  submissionSetNode: 'urn:uuid:a54d6aa5-d40d-43f9-88c5-b4633d873bdd',
  folderNode: 'urn:uuid:d9d542f3-6cc4-48b6-8870-ea235fbc94c2',
  doc: {
    classCode: 'urn:uuid:41a5887f-8865-4c09-adf7-e362475b143a',
    confidentialityCode: 'urn:uuid:f4f85eac-e6cb-4883-b524-f2705394840f',
    eventCodeList: 'urn:uuid:2c6b8cb7-8b2a-4051-b291-b1ae6a575ef4',
    formatCode: 'urn:uuid:a09d5840-386c-46f2-b5ad-9c3699a4309d',
    healthcareFacilityTypeCode: 'urn:uuid:f33fb8ac-18af-42cc-ae0e-ed0b0bdb91e1',
    practiceSettingCode: 'urn:uuid:cccf5598-8b07-4b77-a05e-ae952c785ead',
    typeCode: 'urn:uuid:f0306f51-975f-434e-a61c-c59651d33983',
    author: 'urn:uuid:93606bcf-9494-43ec-9b4e-a7748d1a838d',
    patientId: 'urn:uuid:58a6f841-87b3-4a3e-92fd-a8ffeff98427',
    uniqueId: 'urn:uuid:2e82c1f6-a085-4c72-9da3-8640a32e42ab',
  },
  set: {
    contentTypeCode: 'urn:uuid:aa543740-bdda-424e-8c96-df4873be8500',
    author: 'urn:uuid:a7058bb9-b4e4-4307-ba5b-e3f0ab85e12d',
    patientId: 'urn:uuid:6b5aea1a-874d-4603-a4bc-96a0a7b38446',
    sourceId: 'urn:uuid:554ac39e-e3fe-47fe-b233-965d2a147832',
    uniqueId: 'urn:uuid:96fdda7c-d067-4183-912e-bf5ee74998a8',
  },
  status: {
    approved: 'urn:oasis:names:tc:ebxml-regrep:StatusType:Approved',
    deprecated: 'urn:oasis:names:tc:ebxml-regrep:StatusType:Deprecated',
  },
  response: {
    success: 'urn:oasis:names:tc:ebxml-regrep:ResponseStatusType:Success',
    failure: 'urn:oasis:names:tc:ebxml-regrep:ResponseStatusType:Failure',
    partialSuccess: 'urn:ihe:iti:2007:ResponseStatusType:PartialSuccess',
  },
  severityError: 'urn:oasis:names:tc:ebxml-regrep:ErrorSeverityType:Error',
  hasMember: 'urn:oasis:names:tc:ebxml-regrep:AssociationType:HasMember',
  classificationType: 'urn:oasis:names:tc:ebxml-regrep:ObjectType:RegistryObject:Classification',
  externalIdentifierType: 'urn:oasis:names:tc:ebxml-regrep:ObjectType:RegistryObject:ExternalIdentifier',
  associationObjectType: 'urn:oasis:names:tc:ebxml-regrep:ObjectType:RegistryObject:Association',
  registryPackageType: 'urn:oasis:names:tc:ebxml-regrep:ObjectType:RegistryObject:RegistryPackage',
} as const;

/** Association types XDS defines (ITI TF-3 §4.2.2); the document relationships besides HasMember. */
export const ASSOCIATION_TYPES = [
  XDS.hasMember,
  'urn:ihe:iti:2007:AssociationType:RPLC',
  'urn:ihe:iti:2007:AssociationType:XFRM',
  'urn:ihe:iti:2007:AssociationType:APND',
  'urn:ihe:iti:2007:AssociationType:XFRM_RPLC',
  'urn:ihe:iti:2007:AssociationType:signs',
];
/** Relationships whose target a new document replaces (the target becomes Deprecated). */
export const REPLACING = ['urn:ihe:iti:2007:AssociationType:RPLC', 'urn:ihe:iti:2007:AssociationType:XFRM_RPLC'];

export interface Slot {
  name: string;
  values: string[];
}
interface Classification {
  id: string;
  scheme?: string;
  node?: string;
  classifiedObject: string;
  nodeRepresentation?: string;
  name?: string;
  slots: Slot[];
}
interface ExternalId {
  id: string;
  scheme: string;
  value: string;
  registryObject: string;
  name?: string;
}
export interface RegistryObject {
  id: string;
  objectType?: string;
  status?: string;
  mimeType?: string;
  name?: string;
  description?: string;
  slots: Slot[];
  classifications: Classification[];
  externalIds: ExternalId[];
}
export interface AssociationObject {
  id: string;
  type: string;
  source: string;
  target: string;
  slots: Slot[];
}
export interface Coded {
  code: string;
  scheme: string;
  display?: string;
}
export interface RegistryError {
  errorCode: string;
  codeContext: string;
  location?: string;
}

/** A request the payload could not be read as: the caller gets XDSRegistryError (or the transaction's own code). */
export class EbXmlError extends Error {
  constructor(
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

const ARRAYS = new Set([
  'RegistryError',
  'Slot',
  'Value',
  'Classification',
  'ExternalIdentifier',
  'ExtrinsicObject',
  'RegistryPackage',
  'Association',
  'ObjectRef',
  'Document',
  'DocumentRequest',
  'LocalizedString',
]);
const parser = xmlReader(ARRAYS);

type X = Record<string, any>;
const list = (value: unknown): X[] => (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]);
const text = (value: unknown): string =>
  typeof value === 'string' ? value : typeof (value as X | undefined)?.['#text'] === 'string' ? (value as X)['#text'] : '';

/** The payload element (by local name) of an XML text, or an EbXmlError naming what is wrong. */
function parsePayload(xml: string, element: string): X {
  const doc = parseUntrustedXml(parser, xml, (reason) => new EbXmlError('XDSRegistryError', `The request is ${reason}`)) as X;
  const root = doc[element];
  if (!root || typeof root !== 'object') throw new EbXmlError('XDSRegistryError', `The request must be a ${element}`);
  return root;
}

const slotsOf = (node: X): Slot[] =>
  list(node.Slot).map((s) => ({ name: String(s['@name'] ?? ''), values: list(s.ValueList?.Value).map((v) => text(v) || String(v ?? '')) }));
const localized = (node: X | undefined): string | undefined => {
  const first = list(node?.LocalizedString)[0];
  return first ? String(first['@value'] ?? '') : undefined;
};

function classificationOf(node: X, owner?: string): Classification {
  return {
    id: String(node['@id'] ?? ''),
    scheme: node['@classificationScheme'],
    node: node['@classificationNode'],
    classifiedObject: String(node['@classifiedObject'] ?? owner ?? ''),
    nodeRepresentation: node['@nodeRepresentation'],
    name: localized(node.Name),
    slots: slotsOf(node),
  };
}

function registryObjectOf(node: X): RegistryObject {
  const id = String(node['@id'] ?? '');
  return {
    id,
    objectType: node['@objectType'],
    status: node['@status'],
    mimeType: node['@mimeType'],
    name: localized(node.Name),
    description: localized(node.Description),
    slots: slotsOf(node),
    classifications: list(node.Classification).map((c) => classificationOf(c, id)),
    externalIds: list(node.ExternalIdentifier).map((e) => ({
      id: String(e['@id'] ?? ''),
      scheme: String(e['@identificationScheme'] ?? ''),
      value: String(e['@value'] ?? ''),
      registryObject: String(e['@registryObject'] ?? id),
      name: localized(e.Name),
    })),
  };
}

export interface SubmitObjects {
  extrinsicObjects: RegistryObject[];
  registryPackages: RegistryObject[];
  /** Classifications outside their object (the submission set's, usually). */
  classifications: Classification[];
  associations: AssociationObject[];
}

/** The RegistryObjectList of a SubmitObjectsRequest. */
function readSubmitObjects(request: X): SubmitObjects {
  const objects = request.RegistryObjectList;
  if (!objects || typeof objects !== 'object') throw new EbXmlError('XDSRegistryMetadataError', 'SubmitObjectsRequest has no RegistryObjectList');
  return {
    extrinsicObjects: list(objects.ExtrinsicObject).map(registryObjectOf),
    registryPackages: list(objects.RegistryPackage).map(registryObjectOf),
    classifications: list(objects.Classification).map((c) => classificationOf(c)),
    associations: list(objects.Association).map((a) => ({
      id: String(a['@id'] ?? ''),
      type: String(a['@associationType'] ?? ''),
      source: String(a['@sourceObject'] ?? ''),
      target: String(a['@targetObject'] ?? ''),
      slots: slotsOf(a),
    })),
  };
}

/** ITI-41: the SubmitObjectsRequest and the documents by their ExtrinsicObject id (inline base64; the gateway has resolved XOP). */
export function readProvideAndRegister(xml: string): { submit: SubmitObjects; documents: Array<{ id: string; content: Buffer }> } {
  const root = parsePayload(xml, 'ProvideAndRegisterDocumentSetRequest');
  if (!root.SubmitObjectsRequest) throw new EbXmlError('XDSRepositoryMetadataError', 'ProvideAndRegisterDocumentSetRequest has no SubmitObjectsRequest');
  const documents = list(root.Document).map((d) => {
    const base64 = text(d).replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 !== 0)
      throw new EbXmlError('XDSRepositoryMetadataError', `Document '${String(d['@id'])}' is not base64 (nor an XOP include)`);
    return { id: String(d['@id'] ?? ''), content: Buffer.from(base64, 'base64') };
  });
  return { submit: readSubmitObjects(root.SubmitObjectsRequest), documents };
}

/** ITI-42: the SubmitObjectsRequest. */
export function readRegister(xml: string): SubmitObjects {
  return readSubmitObjects(parsePayload(xml, 'SubmitObjectsRequest'));
}

export interface StoredQueryRequest {
  queryId: string;
  returnType: 'LeafClass' | 'ObjectRef';
  /** Parameter name → its Value elements, each a list of values (ebRS: values of one Value are ORed). */
  params: Map<string, string[][]>;
}

/** ITI-18: the AdhocQueryRequest. */
export function readStoredQuery(xml: string): StoredQueryRequest {
  const root = parsePayload(xml, 'AdhocQueryRequest');
  const returnType = root.ResponseOption?.['@returnType'] ?? 'ObjectRef';
  if (returnType !== 'LeafClass' && returnType !== 'ObjectRef')
    throw new EbXmlError('XDSRegistryError', `returnType '${String(returnType)}' is not supported (LeafClass or ObjectRef)`);
  const query = root.AdhocQuery;
  if (!query?.['@id']) throw new EbXmlError('XDSRegistryError', 'AdhocQueryRequest has no AdhocQuery with an id');
  const params = new Map<string, string[][]>();
  for (const slot of slotsOf(query)) params.set(slot.name, [...(params.get(slot.name) ?? []), ...slot.values.map(queryValues)]);
  return { queryId: String(query['@id']), returnType, params };
}

/** One ebRS query Value: `'a'`, `('a','b')`, or a number, into its values. */
export function queryValues(value: string): string[] {
  const inner = value.trim().replace(/^\((.*)\)$/s, '$1');
  const values: string[] = [];
  const pattern = /\s*(?:'((?:[^']|'')*)'|([^,'\s][^,]*?))\s*(?:,|$)/gy;
  let match: RegExpExecArray | null;
  while (pattern.lastIndex < inner.length && (match = pattern.exec(inner))) values.push(match[1] !== undefined ? match[1].replace(/''/g, "'") : match[2]);
  return values;
}

/** ITI-43: the DocumentRequests. */
export function readRetrieve(xml: string): Array<{ repositoryUniqueId: string; documentUniqueId: string; homeCommunityId?: string }> {
  const root = parsePayload(xml, 'RetrieveDocumentSetRequest');
  const requests = list(root.DocumentRequest).map((r) => ({
    repositoryUniqueId: text(r.RepositoryUniqueId),
    documentUniqueId: text(r.DocumentUniqueId),
    homeCommunityId: text(r.HomeCommunityId) || undefined,
  }));
  if (requests.length === 0) throw new EbXmlError('XDSRegistryError', 'RetrieveDocumentSetRequest names no DocumentRequest');
  return requests;
}

// --- Reading XDS attributes from ebRIM objects -------------------------------------------------

export const slotValue = (object: { slots: Slot[] }, name: string): string | undefined => object.slots.find((s) => s.name === name)?.values[0];
export const externalId = (object: RegistryObject, scheme: string): string | undefined => object.externalIds.find((e) => e.scheme === scheme)?.value;

/** The coded values (code, codingScheme slot, display name) of one classification scheme. */
export function codes(object: RegistryObject, scheme: string): Coded[] {
  return object.classifications
    .filter((c) => c.scheme === scheme)
    .map((c) => ({ code: c.nodeRepresentation ?? '', scheme: slotValue(c, 'codingScheme') ?? '', ...(c.name ? { display: c.name } : {}) }));
}

/** A query parameter's coded value `code^^scheme` (ITI TF-2a §3.18.4.1.2.3.7.1 coded parameters). */
export function parseCodedParam(value: string): Coded {
  const [code, , scheme] = value.split('^');
  return { code: code ?? '', scheme: scheme ?? '' };
}

/** An HL7 CX patient id `id^^^&oid&ISO` into its id and assigning authority, or undefined. */
export function parseCx(value: string): { id: string; authority: string } | undefined {
  const match = /^([^^&]+)\^\^\^&([0-9.]+)&ISO$/.exec(value.trim());
  return match ? { id: match[1], authority: match[2] } : undefined;
}

// --- Writing ------------------------------------------------------------------------------------

const localizedXml = (value: string | undefined) => (value === undefined ? undefined : { 'rim:LocalizedString': { '@value': value } });
const slotsXml = (slots: Slot[]) => slots.map((s) => ({ '@name': s.name, 'rim:ValueList': { 'rim:Value': s.values.map((v) => ({ '#text': v })) } }));

function classificationXml(c: Classification) {
  return {
    '@id': c.id,
    '@objectType': XDS.classificationType,
    ...(c.scheme ? { '@classificationScheme': c.scheme } : {}),
    ...(c.node ? { '@classificationNode': c.node } : {}),
    '@classifiedObject': c.classifiedObject,
    ...(c.nodeRepresentation !== undefined ? { '@nodeRepresentation': c.nodeRepresentation } : {}),
    'rim:Slot': slotsXml(c.slots),
    'rim:Name': localizedXml(c.name),
  };
}

function registryObjectXml(o: RegistryObject) {
  return {
    '@id': o.id,
    ...(o.objectType ? { '@objectType': o.objectType } : {}),
    ...(o.status ? { '@status': o.status } : {}),
    ...(o.mimeType ? { '@mimeType': o.mimeType } : {}),
    'rim:Slot': slotsXml(o.slots),
    'rim:Name': localizedXml(o.name),
    'rim:Description': localizedXml(o.description),
    'rim:Classification': o.classifications.map(classificationXml),
    'rim:ExternalIdentifier': o.externalIds.map((e) => ({
      '@id': e.id,
      '@objectType': XDS.externalIdentifierType,
      '@identificationScheme': e.scheme,
      '@registryObject': e.registryObject,
      '@value': e.value,
      'rim:Name': localizedXml(e.name),
    })),
  };
}

const associationXml = (a: AssociationObject & { status?: string }) => ({
  '@id': a.id,
  '@objectType': XDS.associationObjectType,
  '@associationType': a.type,
  '@sourceObject': a.source,
  '@targetObject': a.target,
  ...(a.status ? { '@status': a.status } : {}),
  'rim:Slot': slotsXml(a.slots),
});

const errorListXml = (errors: RegistryError[]) =>
  errors.length === 0
    ? undefined
    : {
        'rs:RegistryError': errors.map((e) => ({
          '@errorCode': e.errorCode,
          '@codeContext': e.codeContext,
          '@severity': XDS.severityError,
          ...(e.location ? { '@location': e.location } : {}),
        })),
      };

const statusOf = (errors: RegistryError[], partial = false) =>
  errors.length === 0 ? XDS.response.success : partial ? XDS.response.partialSuccess : XDS.response.failure;

/** rs:RegistryResponse (ITI-41, ITI-42). */
export function registryResponseXml(errors: RegistryError[]): string {
  return builder.build({
    'rs:RegistryResponse': { '@xmlns:rs': NS.rs, '@status': statusOf(errors), 'rs:RegistryErrorList': errorListXml(errors) },
  });
}

export interface QueryResult {
  documents: RegistryObject[];
  submissionSets: RegistryObject[];
  associations: Array<AssociationObject & { status?: string }>;
}

/** query:AdhocQueryResponse (ITI-18): the objects whole (LeafClass) or as ObjectRefs. */
export function adhocQueryResponseXml(result: QueryResult | null, returnType: 'LeafClass' | 'ObjectRef', errors: RegistryError[]): string {
  const ids = result ? [...result.documents, ...result.submissionSets, ...result.associations].map((o) => o.id) : [];
  const objects = !result
    ? undefined
    : returnType === 'ObjectRef'
      ? { 'rim:ObjectRef': ids.map((id) => ({ '@id': id })) }
      : {
          'rim:ExtrinsicObject': result.documents.map(registryObjectXml),
          'rim:RegistryPackage': result.submissionSets.map(registryObjectXml),
          'rim:Association': result.associations.map(associationXml),
        };
  return builder.build({
    'query:AdhocQueryResponse': {
      '@xmlns:query': NS.query,
      '@xmlns:rim': NS.rim,
      '@xmlns:rs': NS.rs,
      '@status': statusOf(errors),
      'rs:RegistryErrorList': errorListXml(errors),
      'rim:RegistryObjectList': objects ?? {},
    },
  });
}

/**
 * xdsb:RetrieveDocumentSetResponse (ITI-43) with each document inline as
 * base64 in `xdsb:Document`; the gateway turns those into MTOM attachments.
 */
export function retrieveResponseXml(
  documents: Array<{ repositoryUniqueId: string; documentUniqueId: string; mimeType: string; content: Buffer }>,
  errors: RegistryError[],
): string {
  return builder.build({
    'xdsb:RetrieveDocumentSetResponse': {
      '@xmlns:xdsb': NS.xdsb,
      '@xmlns:rs': NS.rs,
      'rs:RegistryResponse': { '@status': statusOf(errors, documents.length > 0), 'rs:RegistryErrorList': errorListXml(errors) },
      'xdsb:DocumentResponse': documents.map((d) => ({
        'xdsb:RepositoryUniqueId': d.repositoryUniqueId,
        'xdsb:DocumentUniqueId': d.documentUniqueId,
        'xdsb:mimeType': d.mimeType,
        'xdsb:Document': d.content.toString('base64'),
      })),
    },
  });
}

/**
 * xdsb:ProvideAndRegisterDocumentSetRequest (ITI-41, as a Document Source sends it): the submission's
 * objects and each document inline as base64 in `xdsb:Document` (the SOAP layer makes them MTOM parts).
 */
export function provideAndRegisterXml(submit: SubmitObjects, documents: Array<{ id: string; content: Buffer }>): string {
  return builder.build({
    'xdsb:ProvideAndRegisterDocumentSetRequest': {
      '@xmlns:xdsb': NS.xdsb,
      '@xmlns:lcm': NS.lcm,
      '@xmlns:rim': NS.rim,
      'lcm:SubmitObjectsRequest': {
        'rim:RegistryObjectList': {
          'rim:ExtrinsicObject': submit.extrinsicObjects.map(registryObjectXml),
          'rim:RegistryPackage': submit.registryPackages.map(registryObjectXml),
          'rim:Classification': submit.classifications.map(classificationXml),
          'rim:Association': submit.associations.map(associationXml),
        },
      },
      'xdsb:Document': documents.map((d) => ({ '@id': d.id, '#text': d.content.toString('base64') })),
    },
  });
}

/** An rs:RegistryResponse (the answer to ITI-41/42): whether it is Success, and its RegistryErrors. */
export function readRegistryResponse(xml: string): { success: boolean; status: string; errors: RegistryError[] } {
  const root = parsePayload(xml, 'RegistryResponse');
  const status = String(root['@status'] ?? '');
  const errors = list(root.RegistryErrorList?.RegistryError).map((e) => ({
    errorCode: String(e['@errorCode'] ?? ''),
    codeContext: String(e['@codeContext'] ?? text(e)),
    ...(e['@location'] ? { location: String(e['@location']) } : {}),
  }));
  return { success: status === XDS.response.success, status, errors };
}
