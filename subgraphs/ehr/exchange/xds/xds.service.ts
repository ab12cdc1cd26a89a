import { createHash, randomUUID } from 'node:crypto';
import type { FieldCipher } from '../../../../common/crypto';
import { AppError, notFound } from '../../../../common/errors';
import { Prisma, type XdsDocument as DocumentRow, type XdsSubmissionSet as SetRow, type XdsAssociation as AssociationRow } from '../../db/generated/client';
import type { TenantStore } from '../../db/store';
import type { AccessPolicyService } from '../../policy/access-policy.service';
import type { ConsentService } from '../../consents/consent.service';
import type { EhrMetrics } from '../../metrics';
import {
  adhocQueryResponseXml,
  ASSOCIATION_TYPES,
  codes,
  EbXmlError,
  externalId,
  parseCodedParam,
  parseCx,
  readProvideAndRegister,
  readRegister,
  readRetrieve,
  readStoredQuery,
  registryResponseXml,
  REPLACING,
  retrieveResponseXml,
  slotValue,
  XDS,
  type AssociationObject,
  type Coded,
  type QueryResult,
  type RegistryError,
  type RegistryObject,
  type StoredQueryRequest,
  type SubmitObjects,
} from './ebrim';
import { column, holdsCode, isCode } from './registry-sql';

export interface XdsSettings {
  /** The affinity domain's patient id assigning authority (XDS_ASSIGNING_AUTHORITY). */
  assigningAuthority: string;
  /** This repository's repositoryUniqueId (XDS_REPOSITORY_UNIQUE_ID). */
  repositoryUniqueId: string;
}

/** The stored queries of ITI-18 this registry answers, by query id. */
const STORED_QUERIES = {
  'urn:uuid:14d4debf-8f97-4251-9a74-a90016b0af0d': 'FindDocuments',
  'urn:uuid:f26abbcb-ac74-4422-8a30-edb644bbc1a9': 'FindSubmissionSets',
  'urn:uuid:5c4f972b-d56b-40ac-a5fc-c8ca9b40b9d4': 'GetDocuments',
  'urn:uuid:a7ae438b-4bc2-4642-93e9-be891f7bb155': 'GetAssociations',
  'urn:uuid:e8e3cb2c-e39c-46b9-99e4-c12f57260b83': 'GetSubmissionSetAndContents',
} as const;
type QueryName = (typeof STORED_QUERIES)[keyof typeof STORED_QUERIES];

/** The parameters each stored query takes (ITI TF-2a §3.18.4.1.2.3.7); others are refused rather than ignored. */
const QUERY_PARAMS: Record<QueryName, string[]> = {
  FindDocuments: [
    '$XDSDocumentEntryPatientId',
    '$XDSDocumentEntryStatus',
    '$XDSDocumentEntryClassCode',
    '$XDSDocumentEntryTypeCode',
    '$XDSDocumentEntryPracticeSettingCode',
    '$XDSDocumentEntryHealthcareFacilityTypeCode',
    '$XDSDocumentEntryEventCodeList',
    '$XDSDocumentEntryConfidentialityCode',
    '$XDSDocumentEntryFormatCode',
    '$XDSDocumentEntryCreationTimeFrom',
    '$XDSDocumentEntryCreationTimeTo',
    '$XDSDocumentEntryServiceStartTimeFrom',
    '$XDSDocumentEntryServiceStartTimeTo',
    '$XDSDocumentEntryServiceStopTimeFrom',
    '$XDSDocumentEntryServiceStopTimeTo',
    '$XDSDocumentEntryType',
  ],
  FindSubmissionSets: [
    '$XDSSubmissionSetPatientId',
    '$XDSSubmissionSetStatus',
    '$XDSSubmissionSetSourceId',
    '$XDSSubmissionSetSubmissionTimeFrom',
    '$XDSSubmissionSetSubmissionTimeTo',
    '$XDSSubmissionSetContentType',
  ],
  GetDocuments: ['$XDSDocumentEntryEntryUUID', '$XDSDocumentEntryUniqueId', '$homeCommunityId'],
  GetAssociations: ['$uuid', '$homeCommunityId'],
  GetSubmissionSetAndContents: [
    '$XDSSubmissionSetEntryUUID',
    '$XDSSubmissionSetUniqueId',
    '$XDSDocumentEntryFormatCode',
    '$XDSDocumentEntryConfidentialityCode',
    '$XDSDocumentEntryType',
    '$homeCommunityId',
  ],
};

const DOCUMENTS = Prisma.sql`"ehr"."XdsDocument"`;
const SETS = Prisma.sql`"ehr"."XdsSubmissionSet"`;

/** Most document entries one query answers (XDSTooManyResults beyond). */
const MAX_RESULTS = 1_000;
const UUID = /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const OID = /^[0-2](\.(0|[1-9][0-9]*))+$/;
/** XDS unique ids: an OID, optionally `^extension` (ITI TF-3 §4.2.3.2.26). */
const UNIQUE_ID = /^[0-2](\.(0|[1-9][0-9]*))+(\^[^\s^]{1,16})?$/;
const DTM = /^\d{4}(\d{2}(\d{2}(\d{2}(\d{2}(\d{2})?)?)?)?)?$/;
/** The instant a DTM begins, as 14 digits YYYYMMDDhhmmss (month and day 01, time 00): these compare and sort as the instants do. */
const dtmStart = (dtm: string) => (dtm.length === 4 ? `${dtm}0101` : dtm.length === 6 ? `${dtm}01` : dtm).padEnd(14, '0');

interface Disclosed {
  entityType: 'XdsDocument' | 'XdsSubmissionSet';
  entityId: string;
  patientId: string;
  uniqueId: string;
}

/** A transaction's failure: RegistryErrors for the response (nothing stored). */
class XdsFailure extends Error {
  constructor(readonly errors: RegistryError[]) {
    super(errors.map((e) => `${e.errorCode}: ${e.codeContext}`).join('; '));
  }
}
const fail = (errorCode: string, codeContext: string, location?: string) => new XdsFailure([{ errorCode, codeContext, location }]);

/** The transactions that store a submission: XDS.b's two, and MHD's Provide Document Bundle (a FHIR Bundle read into the same ebRIM objects). */
type Submission = 'ITI-41' | 'ITI-42' | 'ITI-65';

