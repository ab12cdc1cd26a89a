import { validationError } from '../../../../common/errors';
import type { XdsDocument as DocumentRow, XdsSubmissionSet as SetRow } from '../../db/generated/client';
import { slotValue, XDS, type AssociationObject, type Coded, type RegistryObject, type SubmitObjects } from '../xds/ebrim';
import { LOINC, withoutEmpty, type FhirResource } from '../fhir/mapping';

/**
 * IHE MHD (ITI TF-3 §4.5, the XDS on FHIR mapping) between FHIR R4 resources
 * and the XDS ebRIM objects the registry stores: an ITI-65 Bundle read into a
 * submission, stored entries written as DocumentReference, List and Binary.
 * Plain data, no storage: the XDS service checks and stores what is read here.
 */

const SUBMISSIONSET_CODE = { system: 'https://profiles.ihe.net/ITI/MHD/CodeSystem/MHDlistTypes', code: 'submissionset' };
/** The status and code every SubmissionSet List has, whichever submission set it is. */
export const SUBMISSION_SET_LIST = { status: 'current', code: { coding: [SUBMISSIONSET_CODE] } };
const SOURCE_ID_EXTENSION = 'https://profiles.ihe.net/ITI/MHD/StructureDefinition/ihe-sourceId';
const DESIGNATION_TYPE_EXTENSION = 'https://profiles.ihe.net/ITI/MHD/StructureDefinition/ihe-designationType';
const URI = 'urn:ietf:rfc:3986';
/** The replacing relationships of DocumentReference.relatesTo (RPLC and XFRM_RPLC have no FHIR code of their own but `replaces`). */
const RELATES_TO: Record<string, string> = {
  replaces: 'urn:ihe:iti:2007:AssociationType:RPLC',
  transforms: 'urn:ihe:iti:2007:AssociationType:XFRM',
  appends: 'urn:ihe:iti:2007:AssociationType:APND',
  signs: 'urn:ihe:iti:2007:AssociationType:signs',
};

/** XDS code systems are OIDs, FHIR's URIs: the well-known ones by name, every other OID as urn:oid (ITI TF-3 §4.5.4.3). */
const SYSTEMS: Record<string, string> = {
  '2.16.840.1.113883.6.1': LOINC,
  '2.16.840.1.113883.6.96': 'http://snomed.info/sct',
  '2.16.840.1.113883.5.25': 'http://terminology.hl7.org/CodeSystem/v3-Confidentiality',
  '1.3.6.1.4.1.19376.1.2.3': 'http://ihe.net/fhir/ihe.formatcode.fhir/CodeSystem/formatcode',
};
const OID = /^[0-2](\.(0|[1-9][0-9]*))+$/;
const fhirSystem = (scheme: string) => SYSTEMS[scheme] ?? (OID.test(scheme) ? `urn:oid:${scheme}` : scheme);
const xdsScheme = (system: string) =>
  Object.entries(SYSTEMS).find(([, uri]) => uri === system)?.[0] ?? (system.startsWith('urn:oid:') ? system.slice('urn:oid:'.length) : system);
/** Every XDS coding scheme whose codes FHIR shows with this system (`http://loinc.org`: LOINC's OID, and the URI itself as a scheme). */
export const xdsSchemes = (system: string) =>
  [...new Set([system, ...Object.keys(SYSTEMS), system.replace(/^urn:oid:/, '')])].filter((scheme) => fhirSystem(scheme) === system);

/** A FHIR id for an entryUUID: a prefix keeps registry ids apart from composition-backed ones (bare UUIDs). */
export const fhirId = (entryUuid: string) => `xds-${entryUuid.replace(/^urn:uuid:/, '')}`;
/** The entryUUID of a FHIR id made by fhirId, or undefined. */
export function entryUuid(id: string): string | undefined {
  const match = /^xds-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(id);
  return match ? `urn:uuid:${match[1]}` : undefined;
}

