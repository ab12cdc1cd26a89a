import { notFound } from '../../../../common/errors';
import type { FhirResource } from '../fhir/mapping';
import { searchedPatientIds, type ParsedSearch, type SearchCriterion } from '../fhir/search';
import type { XdsDocument as DocumentRow, XdsSubmissionSet as SetRow } from '../../db/generated/client';
import type { XdsService, XdsSettings } from '../xds/xds.service';
import { binary, documentReference, entryUuid, fhirId, readProvideBundle, submissionSetList } from './mhd.mapping';
import { registrySql } from './mhd.search';

/** The FHIR types the registry serves: DocumentReference (document entries) and List (submission sets). */
export type RegistryType = 'DocumentReference' | 'List';

/**
 * A registry entry a search may return, as the resource its clear columns make: no title, description, language
 * or members (those need its metadata decrypted). A search discloses only the candidates it returns.
 */
export type RegistryCandidate = { resource: FhirResource } & ({ type: 'DocumentReference'; row: DocumentRow } | { type: 'List'; row: SetRow });

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

  /**
   * The registry's DocumentReferences (ITI-67) or Lists (ITI-66) a search's criteria select, `limit` of them from
   * `offset` in its order (`sort`, ties by id), as candidates the search merges and pages before anything is
   * disclosed; with how many match, and whose entries were searched (the patients named, else the tenant: null).
   * The database matches, counts and pages them: every parameter they are searched by is in the registry's clear columns.
   */
  async search(
    type: RegistryType,
    criteria: SearchCriterion[],
    sort: ParsedSearch['sort'],
    window: { offset: number; limit: number },
  ): Promise<{ candidates: RegistryCandidate[]; total: number; searched: Array<string | null> }> {
    const query = { ...registrySql(type, criteria, sort), patientIds: searchedPatientIds(criteria), ...window };
    if (type === 'List') {
      const { rows, ...page } = await this.xds.submissionSetPage(query);
      return { ...page, candidates: rows.map((row) => ({ type, row, resource: submissionSetList({ row, members: [] }) })) };
    }
    const { rows, ...page } = await this.xds.documentEntryPage(query);
    return { ...page, candidates: rows.map((row) => ({ type, row, resource: documentReference({ row }) })) };
  }

  /** The candidates a search returns, whole: decrypted, audited (one ITI-66/67 record about `patientId`, the patient searched) and access-logged. */
  async disclose(type: RegistryType, patientId: string | null, candidates: RegistryCandidate[]): Promise<FhirResource[]> {
    if (type === 'List') {
      const rows = candidates.flatMap((c) => (c.type === 'List' ? [c.row] : []));
      return (await this.xds.discloseSubmissionSets('ITI-66', patientId, rows)).map(submissionSetList);
    }
    const rows = candidates.flatMap((c) => (c.type === 'DocumentReference' ? [c.row] : []));
    return (await this.xds.discloseDocumentEntries('ITI-67', patientId, rows)).map(documentReference);
  }

  /** Whether the registry has DocumentReferences of any of these patients (null: of the tenant), without reading them. */
  async hasDocumentReferences(patientIds: string[] | null): Promise<boolean> {
    return this.xds.hasDocumentEntries(patientIds);
  }

  /** Records an ITI-67 search that the registry had nothing for (the search was answered from the clinical record alone). */
  async auditSearchWithoutDocuments(patientIds: string[] | null): Promise<void> {
    await this.xds.auditSearchWithoutEntries(patientIds);
  }

  /** ITI-68: the document as a Binary (its bytes base64); the REST adapter serves the raw bytes when asked for the document's type. */
  async binary(id: string): Promise<FhirResource> {
    const uuid = entryUuid(id);
    if (!uuid) throw notFound('Binary', id);
    const { row, content } = await this.xds.documentContent(uuid);
    return binary(row, content);
  }
}