/** A search of the registry's document entries or submission sets (MHD's FHIR views), in SQL on their row `r`. */
export interface RegistryQuery {
  /** The patients searched, each decided on its own (an unknown or hidden one is not searched); null: the tenant. */
  patientIds: string[] | null;
  /** Conditions on `r`, AND-ed. */
  where: Prisma.Sql[];
  /** Sort keys on `r`, the last of which tells every two entries apart. */
  order: Prisma.Sql[];
  offset: number;
  limit: number;
}

/** What a RegistryQuery found: its rows from `offset`, how many match in all, and whose entries were searched (null: the tenant's). */
export interface RegistryPage<Row> {
  rows: Row[];
  total: number;
  searched: Array<string | null>;
}

/** A stored document entry or submission set with its decrypted ebRIM metadata, for the MHD (FHIR) views. */
export interface StoredEntry<Row> {
  row: Row;
  metadata: RegistryObject;
}

interface CheckedSubmission {
  patientId: string;
  /** The stored entryUUID of each submitted object, by the id it was submitted with. */
  ids: Map<string, string>;
  set: RegistryObject;
  documents: Array<{ object: RegistryObject; content?: Buffer }>;
  associations: AssociationObject[];
  /** Documents in the registry this submission replaces (RPLC, XFRM_RPLC). */
  replaces: string[];
}

/**
 * IHE XDS.b over the clinical record: CareGraph as Document Repository and
 * Document Registry of each tenant's affinity domain (ITI-41, ITI-42, ITI-18,
 * ITI-43). Requests and answers are ebXML (ebrim.ts); this service decides,
 * stores and audits. Every transaction, accepted or refused, leaves an
 * audit record naming the transaction, the caller, the patient and the
 * documents; reads also go to the access log. Reading and writing documents
 * is the `document` area of the policy point.
 */
export class XdsService {
  constructor(
    private readonly store: TenantStore,
    private readonly cipher: FieldCipher,
    private readonly policy: AccessPolicyService,
    private readonly consents: ConsentService,
    private readonly settings: XdsSettings,
    private readonly metrics: Pick<EhrMetrics, 'registryRowsRead'>,
  ) {}

  /** ITI-41 Provide and Register Document Set-b: the documents and their metadata; answers rs:RegistryResponse. */
  async provideAndRegister(xml: string): Promise<string> {
    return this.submit('ITI-41', () => {
      const { submit, documents } = readProvideAndRegister(xml);
      return { submit, documents };
    });
  }

  /** ITI-42 Register Document Set-b: metadata of documents a repository holds (this one or another). */
  async register(xml: string): Promise<string> {
    return this.submit('ITI-42', () => ({ submit: readRegister(xml) }));
  }

  /**
   * ITI-65 (MHD Provide Document Bundle): the Bundle read into ebRIM objects by `read`, checked and stored
   * exactly like ITI-41. Answers the stored entryUUID of each submitted id; a refusal is audited and thrown as
   * an AppError whose details carry the XDS error codes.
   */
  async provideObjects(read: () => { submit: SubmitObjects; documents: Array<{ id: string; content: Buffer }> }): Promise<Map<string, string>> {
    let patientId: string | undefined;
    try {
      const request = read();
      const checked = await this.check('ITI-65', request.submit, request.documents);
      patientId = checked.patientId;
      await this.policy.assert('write', 'document', { patientId });
      await this.save('ITI-65', checked);
      return checked.ids;
    } catch (err) {
      const errors = await this.refused('ITI-65', patientId, err);
      // A registry that already holds the uniqueId is a conflict; every other refusal is the request's fault.
      const duplicate = errors.some((e) => ['XDSDuplicateUniqueIdInRegistry', 'XDSNonIdenticalHash'].includes(e.errorCode));
      throw new AppError(
        duplicate ? 'CONFLICT' : 'VALIDATION_ERROR',
        errors.map((e) => `${e.errorCode}: ${e.codeContext}`).join('; '),
        errors.map((e) => ({ path: e.location ?? '(bundle)', message: e.codeContext, xdsErrorCode: e.errorCode })),
      );
    }
  }

  private async submit(transaction: Submission, read: () => { submit: SubmitObjects; documents?: Array<{ id: string; content: Buffer }> }) {
    let patientId: string | undefined;
    try {
      const request = read();
      const checked = await this.check(transaction, request.submit, request.documents);
      patientId = checked.patientId;
      await this.policy.assert('write', 'document', { patientId });
      await this.save(transaction, checked);
      return registryResponseXml([]);
    } catch (err) {
      return registryResponseXml(await this.refused(transaction, patientId, err));
    }
  }