/** An XDS DTM (UTC, YYYY[MM[DD[hh[mm[ss]]]]]) as a FHIR dateTime. */
function dateTime(dtm: string | null | undefined): string | undefined {
  if (!dtm) return undefined;
  const [y, mo, d] = [dtm.slice(0, 4), dtm.slice(4, 6), dtm.slice(6, 8)];
  if (dtm.length <= 8) return [y, mo, d].filter(Boolean).join('-');
  const t = dtm.slice(8).padEnd(6, '0');
  return `${y}-${mo}-${d}T${t.slice(0, 2)}:${t.slice(2, 4)}:${t.slice(4, 6)}Z`;
}

/** A FHIR date or dateTime as an XDS DTM in UTC (a date keeps its precision). */
function dtm(value: unknown, path: string): string {
  if (typeof value === 'string' && /^\d{4}(-\d{2}(-\d{2})?)?$/.test(value)) return value.replace(/-/g, '');
  const at = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime())) throw invalid(path, 'must be a FHIR date or dateTime');
  return at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

const concept = (c: Coded | null | undefined) =>
  c ? { coding: [{ system: fhirSystem(c.scheme), code: c.code, ...(c.display ? { display: c.display } : {}) }] } : undefined;
const oidUri = (value: string) => (OID.test(value) ? `urn:oid:${value}` : value);

/** A stored document entry as an MHD DocumentReference (ITI TF-3 §4.5.4.4); `url` names its Binary when this repository holds the bytes; without its (decrypted) metadata, it has no description, title or language. */
export function documentReference({ row, metadata }: { row: DocumentRow; metadata?: RegistryObject }): FhirResource {
  const event = (row.eventCodes as Coded[] | null) ?? [];
  return withoutEmpty({
    resourceType: 'DocumentReference',
    id: fhirId(row.id),
    meta: { versionId: '1', lastUpdated: row.createdAt.toISOString() },
    masterIdentifier: { system: URI, value: oidUri(row.uniqueId) },
    identifier: [{ use: 'official', system: URI, value: row.id }],
    status: row.status === XDS.status.approved ? 'current' : 'superseded',
    type: concept(row.typeCode as Coded | null),
    category: [concept(row.classCode as Coded | null)],
    subject: { reference: `Patient/${row.patientId}` },
    date: row.createdAt.toISOString(),
    description: metadata?.name,
    securityLabel: (row.confidentialityCodes as unknown as Coded[]).map(concept),
    content: [
      {
        attachment: {
          contentType: row.mimeType,
          language: metadata && slotValue(metadata, 'languageCode'),
          url: row.contentEnc ? `Binary/${fhirId(row.id)}` : undefined,
          size: row.size,
          hash: Buffer.from(row.hash, 'hex').toString('base64'),
          title: metadata?.name,
          creation: dateTime(row.creationTime),
        },
        format: concept(row.formatCode as Coded | null)?.coding[0],
      },
    ],
    context: {
      event: event.map(concept),
      period: row.serviceStartTime || row.serviceStopTime ? { start: dateTime(row.serviceStartTime), end: dateTime(row.serviceStopTime) } : undefined,
      facilityType: concept(row.healthcareFacilityTypeCode as Coded | null),
      practiceSetting: concept(row.practiceSettingCode as Coded | null),
    },
  });
}

/** A stored submission set as an MHD SubmissionSet List (ITI TF-3 §4.5.4.2); without its (decrypted) metadata, it has no title. */
export function submissionSetList({ row, metadata, members }: { row: SetRow; metadata?: RegistryObject; members: string[] }): FhirResource {
  return withoutEmpty({
    resourceType: 'List',
    id: fhirId(row.id),
    meta: { versionId: '1', lastUpdated: row.createdAt.toISOString() },
    extension: [
      { url: SOURCE_ID_EXTENSION, valueIdentifier: { value: oidUri(row.sourceId) } },
      ...(row.contentTypeCode ? [{ url: DESIGNATION_TYPE_EXTENSION, valueCodeableConcept: concept(row.contentTypeCode as unknown as Coded) }] : []),
    ],
    identifier: [
      { use: 'usual', system: URI, value: oidUri(row.uniqueId) },
      { use: 'official', system: URI, value: row.id },
    ],
    status: SUBMISSION_SET_LIST.status,
    mode: 'working',
    title: metadata?.name,
    code: SUBMISSION_SET_LIST.code,
    subject: { reference: `Patient/${row.patientId}` },
    date: dateTime(row.submissionTime),
    entry: members.map((id) => ({ item: { reference: `DocumentReference/${fhirId(id)}` } })),
  });
}

