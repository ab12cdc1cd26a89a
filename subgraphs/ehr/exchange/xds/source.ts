import { createHash } from 'node:crypto';
import { XDS, type RegistryObject, type SubmitObjects } from './ebrim';

/**
 * CareGraph as an XDS.b Document Source: the ITI-41 metadata of one CCD
 * (ITI TF-3 §4.2, the attributes our own registry requires of a submission).
 * The codes are those of a C-CDA 2.1 CCD; facility type and practice setting
 * have no source in the record, so they are fixed (SNOMED CT, see docs/exchange.md).
 */

const LOINC = '2.16.840.1.113883.6.1';
const SNOMED = '2.16.840.1.113883.6.96';
const CONFIDENTIALITY = '2.16.840.1.113883.5.25';
const FORMAT_CODES = '1.3.6.1.4.1.19376.1.2.3';
const CCD_CODES = {
  classCode: { code: '34133-9', scheme: LOINC, display: 'Summary of episode note' },
  typeCode: { code: '34133-9', scheme: LOINC, display: 'Summary of episode note' },
  formatCode: { code: 'urn:hl7-org:sdwg:ccda-structuredBody:2.1', scheme: FORMAT_CODES, display: 'C-CDA 2.1 structured body' },
  confidentialityCode: { code: 'N', scheme: CONFIDENTIALITY, display: 'normal' },
  healthcareFacilityTypeCode: { code: '22232009', scheme: SNOMED, display: 'Hospital' },
  practiceSettingCode: { code: '394802001', scheme: SNOMED, display: 'General medicine' },
} as const;

/** A UUID as an OID under 2.25 (ITU-T X.667): XDS uniqueIds are OIDs, CDA document ids UUIDs. */
export function uuidOid(uuid: string): string {
  return `2.25.${BigInt(`0x${uuid.replace(/-/g, '')}`).toString()}`;
}

/** A time as HL7 DTM in UTC to the second (XDS creationTime, submissionTime). */
export const dtm = (at: Date) => at.toISOString().replace(/[-:T]/g, '').slice(0, 14);

export interface CcdSubmissionInput {
  /** The patient in the affinity domain: `id^^^&authority&ISO`. */
  patientCx: string;
  /** The CDA document's id (a UUID): the DocumentEntry.uniqueId is its 2.25 OID. */
  documentId: string;
  /** A fresh UUID for the submission set's uniqueId. */
  submissionSetId: string;
  /** XDS_SOURCE_ID. */
  sourceId: string;
  /** Who publishes (the token's subject) and for which organisation (the tenant). */
  author: string;
  institution: string;
  content: Buffer;
  at: Date;
}

export interface CcdSubmission {
  submit: SubmitObjects;
  documents: Array<{ id: string; content: Buffer }>;
  documentUniqueId: string;
  submissionSetUniqueId: string;
  hash: string;
  size: number;
}

const DOCUMENT = 'Document01';
const SET = 'SubmissionSet01';

/** The submission set, its one DocumentEntry (the CCD, with hash and size) and their HasMember association. */
export function ccdSubmission(input: CcdSubmissionInput): CcdSubmission {
  const hash = createHash('sha1').update(input.content).digest('hex');
  const documentUniqueId = uuidOid(input.documentId);
  const submissionSetUniqueId = uuidOid(input.submissionSetId);
  const at = dtm(input.at);
  const slot = (name: string, ...values: string[]) => ({ name, values });
  // XCN / XON: the author's id, and the organisation's name, without the components the record has no value for.
  const authorSlots = [slot('authorPerson', input.author.replace(/[\^&~\\|]/g, '_')), slot('authorInstitution', input.institution.replace(/[\^&~\\|]/g, '_'))];
  let n = 0;
  const coded = (object: string, scheme: string, c: { code: string; scheme: string; display: string }) => ({
    id: `cl${++n}`,
    scheme,
    classifiedObject: object,
    nodeRepresentation: c.code,
    name: c.display,
    slots: [slot('codingScheme', c.scheme)],
  });
  const document: RegistryObject = {
    id: DOCUMENT,
    objectType: XDS.stableDocument,
    mimeType: 'text/xml',
    name: 'Continuity of Care Document',
    slots: [
      slot('creationTime', at),
      slot('languageCode', 'en-US'),
      slot('hash', hash),
      slot('size', String(input.content.length)),
      slot('sourcePatientId', input.patientCx),
    ],
    classifications: [
      { id: `cl${++n}`, scheme: XDS.doc.author, classifiedObject: DOCUMENT, nodeRepresentation: '', slots: authorSlots },
      coded(DOCUMENT, XDS.doc.classCode, CCD_CODES.classCode),
      coded(DOCUMENT, XDS.doc.typeCode, CCD_CODES.typeCode),
      coded(DOCUMENT, XDS.doc.formatCode, CCD_CODES.formatCode),
      coded(DOCUMENT, XDS.doc.confidentialityCode, CCD_CODES.confidentialityCode),
      coded(DOCUMENT, XDS.doc.healthcareFacilityTypeCode, CCD_CODES.healthcareFacilityTypeCode),
      coded(DOCUMENT, XDS.doc.practiceSettingCode, CCD_CODES.practiceSettingCode),
    ],
    externalIds: [
      { id: 'ei1', scheme: XDS.doc.patientId, value: input.patientCx, registryObject: DOCUMENT, name: 'XDSDocumentEntry.patientId' },
      { id: 'ei2', scheme: XDS.doc.uniqueId, value: documentUniqueId, registryObject: DOCUMENT, name: 'XDSDocumentEntry.uniqueId' },
    ],
  };
  const set: RegistryObject = {
    id: SET,
    name: 'Continuity of Care Document',
    slots: [slot('submissionTime', at)],
    classifications: [
      { id: `cl${++n}`, scheme: XDS.set.author, classifiedObject: SET, nodeRepresentation: '', slots: authorSlots },
      coded(SET, XDS.set.contentTypeCode, CCD_CODES.classCode),
    ],
    externalIds: [
      { id: 'ei3', scheme: XDS.set.uniqueId, value: submissionSetUniqueId, registryObject: SET, name: 'XDSSubmissionSet.uniqueId' },
      { id: 'ei4', scheme: XDS.set.sourceId, value: input.sourceId, registryObject: SET, name: 'XDSSubmissionSet.sourceId' },
      { id: 'ei5', scheme: XDS.set.patientId, value: input.patientCx, registryObject: SET, name: 'XDSSubmissionSet.patientId' },
    ],
  };
  return {
    submit: {
      extrinsicObjects: [document],
      registryPackages: [set],
      classifications: [{ id: `cl${++n}`, node: XDS.submissionSetNode, classifiedObject: SET, slots: [] }],
      associations: [{ id: 'as1', type: XDS.hasMember, source: SET, target: DOCUMENT, slots: [slot('SubmissionSetStatus', 'Original')] }],
    },
    documents: [{ id: DOCUMENT, content: input.content }],
    documentUniqueId,
    submissionSetUniqueId,
    hash,
    size: input.content.length,
  };
}