  /** The submission as it will be stored, or the RegistryErrors that refuse it (ITI TF-2b §3.41.4.1.3, §3.42.4.1.3). */
  private async check(transaction: Submission, submit: SubmitObjects, documents?: Array<{ id: string; content: Buffer }>): Promise<CheckedSubmission> {
    const metadataError = transaction === 'ITI-42' ? 'XDSRegistryMetadataError' : 'XDSRepositoryMetadataError';
    const setIds = new Set(
      [...submit.classifications, ...submit.registryPackages.flatMap((p) => p.classifications)]
        .filter((c) => c.node === XDS.submissionSetNode)
        .map((c) => c.classifiedObject),
    );
    const folderIds = [...submit.classifications, ...submit.registryPackages.flatMap((p) => p.classifications)].filter((c) => c.node === XDS.folderNode);
    if (folderIds.length) throw fail('XDSRegistryMetadataError', 'Folders are not supported by this registry');
    const sets = submit.registryPackages.filter((p) => setIds.has(p.id));
    if (sets.length !== 1 || submit.registryPackages.length !== 1)
      throw fail('XDSRegistryMetadataError', 'A submission must hold exactly one RegistryPackage, classified as XDSSubmissionSet');
    const set = { ...sets[0], classifications: [...sets[0].classifications, ...submit.classifications.filter((c) => c.classifiedObject === sets[0].id)] };
    if (submit.extrinsicObjects.length === 0) throw fail('XDSRegistryMetadataError', 'The submission holds no DocumentEntry (ExtrinsicObject)');

    // Symbolic ids (not urn:uuid) get a UUID; every reference follows.
    const ids = new Map<string, string>();
    const assign = (id: string) => {
      if (!id) throw fail('XDSRegistryMetadataError', 'A registry object has no id');
      if (!ids.has(id)) ids.set(id, UUID.test(id) ? id.toLowerCase() : `urn:uuid:${randomUUID()}`);
      return ids.get(id)!;
    };
    const ref = (id: string) => ids.get(id) ?? id;
    for (const o of [set, ...submit.extrinsicObjects]) assign(o.id);
    for (const a of submit.associations) assign(a.id);
    const rewrite = (o: RegistryObject): RegistryObject => ({
      ...o,
      id: ref(o.id),
      classifications: o.classifications.map((c) => ({
        ...c,
        id: UUID.test(c.id) ? c.id : `urn:uuid:${randomUUID()}`,
        classifiedObject: ref(c.classifiedObject),
      })),
      externalIds: o.externalIds.map((e) => ({ ...e, id: UUID.test(e.id) ? e.id : `urn:uuid:${randomUUID()}`, registryObject: ref(e.registryObject) })),
    });

    const setPatient = externalId(set, XDS.set.patientId);
    const setUniqueId = externalId(set, XDS.set.uniqueId);
    const sourceId = externalId(set, XDS.set.sourceId);
    const missing = (what: string, id: string) => fail('XDSRegistryMetadataError', `${what} is missing or invalid`, id);
    if (!setUniqueId || !UNIQUE_ID.test(setUniqueId)) throw missing('XDSSubmissionSet.uniqueId', set.id);
    if (!sourceId || !OID.test(sourceId)) throw missing('XDSSubmissionSet.sourceId', set.id);
    if (!DTM.test(slotValue(set, 'submissionTime') ?? '')) throw missing('XDSSubmissionSet.submissionTime', set.id);
    if (!setPatient) throw missing('XDSSubmissionSet.patientId', set.id);
    const patientId = await this.localPatient(setPatient);

    const byId = new Map((documents ?? []).map((d) => [d.id, d]));
    if (documents && byId.size !== documents.length) throw fail(metadataError, 'Two Documents have the same id');
    const checkedDocuments = submit.extrinsicObjects.map((object) => {
      const uniqueId = externalId(object, XDS.doc.uniqueId);
      if (object.objectType !== XDS.stableDocument) throw fail('XDSRegistryMetadataError', 'Only stable document entries can be submitted', object.id);
      if (!uniqueId || !UNIQUE_ID.test(uniqueId)) throw missing('XDSDocumentEntry.uniqueId', object.id);
      if (!object.mimeType) throw missing('XDSDocumentEntry.mimeType', object.id);
      for (const [name, scheme] of [
        ['classCode', XDS.doc.classCode],
        ['typeCode', XDS.doc.typeCode],
        ['formatCode', XDS.doc.formatCode],
        ['confidentialityCode', XDS.doc.confidentialityCode],
        ['healthcareFacilityTypeCode', XDS.doc.healthcareFacilityTypeCode],
        ['practiceSettingCode', XDS.doc.practiceSettingCode],
      ]) {
        const found = codes(object, scheme);
        if (found.length === 0 || found.some((c) => !c.code || !c.scheme)) throw missing(`XDSDocumentEntry.${name}`, object.id);
      }
      if (!DTM.test(slotValue(object, 'creationTime') ?? '')) throw missing('XDSDocumentEntry.creationTime', object.id);
      if (!slotValue(object, 'languageCode')) throw missing('XDSDocumentEntry.languageCode', object.id);
      if (externalId(object, XDS.doc.patientId) !== setPatient)
        throw fail('XDSPatientIdDoesNotMatch', 'The DocumentEntry.patientId differs from the SubmissionSet.patientId', object.id);

      const slots = object.slots.filter((s) => !['hash', 'size', 'repositoryUniqueId'].includes(s.name));
      if (!documents) {
        // ITI-42: the repository computed these; the registry keeps them.
        const hash = slotValue(object, 'hash');
        const size = slotValue(object, 'size');
        if (!hash || !/^[0-9a-fA-F]{40}$/.test(hash) || !size || !/^\d+$/.test(size) || !OID.test(slotValue(object, 'repositoryUniqueId') ?? ''))
          throw fail('XDSRegistryMetadataError', 'Register Document Set-b needs the hash, size and repositoryUniqueId slots', object.id);
        return { object: rewrite({ ...object, status: XDS.status.approved }) };
      }
      const document = byId.get(object.id);
      if (!document) throw fail('XDSMissingDocument', `DocumentEntry '${object.id}' has no Document`, object.id);
      byId.delete(object.id);
      const hash = createHash('sha1').update(document.content).digest('hex');
      const given = { hash: slotValue(object, 'hash'), size: slotValue(object, 'size') };
      if (given.hash !== undefined && given.hash.toLowerCase() !== hash)
        throw fail('XDSRepositoryMetadataError', 'The hash slot does not match the document', object.id);
      if (given.size !== undefined && given.size !== String(document.content.length))
        throw fail('XDSRepositoryMetadataError', 'The size slot does not match the document', object.id);
      const computed = [
        { name: 'hash', values: [hash] },
        { name: 'size', values: [String(document.content.length)] },
        { name: 'repositoryUniqueId', values: [this.settings.repositoryUniqueId] },
      ];
      return { object: rewrite({ ...object, status: XDS.status.approved, slots: [...slots, ...computed] }), content: document.content };
    });
    if (byId.size) throw fail('XDSMissingDocumentMetadata', `Document '${[...byId.keys()][0]}' has no DocumentEntry`, [...byId.keys()][0]);

    const documentIds = new Set(checkedDocuments.map((d) => d.object.id));
    const uniqueIds = checkedDocuments.map((d) => externalId(d.object, XDS.doc.uniqueId)!);
    if (new Set(uniqueIds).size !== uniqueIds.length) throw fail('XDSRegistryDuplicateUniqueIdInMessage', 'Two DocumentEntries have the same uniqueId');

    const associations = submit.associations.map((a) => ({ ...a, id: ref(a.id), source: ref(a.source), target: ref(a.target) }));
    const replaces: string[] = [];
    for (const a of associations) {
      if (!ASSOCIATION_TYPES.includes(a.type)) throw fail('XDSRegistryMetadataError', `Association type '${a.type}' is not supported`, a.id);
      if (a.type === XDS.hasMember) {
        if (a.source !== ref(set.id) || !documentIds.has(a.target))
          throw fail('XDSRegistryMetadataError', 'HasMember must link the submission set to a DocumentEntry of this submission', a.id);
        if (slotValue(a, 'SubmissionSetStatus') !== 'Original')
          throw fail('XDSRegistryMetadataError', 'HasMember needs SubmissionSetStatus Original (references to registry documents are not supported)', a.id);
      } else {
        if (!documentIds.has(a.source))
          throw fail('XDSRegistryMetadataError', 'A document relationship must start at a DocumentEntry of this submission', a.id);
        if (REPLACING.includes(a.type)) replaces.push(a.target);
      }
    }
    const members = new Set(associations.filter((a) => a.type === XDS.hasMember).map((a) => a.target));
    for (const id of documentIds)
      if (!members.has(id)) throw fail('XDSRegistryMetadataError', 'Every DocumentEntry must be a member of the submission set', id);
    return { patientId, ids, set: rewrite(set), documents: checkedDocuments, associations, replaces };
  }