export function binary(row: DocumentRow, content: Buffer): FhirResource {
  return {
    resourceType: 'Binary',
    id: fhirId(row.id),
    meta: { versionId: '1', lastUpdated: row.createdAt.toISOString() },
    contentType: row.mimeType,
    securityContext: { reference: `DocumentReference/${fhirId(row.id)}` },
    data: content.toString('base64'),
  };
}

// ---- ITI-65: the Bundle into a submission ----

const invalid = (path: string, message: string) => validationError(`${path} ${message}`, [{ path, message }]);

type Json = Record<string, any>;

/** What an ITI-65 Bundle becomes: the ebRIM submission, its documents, and each Bundle entry's submitted id (for the response). */
export interface ProvidedBundle {
  submit: SubmitObjects;
  documents: Array<{ id: string; content: Buffer }>;
  /** Per Bundle entry, in order: its resource type and the submitted id of the object it became (a Binary: its DocumentReference's). */
  entries: Array<{ resourceType: string; submittedId: string }>;
}

/** The patient of a subject reference as an affinity-domain CX (`Patient/<id>` on this server, or an identifier of the domain). */
function patientCx(subject: Json | undefined, path: string, authority: string): string {
  const local = typeof subject?.reference === 'string' ? /(?:^|\/)Patient\/([A-Za-z0-9\-.]{1,64})$/.exec(subject.reference)?.[1] : undefined;
  if (local) return `${local}^^^&${authority}&ISO`;
  const identifier = subject?.identifier;
  if (typeof identifier?.value === 'string' && typeof identifier.system === 'string' && identifier.system.startsWith('urn:oid:'))
    return `${identifier.value}^^^&${identifier.system.slice('urn:oid:'.length)}&ISO`;
  throw invalid(path, 'must reference the Patient (Patient/<id>, or an identifier with a urn:oid system)');
}

/** An OID given as urn:oid:… (or bare), as XDS stores it. */
function oid(value: unknown, path: string): string {
  if (typeof value !== 'string' || !value) throw invalid(path, 'is required');
  return value.startsWith('urn:oid:') ? value.slice('urn:oid:'.length) : value;
}

function classification(objectId: string, scheme: string, concept: Json | undefined): RegistryObject['classifications'] {
  const coding = concept?.coding?.[0] ?? (concept?.code ? concept : undefined);
  if (!coding?.code || !coding.system) return [];
  return [
    {
      id: '',
      scheme,
      classifiedObject: objectId,
      nodeRepresentation: String(coding.code),
      ...(coding.display ? { name: String(coding.display) } : {}),
      slots: [{ name: 'codingScheme', values: [xdsScheme(String(coding.system))] }],
    },
  ];
}

const slot = (name: string, value: string | undefined) => (value === undefined ? [] : [{ name, values: [value] }]);
const external = (objectId: string, scheme: string, value: string, name: string) => ({ id: '', scheme, value, registryObject: objectId, name });

/** The entryUUID a resource asks for (an `official` urn:uuid identifier), else a symbolic id the registry replaces. */
function submittedId(resource: Json, symbolic: string): string {
  const official = (resource.identifier ?? []).find((i: Json) => i?.use === 'official' && /^urn:uuid:/i.test(String(i.value)));
  return official ? String(official.value) : symbolic;
}

/**
 * An ITI-65 transaction Bundle (ITI TF-2 §3.65.4.1): one SubmissionSet List, its DocumentReferences, their Binaries.
 * Only what MHD's Comprehensive Metadata carries is read; the XDS checks (required attributes, same patient,
 * membership, hashes) are the registry's, so both transactions refuse the same things.
 */
