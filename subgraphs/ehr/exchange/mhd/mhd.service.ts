import { notFound } from '../../../../common/errors';
import type { FhirResource } from '../fhir/mapping';
import type { XdsSubmissionSet as SetRow } from '../../db/generated/client';
import type { XdsService, XdsSettings } from '../xds/xds.service';
import { binary, documentReference, entryUuid, fhirId, readProvideBundle, submissionSetList } from './mhd.mapping';

/**
 * IHE MHD (R4) as Document Recipient and Responder over the XDS registry and
 * repository: ITI-65 stores through the XDS service (same checks, tables,
 * policy and audit as ITI-41), and the FHIR facade reads the same entries as
 * DocumentReference (ITI-67), List (ITI-66) and Binary (ITI-68). The FHIR
 * views come through FhirService, so search, paging and includes are its.
 */
export class MhdService {
  constructor(
    private readonly xds: XdsService,
    private readonly settings: XdsSettings,
  ) {}

  /** ITI-65 Provide Document Bundle: a transaction Bundle in, a transaction-response Bundle (URLs relative to the service base) out; all or nothing. */
  async provide(bundle: Record<string, unknown>): Promise<FhirResource> {
    let entries: ReturnType<typeof readProvideBundle>['entries'] = [];
    const ids = await this.xds.provideObjects(() => {
      const read = readProvideBundle(bundle, this.settings.assigningAuthority);
      entries = read.entries;
      return read;
    });
    const now = new Date().toISOString();
    return {
      resourceType: 'Bundle',
      type: 'transaction-response',
      entry: entries.map((e) => {
        const path = `${e.resourceType}/${fhirId(ids.get(e.submittedId)!)}`;
        return { fullUrl: path, response: { status: '201 Created', location: `${path}/_history/1`, etag: 'W/"1"', lastModified: now } };
      }),
    };
  }

  /** ITI-67: the registry's DocumentReferences of a patient (or the tenant), by FHIR id when ids are given. */
  async documentReferences(patientId: string | null, ids?: string[]): Promise<FhirResource[]> {
    const uuids = ids?.map(entryUuid).filter((u): u is string => !!u);
    if (uuids && uuids.length === 0) return [];
    return (await this.xds.documentEntries('ITI-67', { patientId, ids: uuids })).map(documentReference);
  }

  /** Whether the registry has DocumentReferences of any of these patients (null: of the tenant), without reading them. */
  async hasDocumentReferences(patientIds: string[] | null): Promise<boolean> {
    return this.xds.hasDocumentEntries(patientIds);
  }

  /** Records an ITI-67 search that the registry had nothing for (the search was answered from the clinical record alone). */
  async auditSearchWithoutDocuments(patientIds: string[] | null): Promise<void> {
    await this.xds.auditSearchWithoutEntries(patientIds);
  }

  /**
   * ITI-66 candidates: the registry's submission sets of a patient (or the tenant), by FHIR id when ids are given,
   * each with the List its clear columns make (no title, no members: those need its metadata decrypted), for a
   * search to match, sort and page before anything is disclosed. Null for an unknown or hidden patient.
   */
  async listCandidates(patientId: string | null, ids?: string[]): Promise<Array<{ row: SetRow; list: FhirResource }> | null> {
    const uuids = ids?.map(entryUuid).filter((u): u is string => !!u);
    if (uuids && uuids.length === 0) return [];
    const rows = await this.xds.submissionSetRows({ patientId, ids: uuids });
    return rows && rows.map((row) => ({ row, list: submissionSetList({ row, members: [] }) }));
  }

  /** ITI-66: submission sets as whole Lists, disclosed (audited and access-logged) as one search about `patientId`. */
  async lists(patientId: string | null, rows: SetRow[]): Promise<FhirResource[]> {
    return (await this.xds.discloseSubmissionSets('ITI-66', patientId, rows)).map(submissionSetList);
  }

  /** ITI-68: the document as a Binary (its bytes base64); the REST adapter serves the raw bytes when asked for the document's type. */
  async binary(id: string): Promise<FhirResource> {
    const uuid = entryUuid(id);
    if (!uuid) throw notFound('Binary', id);
    const { row, content } = await this.xds.documentContent(uuid);
    return binary(row, content);
  }
}