  /** The clinical record's patient an affinity-domain patient id names, or XDSUnknownPatientId. */
  private async localPatient(cx: string): Promise<string> {
    const parsed = parseCx(cx);
    if (!parsed || parsed.authority !== this.settings.assigningAuthority)
      throw fail('XDSUnknownPatientId', `'${cx}' is not a patient id of this affinity domain (assigning authority ${this.settings.assigningAuthority})`);
    const patient = await this.store.read((tx) => tx.patient.findFirst({ where: { id: parsed.id, deletedAt: null }, select: { id: true } }));
    if (!patient) throw fail('XDSUnknownPatientId', `Patient '${cx}' is not known to this registry`);
    return patient.id;
  }

  private async save(transaction: Submission, s: CheckedSubmission): Promise<void> {
    const tenantId = this.store.tenantId;
    const by = this.store.identity.sub;
    const setUniqueId = externalId(s.set, XDS.set.uniqueId)!;
    await this.store.change(`IHE ${transaction}`, async (tx, audit) => {
      const uniqueIds = s.documents.map((d) => externalId(d.object, XDS.doc.uniqueId)!);
      const existing = await tx.xdsDocument.findMany({ where: { uniqueId: { in: uniqueIds } }, select: { uniqueId: true, hash: true } });
      for (const row of existing) {
        const incoming = s.documents.find((d) => externalId(d.object, XDS.doc.uniqueId) === row.uniqueId)!;
        const same = slotValue(incoming.object, 'hash')?.toLowerCase() === row.hash;
        throw fail(
          same ? 'XDSDuplicateUniqueIdInRegistry' : 'XDSNonIdenticalHash',
          `Document uniqueId '${row.uniqueId}' is already registered`,
          incoming.object.id,
        );
      }
      if (await tx.xdsSubmissionSet.findFirst({ where: { uniqueId: setUniqueId } }))
        throw fail('XDSDuplicateUniqueIdInRegistry', `Submission set uniqueId '${setUniqueId}' is already registered`, s.set.id);
      for (const target of s.replaces) {
        const replaced = await tx.xdsDocument.updateMany({
          where: { id: target, patientId: s.patientId, status: XDS.status.approved },
          data: { status: XDS.status.deprecated },
        });
        if (replaced.count !== 1)
          throw fail('XDSRegistryMetadataError', `The replaced document '${target}' is not an approved document of this patient`, target);
        await audit.record({
          action: 'update',
          entityType: 'XdsDocument',
          entityId: target,
          after: { transaction, patientId: s.patientId, status: XDS.status.deprecated },
        });
      }
      await tx.xdsSubmissionSet.create({
        data: {
          tenantId,
          id: s.set.id,
          uniqueId: setUniqueId,
          sourceId: externalId(s.set, XDS.set.sourceId)!,
          patientId: s.patientId,
          submissionTime: slotValue(s.set, 'submissionTime')!,
          submissionInstant: dtmStart(slotValue(s.set, 'submissionTime')!),
          ...(codes(s.set, XDS.set.contentTypeCode).length ? { contentTypeCode: { ...codes(s.set, XDS.set.contentTypeCode)[0] } } : {}),
          metadataEnc: this.cipher.encrypt(JSON.stringify({ ...s.set, status: XDS.status.approved })),
          transaction,
          createdBy: by,
        },
      });
      await audit.record({
        action: 'create',
        entityType: 'XdsSubmissionSet',
        entityId: s.set.id,
        after: { transaction, patientId: s.patientId, uniqueId: setUniqueId, documents: uniqueIds },
      });
      for (const { object, content } of s.documents) {
        const row = {
          tenantId,
          id: object.id,
          uniqueId: externalId(object, XDS.doc.uniqueId)!,
          patientId: s.patientId,
          submissionSetId: s.set.id,
          status: XDS.status.approved,
          objectType: object.objectType!,
          mimeType: object.mimeType!,
          hash: slotValue(object, 'hash')!.toLowerCase(),
          size: Number(slotValue(object, 'size')),
          repositoryUniqueId: slotValue(object, 'repositoryUniqueId')!,
          creationTime: slotValue(object, 'creationTime') ?? null,
          serviceStartTime: slotValue(object, 'serviceStartTime') ?? null,
          serviceStopTime: slotValue(object, 'serviceStopTime') ?? null,
          classCode: codes(object, XDS.doc.classCode)[0] as object,
          typeCode: codes(object, XDS.doc.typeCode)[0] as object,
          formatCode: codes(object, XDS.doc.formatCode)[0] as object,
          confidentialityCodes: codes(object, XDS.doc.confidentialityCode) as object[],
          healthcareFacilityTypeCode: codes(object, XDS.doc.healthcareFacilityTypeCode)[0] as object,
          practiceSettingCode: codes(object, XDS.doc.practiceSettingCode)[0] as object,
          eventCodes: codes(object, XDS.doc.eventCodeList) as object[],
          metadataEnc: this.cipher.encrypt(JSON.stringify(object)),
          contentEnc: content ? this.cipher.encryptBytes(content) : null,
          createdBy: by,
        };
        await tx.xdsDocument.create({ data: row });
        await audit.record({
          action: 'create',
          entityType: 'XdsDocument',
          entityId: object.id,
          after: { transaction, patientId: s.patientId, uniqueId: row.uniqueId, submissionSet: setUniqueId, hash: row.hash, size: row.size, stored: !!content },
        });
      }
      for (const a of s.associations) {
        await tx.xdsAssociation.create({
          data: {
            tenantId,
            id: a.id,
            associationType: a.type,
            sourceId: a.source,
            targetId: a.target,
            submissionSetStatus: slotValue(a, 'SubmissionSetStatus') ?? null,
            submissionSetId: s.set.id,
            patientId: s.patientId,
          },
        });
      }
    });
  }