export function readProvideBundle(bundle: Json, authority: string): ProvidedBundle {
  if (bundle.resourceType !== 'Bundle' || bundle.type !== 'transaction') throw invalid('Bundle.type', "must be 'transaction'");
  const entries: Json[] = Array.isArray(bundle.entry) ? bundle.entry : [];
  entries.forEach((e, i) => {
    if (!e?.resource || typeof e.resource !== 'object') throw invalid(`Bundle.entry[${i}].resource`, 'is required');
    if (e.request?.method !== 'POST') throw invalid(`Bundle.entry[${i}].request.method`, 'must be POST (ITI-65 creates)');
    if (!['List', 'DocumentReference', 'Binary'].includes(e.resource.resourceType))
      throw invalid(`Bundle.entry[${i}].resource`, `is a ${String(e.resource.resourceType)}; ITI-65 takes List, DocumentReference and Binary`);
  });
  const lists = entries.filter((e) => e.resource.resourceType === 'List');
  const isSet = (l: Json) => (l.resource.code?.coding ?? []).some((c: Json) => c?.system === SUBMISSIONSET_CODE.system && c.code === SUBMISSIONSET_CODE.code);
  if (lists.length !== 1 || !isSet(lists[0])) throw invalid('Bundle.entry', 'must hold exactly one List with code submissionset (folders are not supported)');
  const list = lists[0].resource as Json;
  const setId = submittedId(list, 'submission-set');
  const setPatient = patientCx(list.subject, 'List.subject', authority);

  // DocumentReferences and Binaries are matched by the Bundle's fullUrls, as the List's and attachments' references name them.
  const docIdOf = new Map<string, string>();
  const binaries = new Map<string, string>();
  entries.forEach((e, i) => {
    const r = e.resource as Json;
    if (r.resourceType === 'DocumentReference') docIdOf.set(String(e.fullUrl ?? ''), submittedId(r, `document-${i}`));
    if (r.resourceType === 'Binary') {
      if (typeof r.data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(r.data))
        throw invalid(`Bundle.entry[${i}].resource.data`, 'must be the base64 document');
      binaries.set(String(e.fullUrl ?? ''), r.data);
    }
  });
  const documents: ProvidedBundle['documents'] = [];
  const extrinsicObjects: RegistryObject[] = [];
  const associations: AssociationObject[] = [];
  /** The DocumentReference whose content each Binary is, by the Binary's fullUrl. */
  const contentOf = new Map<string, string>();
  entries.forEach((e, i) => {
    const r = e.resource as Json;
    if (r.resourceType !== 'DocumentReference') return;
    const path = `Bundle.entry[${i}].resource`;
    const id = docIdOf.get(String(e.fullUrl ?? ''))!;
    const content = r.content?.[0] as Json | undefined;
    const attachment = content?.attachment as Json | undefined;
    if (!attachment) throw invalid(`${path}.content`, 'must hold one attachment');
    if (r.status !== undefined && r.status !== 'current') throw invalid(`${path}.status`, "must be 'current'");
    const uniqueId = oid(r.masterIdentifier?.value, `${path}.masterIdentifier`);
    const context = (r.context ?? {}) as Json;
    extrinsicObjects.push({
      id,
      objectType: XDS.stableDocument,
      mimeType: attachment.contentType,
      ...((attachment.title ?? r.description) ? { name: String(attachment.title ?? r.description) } : {}),
      slots: [
        ...slot('creationTime', attachment.creation === undefined ? undefined : dtm(attachment.creation, `${path}.content.attachment.creation`)),
        ...slot('languageCode', attachment.language),
        ...slot('serviceStartTime', context.period?.start === undefined ? undefined : dtm(context.period.start, `${path}.context.period.start`)),
        ...slot('serviceStopTime', context.period?.end === undefined ? undefined : dtm(context.period.end, `${path}.context.period.end`)),
        // FHIR carries the SHA-1 as base64, XDS as hex; the registry compares it with the bytes.
        ...slot('hash', attachment.hash === undefined ? undefined : Buffer.from(String(attachment.hash), 'base64').toString('hex')),
        ...slot('size', attachment.size === undefined ? undefined : String(attachment.size)),
      ],
      classifications: [
        ...classification(id, XDS.doc.classCode, r.category?.[0]),
        ...classification(id, XDS.doc.typeCode, r.type),
        ...classification(id, XDS.doc.formatCode, content?.format),
        ...(r.securityLabel ?? []).flatMap((label: Json) => classification(id, XDS.doc.confidentialityCode, label)),
        ...classification(id, XDS.doc.healthcareFacilityTypeCode, context.facilityType),
        ...classification(id, XDS.doc.practiceSettingCode, context.practiceSetting),
        ...(context.event ?? []).flatMap((event: Json) => classification(id, XDS.doc.eventCodeList, event)),
      ],
      externalIds: [
        external(id, XDS.doc.patientId, patientCx(r.subject, `${path}.subject`, authority), 'XDSDocumentEntry.patientId'),
        external(id, XDS.doc.uniqueId, uniqueId, 'XDSDocumentEntry.uniqueId'),
      ],
    });
    if (typeof attachment.data === 'string') documents.push({ id, content: Buffer.from(attachment.data, 'base64') });
    else if (typeof attachment.url === 'string' && binaries.has(attachment.url) && !contentOf.has(attachment.url)) {
      contentOf.set(attachment.url, id);
      documents.push({ id, content: Buffer.from(binaries.get(attachment.url)!, 'base64') });
    } else throw invalid(`${path}.content.attachment`, 'must carry data, or a url naming a Binary of this Bundle (one Binary per document)');
    (r.relatesTo ?? []).forEach((relation: Json, k: number) => {
      const type = RELATES_TO[relation?.code];
      const target = entryUuid(String(relation?.target?.reference ?? '').replace(/^.*DocumentReference\//, ''));
      if (!type || !target) throw invalid(`${path}.relatesTo[${k}]`, 'must be replaces, transforms, appends or signs of a stored DocumentReference/xds-…');
      associations.push({ id: `relation-${i}-${k}`, type, source: id, target, slots: [] });
    });
  });
  const result = entries.map((e, i): ProvidedBundle['entries'][number] => {
    const fullUrl = String(e.fullUrl ?? '');
    switch (e.resource.resourceType) {
      case 'List':
        return { resourceType: 'List', submittedId: setId };
      case 'DocumentReference':
        return { resourceType: 'DocumentReference', submittedId: docIdOf.get(fullUrl)! };
      default:
        if (!contentOf.has(fullUrl)) throw invalid(`Bundle.entry[${i}]`, 'is a Binary no DocumentReference names in content.attachment.url');
        return { resourceType: 'Binary', submittedId: contentOf.get(fullUrl)! };
    }
  });

  (list.entry ?? []).forEach((member: Json, k: number) => {
    const target = docIdOf.get(String(member?.item?.reference ?? ''));
    if (!target) throw invalid(`List.entry[${k}].item`, 'must reference a DocumentReference of this Bundle by its fullUrl');
    associations.push({ id: `member-${k}`, type: XDS.hasMember, source: setId, target, slots: [{ name: 'SubmissionSetStatus', values: ['Original'] }] });
  });
  const sourceId = (list.extension ?? []).find((x: Json) => x?.url === SOURCE_ID_EXTENSION)?.valueIdentifier?.value;
  const designation = (list.extension ?? []).find((x: Json) => x?.url === DESIGNATION_TYPE_EXTENSION)?.valueCodeableConcept;
  const usual = (list.identifier ?? []).find((i: Json) => i?.use === 'usual')?.value;
  const set: RegistryObject = {
    id: setId,
    ...(list.title ? { name: String(list.title) } : {}),
    slots: slot('submissionTime', list.date === undefined ? undefined : dtm(list.date, 'List.date')),
    classifications: [
      { id: '', node: XDS.submissionSetNode, classifiedObject: setId, slots: [] },
      ...classification(setId, XDS.set.contentTypeCode, designation),
    ],
    externalIds: [
      external(setId, XDS.set.patientId, setPatient, 'XDSSubmissionSet.patientId'),
      external(setId, XDS.set.uniqueId, oid(usual, 'List.identifier (use usual)'), 'XDSSubmissionSet.uniqueId'),
      external(setId, XDS.set.sourceId, oid(sourceId, `List.extension(${SOURCE_ID_EXTENSION})`), 'XDSSubmissionSet.sourceId'),
    ],
  };
  return { submit: { extrinsicObjects, registryPackages: [set], classifications: [], associations }, documents, entries: result };
}