  /**
   * A refused transaction's audit record (who tried what for which patient, and why), then its
   * RegistryErrors; a refusal of the policy point (403) is audited too and becomes a SOAP fault.
   */
  private async refused(transaction: string, patientId: string | undefined, err: unknown): Promise<RegistryError[]> {
    const errors =
      err instanceof XdsFailure
        ? err.errors
        : err instanceof EbXmlError
          ? [{ errorCode: err.errorCode, codeContext: err.message }]
          : err instanceof AppError
            ? [{ errorCode: err.code, codeContext: err.message }]
            : null;
    if (!errors) throw err;
    await this.store.change(`IHE ${transaction}`, (_tx, audit) =>
      audit.record({
        action: 'refuse',
        entityType: 'XdsTransaction',
        entityId: randomUUID(),
        after: { transaction, patientId: patientId ?? null, errors: errors.map((e) => e.errorCode) },
      }),
    );
    if (err instanceof AppError) throw err;
    return errors;
  }

  /** ITI-18 Registry Stored Query; answers query:AdhocQueryResponse. */
  async storedQuery(xml: string): Promise<string> {
    let request: StoredQueryRequest | undefined;
    let patientId: string | undefined;
    try {
      request = readStoredQuery(xml);
      const name = STORED_QUERIES[request.queryId as keyof typeof STORED_QUERIES];
      if (!name) throw fail('XDSUnknownStoredQuery', `Stored query '${request.queryId}' is not supported`);
      for (const param of request.params.keys())
        if (!QUERY_PARAMS[name].includes(param)) throw fail('XDSRegistryError', `Parameter ${param} is not supported by ${name}`);
      const result = await this.runQuery(name, new QueryParams(request.params));
      patientId = result.patientId;
      if (result.documents.length > MAX_RESULTS) throw fail('XDSTooManyResults', `More than ${MAX_RESULTS} document entries match`);
      const { answer, disclosed } = await this.answer(result);
      await this.auditRead('ITI-18', name, result.patientId, disclosed);
      return adhocQueryResponseXml(answer, request.returnType, []);
    } catch (err) {
      return adhocQueryResponseXml(null, request?.returnType ?? 'ObjectRef', await this.refused('ITI-18', patientId, err));
    }
  }

  private async runQuery(
    name: QueryName,
    p: QueryParams,
  ): Promise<{ patientId?: string; documents: DocumentRow[]; sets: SetRow[]; associations: AssociationRow[] }> {
    switch (name) {
      case 'FindDocuments': {
        const patientId = await this.queryPatient(p.one('$XDSDocumentEntryPatientId'));
        const statuses = p.required('$XDSDocumentEntryStatus');
        const where = [Prisma.sql`r."patientId" = ${patientId}`, Prisma.sql`r.status = ANY(${statuses}::text[])`, ...documentConditions(p)];
        // One entry more than an answer may hold is enough to refuse it (XDSTooManyResults).
        const documents = await this.storedQueryRows<DocumentRow>(DOCUMENTS, where, Prisma.sql`r."createdAt" ASC`, MAX_RESULTS + 1);
        return { patientId, documents, sets: [], associations: [] };
      }
      case 'FindSubmissionSets': {
        const patientId = await this.queryPatient(p.one('$XDSSubmissionSetPatientId'));
        // Submission sets are always Approved here.
        if (!p.required('$XDSSubmissionSetStatus').includes(XDS.status.approved)) return { patientId, documents: [], sets: [], associations: [] };
        const sets = await this.storedQueryRows<SetRow>(SETS, [Prisma.sql`r."patientId" = ${patientId}`, ...setConditions(p)], Prisma.sql`r."createdAt" ASC`);
        return { patientId, documents: [], sets, associations: [] };
      }
      case 'GetDocuments': {
        const uuids = p.any('$XDSDocumentEntryEntryUUID');
        const uniqueIds = p.any('$XDSDocumentEntryUniqueId');
        if (!uuids === !uniqueIds) throw fail('XDSStoredQueryParamNumber', 'GetDocuments takes either $XDSDocumentEntryEntryUUID or $XDSDocumentEntryUniqueId');
        const documents = await this.store.read((tx) =>
          tx.xdsDocument.findMany({ where: uuids ? { id: { in: uuids.map((u) => u.toLowerCase()) } } : { uniqueId: { in: uniqueIds! } } }),
        );
        this.metrics.registryRowsRead(documents.length);
        return { documents, sets: [], associations: [] };
      }
      case 'GetAssociations': {
        const uuids = p.required('$uuid').map((u) => u.toLowerCase());
        const associations = await this.store.read((tx) =>
          tx.xdsAssociation.findMany({ where: { OR: [{ sourceId: { in: uuids } }, { targetId: { in: uuids } }] } }),
        );
        return { documents: [], sets: [], associations };
      }
      case 'GetSubmissionSetAndContents': {
        const uuid = p.optional('$XDSSubmissionSetEntryUUID');
        const uniqueId = p.optional('$XDSSubmissionSetUniqueId');
        if (!uuid === !uniqueId)
          throw fail('XDSStoredQueryParamNumber', 'GetSubmissionSetAndContents takes either $XDSSubmissionSetEntryUUID or $XDSSubmissionSetUniqueId');
        const set = await this.store.read((tx) => tx.xdsSubmissionSet.findFirst({ where: uuid ? { id: uuid.toLowerCase() } : { uniqueId: uniqueId! } }));
        if (!set) return { documents: [], sets: [], associations: [] };
        this.metrics.registryRowsRead(1);
        const members = await this.store.read((tx) => tx.xdsAssociation.findMany({ where: { sourceId: set.id, associationType: XDS.hasMember } }));
        const documents = await this.storedQueryRows<DocumentRow>(DOCUMENTS, [
          Prisma.sql`r.id = ANY(${members.map((m) => m.targetId)}::text[])`,
          ...documentConditions(p),
        ]);
        const ids = new Set(documents.map((d) => d.id));
        return { patientId: set.patientId, documents, sets: [set], associations: members.filter((m) => ids.has(m.targetId)) };
      }
    }
  }

  /** The tenant's rows of `table` (as `r`) meeting every condition, in `order` (without one, as the database finds them), at most `limit`: counted as read. */
  private async storedQueryRows<Row>(table: Prisma.Sql, where: Prisma.Sql[], order?: Prisma.Sql, limit?: number): Promise<Row[]> {
    const conditions = Prisma.join([Prisma.sql`r."tenantId" = ${this.store.tenantId}`, ...where], ' AND ');
    const tail = Prisma.sql`${order ? Prisma.sql` ORDER BY ${order}` : Prisma.empty}${limit ? Prisma.sql` LIMIT ${limit}` : Prisma.empty}`;
    const rows = await this.store.read((tx) => tx.$queryRaw<Row[]>(Prisma.sql`SELECT r.* FROM ${table} r WHERE ${conditions}${tail}`));
    this.metrics.registryRowsRead(rows.length);
    return rows;
  }

  /** A query's patient: known in this tenant's affinity domain, and one whose documents the caller may read. */
  private async queryPatient(cx: string): Promise<string> {
    const patientId = await this.localPatient(cx);
    const decision = await this.policy.decide('read', 'document', { patientId, consents: await this.consents.effective(patientId) });
    // A record the policy hides from the caller (another patient's, for a patient) is answered as unknown.
    if (decision.hide) throw fail('XDSUnknownPatientId', `Patient '${cx}' is not known to this registry`);
    await this.policy.assert('read', 'document', { patientId, consents: await this.consents.effective(patientId) });
    return patientId;
  }

  /** The result as ebRIM objects, without what the caller may not read (answered as if it did not exist). */
  private async answer(result: {
    documents: DocumentRow[];
    sets: SetRow[];
    associations: AssociationRow[];
  }): Promise<{ answer: QueryResult; disclosed: Disclosed[] }> {
    const readable = await this.readablePatients([...result.documents, ...result.sets, ...result.associations].map((r) => r.patientId));
    const documents = result.documents.filter((d) => readable.has(d.patientId));
    const sets = result.sets.filter((s) => readable.has(s.patientId));
    const disclosed: Disclosed[] = [
      ...documents.map((d) => ({ entityType: 'XdsDocument' as const, entityId: d.id, patientId: d.patientId, uniqueId: d.uniqueId })),
      ...sets.map((s) => ({ entityType: 'XdsSubmissionSet' as const, entityId: s.id, patientId: s.patientId, uniqueId: s.uniqueId })),
    ];
    const answer = {
      documents: documents.map((d) => ({ ...(JSON.parse(this.cipher.decrypt(d.metadataEnc)) as RegistryObject), status: d.status })),
      submissionSets: sets.map((s) => JSON.parse(this.cipher.decrypt(s.metadataEnc)) as RegistryObject),
      associations: result.associations
        .filter((a) => readable.has(a.patientId))
        .map((a) => ({
          id: a.id,
          type: a.associationType,
          source: a.sourceId,
          target: a.targetId,
          status: XDS.status.approved,
          slots: a.submissionSetStatus ? [{ name: 'SubmissionSetStatus', values: [a.submissionSetStatus] }] : [],
        })),
    };
    return { answer, disclosed };
  }

  private async readablePatients(patientIds: string[]): Promise<Set<string>> {
    const unique = [...new Set(patientIds)];
    const decisions = await Promise.all(
      unique.map(async (patientId) => this.policy.decide('read', 'document', { patientId, consents: await this.consents.effective(patientId) })),
    );
    return new Set(unique.filter((_, i) => decisions[i].allowed));
  }

  /** A read's audit record (transaction, caller, patient, documents) and the access log entries of what it disclosed. */
  private async auditRead(transaction: string, query: string, patientId: string | undefined, disclosed: Disclosed[]): Promise<void> {
    await this.store.change(`IHE ${transaction}`, async (tx, audit) => {
      await audit.record({
        action: 'read',
        entityType: 'XdsTransaction',
        entityId: randomUUID(),
        after: {
          transaction,
          query,
          patientId: patientId ?? null,
          documents: disclosed.filter((d) => d.entityType === 'XdsDocument').map((d) => d.uniqueId),
          submissionSets: disclosed.filter((d) => d.entityType === 'XdsSubmissionSet').map((d) => d.uniqueId),
        },
      });
      await this.store.logAccess(
        tx,
        disclosed.map(({ entityType, entityId, patientId }) => ({ entityType, entityId, patientId, action: 'read' as const })),
      );
    });
  }

  // ---- MHD's FHIR views of the same registry (ITI-66, ITI-67, ITI-68) ----

  /** Whether the registry holds a document entry of any of these patients (null: of the tenant's), readable or not; nothing is decrypted or disclosed. */
  async hasDocumentEntries(patientIds: string[] | null): Promise<boolean> {
    const row = await this.store.read((tx) => tx.xdsDocument.findFirst({ where: patientIds ? { patientId: { in: patientIds } } : {}, select: { id: true } }));
    return row !== null;
  }

  /**
   * The audit record of an ITI-67 search that found no document entry (a DocumentReference search answered from
   * the clinical index when the registry has none of the patients'), as discloseDocumentEntries writes it for one.
   */
  async auditSearchWithoutEntries(patientIds: string[] | null): Promise<void> {
    for (const patientId of patientIds ?? [null]) {
      if (patientId && !(await this.searchablePatient(patientId))) continue;
      await this.auditRead('ITI-67', 'DocumentReference', patientId ?? undefined, []);
    }
  }

  /**
   * A page of the document entries (ITI-67) a search selects, as their clear columns: only what the caller may read;
   * an unknown or hidden patient is not searched (a FHIR search finds nothing rather than failing). The database
   * matches, counts and pages: only the page's rows are read. Nothing is decrypted, audited or logged: the search
   * discloses its page (discloseDocumentEntries) once it is merged with what else it found.
   */
  async documentEntryPage(query: RegistryQuery): Promise<RegistryPage<DocumentRow>> {
    return this.registryPage(DOCUMENTS, query);
  }

  /** A page of the submission sets (ITI-66), as documentEntryPage finds document entries. */
  async submissionSetPage(query: RegistryQuery): Promise<RegistryPage<SetRow>> {
    return this.registryPage(SETS, query);
  }

  private async registryPage<Row>(table: Prisma.Sql, query: RegistryQuery): Promise<RegistryPage<Row>> {
    const searched: Array<string | null> = [];
    for (const patientId of query.patientIds ?? [null]) if (!patientId || (await this.searchablePatient(patientId))) searched.push(patientId);
    if (searched.length === 0) return { rows: [], total: 0, searched };
    const selected = [Prisma.sql`r."tenantId" = ${this.store.tenantId}`, ...query.where];
    // One patient as `=`: the planner walks the (tenantId, patientId, createdAt) index in order then, not so with `= ANY`.
    const readable = !query.patientIds
      ? await this.readableInTenant(table, selected)
      : searched.length === 1
        ? Prisma.sql`r."patientId" = ${searched[0]}`
        : Prisma.sql`r."patientId" = ANY(${searched}::text[])`;
    const where = Prisma.join([...selected, readable], ' AND ');
    const [rows, [{ total }]] = await this.store.read((tx) =>
      Promise.all([
        query.limit > 0
          ? tx.$queryRaw<Row[]>`SELECT r.* FROM ${table} r WHERE ${where} ORDER BY ${Prisma.join(query.order)} LIMIT ${query.limit} OFFSET ${query.offset}`
          : Promise.resolve([]),
        tx.$queryRaw<Array<{ total: number }>>`SELECT count(*)::int AS total FROM ${table} r WHERE ${where}`,
      ]),
    );
    this.metrics.registryRowsRead(rows.length);
    return { rows, total, searched };
  }

  /** The condition on `r` that keeps a tenant-wide search to the patients whose entries the caller may read. */
  private async readableInTenant(table: Prisma.Sql, selected: Prisma.Sql[]): Promise<Prisma.Sql> {
    if ((await this.policy.decide('read', 'document')).allowed) {
      // Allowed tenant-wide, a caller reads every patient's documents alike but a restricted patient's (rules.ts): only those are decided.
      const restricted = await this.policy.restrictedPatientIds();
      const readable = await this.readablePatients(restricted);
      const unreadable = restricted.filter((patientId) => !readable.has(patientId));
      return unreadable.length ? Prisma.sql`NOT (r."patientId" = ANY(${unreadable}::text[]))` : Prisma.sql`TRUE`;
    }
    // Otherwise (consent, own record) each patient is decided: those with entries the search selects.
    const patients = await this.store.read(
      (tx) => tx.$queryRaw<Array<{ patientId: string }>>`SELECT DISTINCT r."patientId" FROM ${table} r WHERE ${Prisma.join(selected, ' AND ')}`,
    );
    const readable = await this.readablePatients(patients.map((p) => p.patientId));
    return Prisma.sql`r."patientId" = ANY(${[...readable]}::text[])`;
  }

  /** Document entries disclosed by `transaction` (about `patientId`, the patient searched, if any): audited, access-logged and decrypted. */
  async discloseDocumentEntries(transaction: string, patientId: string | null, rows: DocumentRow[]): Promise<Array<StoredEntry<DocumentRow>>> {
    await this.auditRead(
      transaction,
      'DocumentReference',
      patientId ?? undefined,
      rows.map((d) => ({ entityType: 'XdsDocument', entityId: d.id, patientId: d.patientId, uniqueId: d.uniqueId })),
    );
    return rows.map((row) => ({ row, metadata: { ...(JSON.parse(this.cipher.decrypt(row.metadataEnc)) as RegistryObject), status: row.status } }));
  }

  /** Submission sets disclosed as discloseDocumentEntries discloses document entries, with their member entries' entryUUIDs. */
  async discloseSubmissionSets(transaction: string, patientId: string | null, rows: SetRow[]): Promise<Array<StoredEntry<SetRow> & { members: string[] }>> {
    const members = await this.store.read((tx) =>
      tx.xdsAssociation.findMany({ where: { sourceId: { in: rows.map((s) => s.id) }, associationType: XDS.hasMember }, orderBy: { targetId: 'asc' } }),
    );
    await this.auditRead(
      transaction,
      'List',
      patientId ?? undefined,
      rows.map((s) => ({ entityType: 'XdsSubmissionSet', entityId: s.id, patientId: s.patientId, uniqueId: s.uniqueId })),
    );
    return rows.map((row) => ({
      row,
      metadata: JSON.parse(this.cipher.decrypt(row.metadataEnc)) as RegistryObject,
      members: members.filter((m) => m.sourceId === row.id).map((m) => m.targetId),
    }));
  }

  /** ITI-68 Retrieve Document: a stored document's bytes by entryUUID; another tenant's, an unreadable and a registered-only one are NOT_FOUND. */
  async documentContent(entryUuid: string): Promise<{ row: DocumentRow; content: Buffer }> {
    const row = await this.store.read((tx) => tx.xdsDocument.findFirst({ where: { id: entryUuid } }));
    const readable = row && row.contentEnc && (await this.readablePatients([row.patientId])).has(row.patientId);
    await this.store.change('IHE ITI-68', async (tx, audit) => {
      await audit.record({
        action: readable ? 'read' : 'refuse',
        entityType: 'XdsTransaction',
        entityId: randomUUID(),
        after: readable ? { transaction: 'ITI-68', patientId: row.patientId, documents: [row.uniqueId] } : { transaction: 'ITI-68', errors: ['NOT_FOUND'] },
      });
      if (readable) await this.store.logAccess(tx, [{ entityType: 'XdsDocument', entityId: row.id, patientId: row.patientId, action: 'read' }]);
    });
    if (!readable) throw notFound('Binary', entryUuid);
    return { row, content: this.cipher.decryptBytes(row.contentEnc!) };
  }

  /** Whether a FHIR search may look at this patient's documents: unknown and hidden are not searched; a forbidden one is a 403. */
  private async searchablePatient(patientId: string): Promise<boolean> {
    const patient = await this.store.read((tx) => tx.patient.findFirst({ where: { id: patientId, deletedAt: null }, select: { id: true } }));
    if (!patient) return false;
    const context = { patientId, consents: await this.consents.effective(patientId) };
    if ((await this.policy.decide('read', 'document', context)).hide) return false;
    await this.policy.assert('read', 'document', context);
    return true;
  }

  /** ITI-43 Retrieve Document Set; answers xdsb:RetrieveDocumentSetResponse with the documents inline. */
  async retrieve(xml: string): Promise<string> {
    let requests: ReturnType<typeof readRetrieve>;
    try {
      requests = readRetrieve(xml);
    } catch (err) {
      return retrieveResponseXml([], await this.refused('ITI-43', undefined, err));
    }
    const errors: RegistryError[] = [];
    const ours = requests.filter((r) => {
      if (r.repositoryUniqueId === this.settings.repositoryUniqueId) return true;
      errors.push({
        errorCode: 'XDSUnknownRepositoryId',
        codeContext: `Repository '${r.repositoryUniqueId}' is not this repository`,
        location: r.documentUniqueId,
      });
      return false;
    });
    const rows = await this.store.read((tx) =>
      tx.xdsDocument.findMany({ where: { uniqueId: { in: ours.map((r) => r.documentUniqueId) }, repositoryUniqueId: this.settings.repositoryUniqueId } }),
    );
    const readable = await this.readablePatients(rows.map((r) => r.patientId));
    const found: DocumentRow[] = [];
    for (const r of ours) {
      const row = rows.find((d) => d.uniqueId === r.documentUniqueId);
      // Another tenant's document, one the caller may not read and an unknown one look alike.
      if (!row || !row.contentEnc || !readable.has(row.patientId))
        errors.push({
          errorCode: 'XDSDocumentUniqueIdError',
          codeContext: `Document '${r.documentUniqueId}' is not in this repository`,
          location: r.documentUniqueId,
        });
      else found.push(row);
    }
    await this.store.change('IHE ITI-43', async (tx, audit) => {
      await audit.record({
        action: found.length ? 'read' : 'refuse',
        entityType: 'XdsTransaction',
        entityId: randomUUID(),
        after: {
          transaction: 'ITI-43',
          patientIds: [...new Set(found.map((d) => d.patientId))],
          documents: found.map((d) => d.uniqueId),
          ...(errors.length ? { errors: errors.map((e) => e.errorCode) } : {}),
        },
      });
      await this.store.logAccess(
        tx,
        found.map((d) => ({ entityType: 'XdsDocument', entityId: d.id, patientId: d.patientId, action: 'read' as const })),
      );
    });
    return retrieveResponseXml(
      found.map((d) => ({
        repositoryUniqueId: d.repositoryUniqueId,
        documentUniqueId: d.uniqueId,
        mimeType: d.mimeType,
        content: this.cipher.decryptBytes(d.contentEnc!),
      })),
      errors,
    );
  }
}

/** A stored query's parameters (ebRS: values of one Value element are ORed, several Value elements of a code parameter ANDed). */
class QueryParams {
  constructor(private readonly params: Map<string, string[][]>) {}

  any(name: string): string[] | undefined {
    const values = this.params.get(name);
    return values ? values.flat() : undefined;
  }

  required(name: string): string[] {
    const values = this.any(name);
    if (!values || values.length === 0) throw fail('XDSStoredQueryParamNumber', `${name} is required`);
    return values;
  }

  one(name: string): string {
    const values = this.required(name);
    if (values.length !== 1) throw fail('XDSStoredQueryParamNumber', `${name} takes one value`);
    return values[0];
  }

  optional(name: string): string | undefined {
    const values = this.any(name);
    if (values && values.length > 1) throw fail('XDSStoredQueryParamNumber', `${name} takes one value`);
    return values?.[0];
  }

  /** A coded parameter as AND of ORs of `code^^scheme`. */
  codes(name: string): Coded[][] {
    return (this.params.get(name) ?? []).map((alternatives) => alternatives.map(parseCodedParam));
  }
}

/** A coded parameter on a coded column of `r`: an AND of ORs of `code^^scheme`, a code without a scheme matching it in any scheme. */
const codedParam = (p: QueryParams, name: string, codedColumn: string, list = false) =>
  p.codes(name).map((alternatives) => holdsCode(codedColumn, list, (e) => alternatives.map((c) => isCode(e, c.code, c.scheme ? [c.scheme] : undefined))));

/**
 * A DTM range on a column of `r`: from inclusive, to exclusive (ITI TF-2a §3.18.4.1.2.3.6), the value and a bound compared
 * on the shorter precision of the two (both cut to it, then compared as the digit strings they are); a row without the
 * time is in no range.
 */
function timeRange(name: string, from: string | undefined, to: string | undefined): Prisma.Sql[] {
  if (!from && !to) return [];
  const value = column(name);
  const compare = (bound: string, operator: '>=' | '<') =>
    Prisma.sql`left(${value}, ${bound.length}::int) COLLATE "C" ${Prisma.raw(operator)} left(${bound}::text, length(${value})) COLLATE "C"`;
  return [Prisma.sql`${value} <> ''`, ...(from ? [compare(from, '>=')] : []), ...(to ? [compare(to, '<')] : [])];
}

/** What FindDocuments and GetSubmissionSetAndContents ask of a document entry `r` besides its patient, status or set. */
function documentConditions(p: QueryParams): Prisma.Sql[] {
  const types = p.any('$XDSDocumentEntryType');
  return [
    ...codedParam(p, '$XDSDocumentEntryClassCode', 'classCode'),
    ...codedParam(p, '$XDSDocumentEntryTypeCode', 'typeCode'),
    ...codedParam(p, '$XDSDocumentEntryPracticeSettingCode', 'practiceSettingCode'),
    ...codedParam(p, '$XDSDocumentEntryHealthcareFacilityTypeCode', 'healthcareFacilityTypeCode'),
    ...codedParam(p, '$XDSDocumentEntryEventCodeList', 'eventCodes', true),
    ...codedParam(p, '$XDSDocumentEntryConfidentialityCode', 'confidentialityCodes', true),
    ...codedParam(p, '$XDSDocumentEntryFormatCode', 'formatCode'),
    ...timeRange('creationTime', p.optional('$XDSDocumentEntryCreationTimeFrom'), p.optional('$XDSDocumentEntryCreationTimeTo')),
    ...timeRange('serviceStartTime', p.optional('$XDSDocumentEntryServiceStartTimeFrom'), p.optional('$XDSDocumentEntryServiceStartTimeTo')),
    ...timeRange('serviceStopTime', p.optional('$XDSDocumentEntryServiceStopTimeFrom'), p.optional('$XDSDocumentEntryServiceStopTimeTo')),
    ...(types ? [Prisma.sql`r."objectType" = ANY(${types}::text[])`] : []),
  ];
}

/** What FindSubmissionSets asks of a submission set `r` besides its patient. */
function setConditions(p: QueryParams): Prisma.Sql[] {
  const sourceIds = p.any('$XDSSubmissionSetSourceId');
  return [
    ...(sourceIds ? [Prisma.sql`r."sourceId" = ANY(${sourceIds}::text[])`] : []),
    ...timeRange('submissionTime', p.optional('$XDSSubmissionSetSubmissionTimeFrom'), p.optional('$XDSSubmissionSetSubmissionTimeTo')),
    ...codedParam(p, '$XDSSubmissionSetContentType', 'contentTypeCode'),
  ];
}
