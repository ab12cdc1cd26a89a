import { AppError, notFound, validationError } from '../../../../common/errors';
import type { CompositionService, CompositionView, IndexedEntriesQuery, IndexedEntryKey } from '../../compositions/composition.service';
import type { EntryCondition } from '../../compositions/clinical-index';
import type { PatientService } from '../../patients/patient.service';
import type { AppointmentService } from '../../appointments/appointment.service';
import type { ClinicalTemplateService } from '../../templates/clinical-template.service';
import type { DataArea } from '../../policy/rules';
import type { AccessPolicyService } from '../../policy/access-policy.service';
import type { ClinicalTemplate as TemplateRow, Prisma } from '../../db/generated/client';
import { capabilityStatement, DELETABLE_TYPES, FHIR_RESOURCE_TYPES, WRITABLE_TYPES } from '../../../../common/fhir/capability';
import { applyJsonPatch, jsonEqual, parseJsonPatch } from './json-patch';
import {
  appointmentToResource,
  compositionToResources,
  EHR_ID_SYSTEM,
  FHIR_APPOINTMENT_STATUS,
  parseResourceId,
  PATIENT_ID_SYSTEM,
  patientToResource,
  resourceIds,
  mappedTemplate,
  templateSlots,
  withoutEmpty,
  type FhirResource,
  type MappedTemplate,
} from './mapping';
import { appointmentInput, patientInput, vitalSignsInput, type AppointmentInput } from './inbound';
import { indexedArea, indexedQuery } from './indexed-search';
import {
  comparator,
  MANDATORY_ELEMENTS,
  MAX_COUNT,
  matchesCriterion,
  parseDateParam,
  parseSearch,
  parseToken,
  referencedPatients,
  referenceId,
  RESULT_PARAMETERS,
  searchedPatientIds,
  subset,
  SUMMARY_ELEMENTS,
  type ParsedSearch,
  type RawParam,
  type SearchCriterion,
} from './search';
import { ARCHETYPE } from './mapping';
import { accessLogToAuditEvent } from './audit-event';
import type { AuditService } from '../../audit/audit.service';
import type { MhdService, RegistryCandidate, RegistryType } from '../mhd/mhd.service';
import { entryUuid } from '../mhd/mhd.mapping';

/** The data area each composition-backed resource type lives in. */
const AREA_OF: Record<string, DataArea> = { Observation: 'observation', Encounter: 'encounter', MedicationRequest: 'order', DocumentReference: 'document' };
/** Most compositions one search or $everything decrypts and maps; beyond it the query must be narrowed. */
const SCAN_CAP = 5000;
/** Most resources `_include`/`_revinclude` add to one page. */
const INCLUDE_CAP = 500;
const VERSION = /^[1-9]\d{0,8}$/;
/** Whether a resource is an XDS registry entry served through MHD: every List and Binary, and DocumentReferences with an `xds-` id. */
const inRegistry = (resourceType: string, id: string) =>
  resourceType === 'List' || resourceType === 'Binary' || (resourceType === 'DocumentReference' && !!entryUuid(id));

/**
 * What a search found, before its page is read whole: a decrypted resource of the clinical record, a registry
 * entry as its clear columns make it (`registry`), or a note the clinical index found, as its keys make it (`note`).
 */
interface Found {
  resource: FhirResource;
  registry?: RegistryCandidate;
  note?: IndexedEntryKey;
}

/** Whether a resource meets the search's criteria other than the patients searched (those select what is read). */
const matchesOthers = (search: ParsedSearch, resource: FhirResource) =>
  search.criteria.every((c) => (c.kind === 'reference' && !c.modifier) || matchesCriterion(resource, c));

interface HistoryVersion {
  versionId: string;
  at: Date;
  method: 'POST' | 'PUT' | 'DELETE';
  /** Absent for a deletion. */
  resource?: FhirResource;
}

/**
 * A Bundle whose `fullUrl`s and `link` urls are relative to the FHIR service
 * base (`Patient/p-1`, `Observation?_count=20`): the REST adapter that serves
 * it knows its public address and makes them absolute.
 */
export interface Bundle {
  resourceType: 'Bundle';
  [key: string]: unknown;
}

/**
 * FHIR R4 over the clinical record: reads, searches and histories map the
 * platform's records (patients, appointments, openEHR compositions) to FHIR
 * resources; writes go through the same services as every other API, so they
 * are validated, access-checked and audited alike.
 */
export class FhirService {
  constructor(
    private readonly patients: PatientService,
    private readonly appointments: AppointmentService,
    private readonly compositions: CompositionService,
    private readonly templates: ClinicalTemplateService,
    private readonly mhd: MhdService,
    private readonly policy: AccessPolicyService,
    private readonly systemId: string,
    private readonly audit: AuditService,
  ) {}

  capabilities() {
    return capabilityStatement();
  }

  private assertType(resourceType: string): void {
    if (!(FHIR_RESOURCE_TYPES as readonly string[]).includes(resourceType)) {
      throw new AppError('NOT_IMPLEMENTED', `Resource type '${resourceType}' is not supported (supported: ${FHIR_RESOURCE_TYPES.join(', ')})`);
    }
  }

  private async definition(templateId: string): Promise<MappedTemplate> {
    return this.mapped(await this.templates.get(templateId));
  }

  private mapped(template: TemplateRow): MappedTemplate {
    return mappedTemplate(this.templates, template);
  }

  private async compositionResource(resourceType: string, id: string, composition: CompositionView): Promise<FhirResource | undefined> {
    const resources = compositionToResources(composition, await this.definition(composition.templateId));
    return resources.find((r) => r.resourceType === resourceType && r.id === id);
  }

  // ---- read, vread ---------------------------------------------------------

  async read(resourceType: string, id: string, versionId?: string | null): Promise<FhirResource> {
    this.policy.assertReachesRecords();
    this.assertType(resourceType);
    if (versionId !== undefined && versionId !== null && !VERSION.test(versionId)) throw notFound(`${resourceType} version`, `${id}/_history/${versionId}`);
    if (versionId) {
      const version = (await this.history(resourceType, id)).find((v) => v.versionId === versionId);
      if (!version) throw notFound(`${resourceType} version`, `${id}/_history/${versionId}`);
      if (!version.resource) throw gone(resourceType, id, versionId);
      return version.resource;
    }
    if (inRegistry(resourceType, id)) return this.registryResource(resourceType, id);
    switch (resourceType) {
      case 'AuditEvent':
        return accessLogToAuditEvent(await this.audit.accessLogEntry(id));
      case 'Patient': {
        const patient = await this.patients.get(id);
        const versions = await this.patients.versionsOf([id]);
        return patientToResource(patient, versions.get(id)!);
      }
      case 'Appointment': {
        const appointment = await this.appointments.get(id);
        return appointmentToResource(appointment, (await this.appointments.versionsOf([id])).get(id)!);
      }
      default: {
        const ref = parseResourceId(id);
        if (!ref) throw notFound(resourceType, id);
        const composition = await this.compositions.get(ref.compositionId).catch(async (err) => {
          // A deleted composition: its resources are Gone (410), as FHIR says of a deleted resource; never-existing stays 404.
          if (err instanceof AppError && err.code === 'NOT_FOUND' && (await this.deleted(resourceType, id))) throw gone(resourceType, id);
          throw err;
        });
        const resource = await this.compositionResource(resourceType, id, composition);
        // An entry deleted from a composition that lives on (its other entries kept) is Gone too.
        if (!resource) throw (await this.deleted(resourceType, id)) ? gone(resourceType, id) : notFound(resourceType, id);
        return resource;
      }
    }
  }

  /** A resource of the XDS registry (MHD): DocumentReference and List ids are `xds-<entryUUID>`, a Binary is its DocumentReference's document. */
  private async registryResource(resourceType: string, id: string): Promise<FhirResource> {
    if (resourceType === 'Binary') return this.mhd.binary(id);
    if (!entryUuid(id)) throw notFound(resourceType, id);
    const type = resourceType === 'List' ? 'List' : 'DocumentReference';
    const { candidates } = await this.mhd.search(type, [{ name: '_id', kind: 'id', values: [id] }], [], { offset: 0, limit: 1 });
    const [resource] = await this.mhd.disclose(type, null, candidates);
    if (!resource) throw notFound(resourceType, id);
    return resource;
  }

  /** Whether the resource existed and its latest version is a deletion. */
  private async deleted(resourceType: string, id: string): Promise<boolean> {
    const versions = await this.history(resourceType, id).catch((err) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return [];
      throw err;
    });
    return versions.length > 0 && versions[versions.length - 1].method === 'DELETE';
  }

  // ---- history -------------------------------------------------------------

  /** Every version of a resource, oldest first; `resource` is absent for a deletion. */
  async history(resourceType: string, id: string): Promise<HistoryVersion[]> {
    this.policy.assertReachesRecords();
    this.assertType(resourceType);
    if (resourceType === 'AuditEvent') throw new AppError('NOT_IMPLEMENTED', 'An AuditEvent is never changed and has no versions: read or search it');
    // Registry entries are never updated in place (a replacement is a new entry): one version.
    if (inRegistry(resourceType, id)) {
      const resource = await this.registryResource(resourceType, id);
      return [{ versionId: '1', at: new Date(resource.meta.lastUpdated), method: 'POST', resource }];
    }
    switch (resourceType) {
      case 'Patient':
        return (await this.patients.history(id)).map((v) => ({
          versionId: String(v.version),
          at: v.at,
          method: v.version === 1 ? 'POST' : 'PUT',
          resource: patientToResource(v.patient, v),
        }));
      case 'Appointment':
        return (await this.appointments.history(id)).map((v) => ({
          versionId: String(v.version),
          at: v.at,
          method: v.version === 1 ? 'POST' : 'PUT',
          resource: appointmentToResource(v.appointment, v),
        }));
      default: {
        const ref = parseResourceId(id);
        if (!ref) throw notFound(resourceType, id);
        const versions = await this.compositions.history(ref.compositionId);
        const definition = await this.definition(versions[0].templateId);
        if (!resourceIds(definition, ref.compositionId).some((r) => r.id === id && r.resourceType === resourceType)) throw notFound(resourceType, id);
        // The resource's versions: those of the composition that hold its entry, and a DELETE where the entry stops
        // being there (the composition deleted, or a version without the entry: a FHIR DELETE of one of its entries).
        const result: HistoryVersion[] = [];
        let present = false;
        for (const v of versions) {
          const resource = v.changeType === 'deleted' ? undefined : compositionToResources(v, definition).find((r) => r.id === id);
          if (resource) result.push({ versionId: String(v.version), at: v.committedAt, method: v.version === 1 ? 'POST' : 'PUT', resource });
          else if (present) result.push({ versionId: String(v.version), at: v.committedAt, method: 'DELETE' });
          present = resource !== undefined;
        }
        if (result.length === 0) throw notFound(resourceType, id);
        return result;
      }
    }
  }

  async historyBundle(resourceType: string, id: string): Promise<Bundle> {
    const versions = (await this.history(resourceType, id)).reverse();
    return withoutEmpty({
      resourceType: 'Bundle',
      type: 'history',
      total: versions.length,
      link: [{ relation: 'self', url: `${resourceType}/${id}/_history` }],
      entry: versions.map((v) => ({
        fullUrl: `${resourceType}/${id}`,
        ...(v.resource ? { resource: v.resource } : {}),
        request: { method: v.method, url: v.method === 'POST' ? resourceType : `${resourceType}/${id}` },
        response: { status: v.method === 'POST' ? '201' : v.method === 'DELETE' ? '204' : '200', etag: `W/"${v.versionId}"`, lastModified: v.at.toISOString() },
      })),
    });
  }

  // ---- search --------------------------------------------------------------

  async search(resourceType: string, params: RawParam[], handling: 'strict' | 'lenient' = 'lenient'): Promise<Bundle> {
    this.policy.assertReachesRecords();
    this.assertType(resourceType);
    const search = parseSearch(resourceType, params, handling);
    const { resources, total } = await this.matches(resourceType, search);
    if (search.summary === 'count') return searchBundle(resourceType, search, [], total, []);
    const included = await this.included(resources, search);
    return searchBundle(
      resourceType,
      search,
      resources.map((r) => shaped(r, search)),
      total,
      included,
    );
  }

  private async matches(resourceType: string, search: ParsedSearch): Promise<{ resources: FhirResource[]; total: number }> {
    if (resourceType === 'Patient') return this.searchPatients(search);
    if (resourceType === 'Appointment') return this.searchAppointments(search);
    if (resourceType === 'AuditEvent') return this.searchAuditEvents(search);
    if (resourceType === 'Binary') throw new AppError('NOT_IMPLEMENTED', 'Binary is read by id (ITI-68), not searched; find documents with DocumentReference');
    const indexed = await this.indexedSearch(resourceType, search);
    if (indexed) return indexed;
    const found: Found[] = [];
    if (resourceType !== 'List') {
      for (const patientId of searchedPatientIds(search.criteria) ?? [null]) {
        found.push(...(await this.clinicalResources(resourceType, patientId)).filter((r) => matchesOthers(search, r)).map((resource) => ({ resource })));
      }
    }
    return this.withRegistry(resourceType, search, found, found.length);
  }

  /**
   * The search's page and total: `found` (of `total` matches outside the registry, all of them that can be on the
   * page) with the XDS registry's DocumentReferences or Lists the search matches. The registry matches, counts and
   * pages in SQL: when nothing else was found it reads the page alone; otherwise its first offset + count in the
   * search's order, among which are all of its entries that can be on the page.
   */
  private async withRegistry(resourceType: string, search: ParsedSearch, found: Found[], total: number): Promise<{ resources: FhirResource[]; total: number }> {
    if (resourceType !== 'List' && resourceType !== 'DocumentReference') return { resources: await this.pageOf(resourceType, found, search, [], 0), total };
    // _summary=count reads no entry.
    const end = search.summary === 'count' ? 0 : search.offset + search.count;
    const skipped = found.length === 0 ? search.offset : 0;
    const registry = await this.mhd.search(resourceType, search.criteria, search.sort, { offset: skipped, limit: Math.max(0, end - skipped) });
    const entries = registry.candidates.map((candidate): Found => ({ resource: candidate.resource, registry: candidate }));
    return { resources: await this.pageOf(resourceType, [...found, ...entries], search, registry.searched, skipped), total: total + registry.total };
  }

  /**
   * The search's page of what it found (the first `skipped` matches in its order left out already), in its order
   * (ties by id, so the order found in does not matter): only the page is read whole. Notes the index found are
   * decrypted (access-logged as listed); registry entries are disclosed (decrypted, audited and access-logged) in
   * one ITI-66/67 record per patient whose entries were searched (`searched`; null: the tenant's).
   */
  private async pageOf(resourceType: string, found: Found[], search: ParsedSearch, searched: Array<string | null>, skipped: number): Promise<FhirResource[]> {
    const compare = comparator(search.sort.length ? search.sort : [{ name: 'date', descending: true }]);
    const start = search.offset - skipped;
    const page = search.summary === 'count' ? [] : found.sort((a, b) => compare(a.resource, b.resource)).slice(start, start + search.count);
    const whole = new Map<Found, FhirResource | undefined>();
    const notes = page.filter((p) => p.note);
    const compositions = new Map((await this.compositions.listed([...new Set(notes.map((p) => p.note!.compositionId))])).map((c) => [c.id, c]));
    const definitions = new Map<string, MappedTemplate>();
    for (const p of notes) whole.set(p, await this.indexedResource(compositions.get(p.note!.compositionId), p.note!.archetypeId, definitions));
    for (const patientId of searched) {
      const entries = page.filter((p) => p.registry && (patientId === null || p.registry.row.patientId === patientId));
      const disclosed = await this.mhd.disclose(
        resourceType as RegistryType,
        patientId,
        entries.map((p) => p.registry!),
      );
      entries.forEach((p, i) => whole.set(p, disclosed[i]));
    }
    return page.flatMap((p) => (p.note || p.registry ? [whole.get(p)].filter((r) => r !== undefined) : [p.resource]));
  }

  /** The resource a top-level entry the index found maps to (undefined if its composition is gone); `definitions` caches templates. */
  private async indexedResource(
    composition: CompositionView | undefined,
    archetypeId: string,
    definitions: Map<string, MappedTemplate>,
  ): Promise<FhirResource | undefined> {
    if (!composition) return undefined;
    let definition = definitions.get(composition.templateId);
    if (!definition) definitions.set(composition.templateId, (definition = await this.definition(composition.templateId)));
    const id = resourceIds(definition, composition.id).find((r) => r.archetypeId === archetypeId)?.id;
    return compositionToResources(composition, definition).find((r) => r.id === id);
  }

  /**
   * A search the clinical index answers (docs/exchange.md "Search from the
   * clinical index"), over operational templates' compositions: only the
   * page's compositions are decrypted. Null when the search needs more (it
   * then runs over decrypted candidates).
   */
  private async indexedSearch(resourceType: string, search: ParsedSearch): Promise<{ resources: FhirResource[]; total: number } | null> {
    const area = indexedArea(resourceType);
    if (!area) return null;
    const templates = await this.templates.list(area);
    // CareGraph JSON templates' content is not indexed leaf by leaf.
    if (templates.some((t) => !this.templates.operational(t))) return null;
    const query = indexedQuery(
      resourceType,
      search,
      templates.map((t) => ({ templateId: t.id, slots: templateSlots(this.mapped(t)) })),
    );
    if (!query) return null;
    const entryQuery = (conditions: EntryCondition[], limit: number, offset: number): IndexedEntriesQuery => ({
      filters: (query.patientIds ?? [null]).map((patientId) => ({ patientId, area: query.area })),
      entries: conditions,
      where: query.where,
      order: query.order,
      limit,
      offset,
    });
    if ((await this.compositions.indexedEntryKeys(entryQuery(query.undecided, 0, 0))).total > 0) return null;
    // _summary=count reads no composition.
    const count = search.summary === 'count' ? 0 : search.count;
    // The XDS registry's DocumentReferences are not in the index. When the searched patients have any, the notes
    // that can be on the page (the first offset + count in the search's order) merge with the registry's matches.
    if (resourceType === 'DocumentReference' && (await this.mhd.hasDocumentReferences(query.patientIds))) {
      const notes = await this.compositions.indexedEntryKeys(entryQuery(query.entries, count && search.offset + count, 0));
      const definitions = new Map(templates.map((t) => [t.id, this.mapped(t)]));
      const found = notes.keys.map((note): Found => {
        const definition = definitions.get(note.templateId);
        const id = definition && resourceIds(definition, note.compositionId).find((r) => r.archetypeId === note.archetypeId)?.id;
        // What the comparator reads of a note: its id, clinical time (`date`) and commit time.
        const resource = { resourceType, id, date: note.effectiveAt.toISOString(), meta: { lastUpdated: note.committedAt.toISOString() } };
        return { resource, note };
      });
      return this.withRegistry(resourceType, search, found, notes.total);
    }
    const found = await this.compositions.indexedEntries(entryQuery(query.entries, count, search.offset));
    const definitions = new Map(templates.map((t) => [t.id, this.mapped(t)]));
    const resources: FhirResource[] = [];
    for (const { composition, archetypeId } of found.page) {
      const resource = await this.indexedResource(composition, archetypeId, definitions);
      if (resource) resources.push(resource);
    }
    // Every DocumentReference search is an MHD ITI-67 query in the audit trail, whichever store answered it.
    if (resourceType === 'DocumentReference') await this.mhd.auditSearchWithoutDocuments(query.patientIds);
    return { resources, total: found.total };
  }

  /** `_include` (the Patients the page references) and `_revinclude` (resources referencing the page's Patients). */
  private async included(page: FhirResource[], search: ParsedSearch): Promise<FhirResource[]> {
    const result: FhirResource[] = [];
    const seen = new Set(page.map((r) => `${r.resourceType}/${r.id}`));
    const add = (resources: FhirResource[]) => {
      for (const r of resources) {
        if (seen.has(`${r.resourceType}/${r.id}`)) continue;
        seen.add(`${r.resourceType}/${r.id}`);
        result.push(r);
        if (result.length > INCLUDE_CAP) throw validationError(`More than ${INCLUDE_CAP} included resources; lower _count or narrow the search`);
      }
    };
    if (search.include.length > 0) {
      const ids = [...new Set(page.flatMap(referencedPatients))];
      if (ids.length > 0) add((await this.searchPatients(bareSearch([{ name: '_id', kind: 'id', values: ids }], MAX_COUNT))).resources);
    }
    for (const rev of search.revinclude) {
      for (const patient of page) {
        add((await this.matches(rev.sourceType, bareSearch([{ name: 'patient', kind: 'reference', values: [patient.id!] }], INCLUDE_CAP + 1))).resources);
      }
    }
    return result;
  }

  /** Every current resource of a composition-backed type, for one patient or the tenant. */
  private async clinicalResources(resourceType: string, patientId: string | null): Promise<FhirResource[]> {
    const area = AREA_OF[resourceType];
    const templates = await this.templates.list(area);
    const templateIds = templates.filter((t) => resourceIds(this.mapped(t), 'x').some((r) => r.resourceType === resourceType)).map((t) => t.id);
    // An unknown (or hidden, or other tenant's) patient matches nothing, as a search should.
    const compositions = await this.compositions.scan({ patientId, area, templateIds }, SCAN_CAP).catch((err) => {
      if (patientId && err instanceof AppError && err.code === 'NOT_FOUND') return [];
      throw err;
    });
    const definitions = new Map(templates.map((t) => [t.id, this.mapped(t)]));
    return compositions.flatMap((c) => compositionToResources(c, definitions.get(c.templateId)!).filter((r) => r.resourceType === resourceType));
  }

  private async searchPatients(search: ParsedSearch): Promise<{ resources: FhirResource[]; total: number }> {
    const and: Prisma.PatientWhereInput[] = search.criteria.map((criterion) => patientCriterion(criterion));
    const orderBy: Prisma.PatientOrderByWithRelationInput[] = search.sort.map(({ name, descending }) => {
      const direction = descending ? 'desc' : 'asc';
      return name === 'name' ? { family: direction } : name === 'birthdate' ? { birthDate: { sort: direction, nulls: 'last' } } : { id: direction };
    });
    const page = await this.patients.search({ AND: and }, search.count, search.offset, orderBy);
    const versions = await this.patients.versionsOf(page.data.map((p) => p.id));
    return { resources: page.data.map((p) => patientToResource(p, versions.get(p.id)!)), total: page.pagination.total };
  }

  private async searchAppointments(search: ParsedSearch): Promise<{ resources: FhirResource[]; total: number }> {
    // Plain patient, status and single-valued date criteria narrow the database query; every criterion is then applied exactly.
    const plain = search.criteria.filter((c) => !c.modifier);
    const patientIds = intersect(plain.filter((c) => c.name === 'patient').map((c) => c.values.map((v) => referenceId(v))));
    const statuses = intersect(
      plain
        .filter((c) => c.name === 'status')
        .map((c) => c.values.flatMap((v) => Object.keys(FHIR_APPOINTMENT_STATUS).filter((s) => FHIR_APPOINTMENT_STATUS[s] === parseToken(v).code))),
    );
    const bounds = plain.filter((c) => c.name === 'date' && c.values.length === 1).map((d) => parseDateParam('date', d.values[0]));
    const from = bounds.filter((b) => ['eq', 'gt', 'ge'].includes(b.prefix)).map((b) => (b.prefix === 'gt' ? b.hi : b.lo));
    const to = bounds.filter((b) => ['eq', 'lt', 'le'].includes(b.prefix)).map((b) => (b.prefix === 'lt' ? b.lo : b.hi) - 1);
    const rest = search.criteria.filter((c) => c.name !== 'patient' || c.modifier);
    const rows: FhirResource[] = [];
    for (const patientId of patientIds ?? [null]) {
      for (let offset = 0; ; offset += 100) {
        const page = await this.appointments.forPatient(
          patientId,
          {
            statuses: statuses ?? undefined,
            from: from.length ? new Date(Math.max(...from)).toISOString() : null,
            to: to.length ? new Date(Math.min(...to)).toISOString() : null,
          },
          100,
          offset,
        );
        const versions = await this.appointments.versionsOf(page.data.map((a) => a.id));
        rows.push(...page.data.map((a) => appointmentToResource(a, versions.get(a.id)!)).filter((r) => rest.every((c) => matchesCriterion(r, c))));
        if (offset + 100 >= page.pagination.total || offset + 100 >= SCAN_CAP) break;
      }
    }
    rows.sort(comparator(search.sort.length ? search.sort : [{ name: 'date', descending: false }]));
    return { resources: rows.slice(search.offset, search.offset + search.count), total: rows.length };
  }

  /** The access log of one patient (required: `patient`), newest first, within the `date` bounds; paged by the log itself. */
  private async searchAuditEvents(search: ParsedSearch): Promise<{ resources: FhirResource[]; total: number }> {
    const patients = search.criteria.filter((c) => c.name === 'patient');
    if (patients.length !== 1 || patients[0].values.length !== 1 || patients[0].modifier) {
      throw validationError('AuditEvent search needs exactly one patient, e.g. patient=Patient/p-1001', [{ path: 'patient', message: 'one value, required' }]);
    }
    const bounds = search.criteria
      .filter((c) => c.name === 'date')
      .map((c) => {
        if (c.values.length !== 1 || c.modifier) throw validationError('date takes one value per parameter', [{ path: 'date', message: 'one value' }]);
        const bound = parseDateParam('date', c.values[0]);
        if (bound.prefix === 'ne') {
          throw validationError(`date does not take the prefix ${bound.prefix}`, [{ path: 'date', message: 'eq, lt, le, gt or ge' }]);
        }
        return bound;
      });
    const from = bounds.filter((b) => ['eq', 'gt', 'ge'].includes(b.prefix)).map((b) => (b.prefix === 'gt' ? b.hi : b.lo));
    const to = bounds.filter((b) => ['eq', 'lt', 'le'].includes(b.prefix)).map((b) => (b.prefix === 'lt' ? b.lo : b.hi) - 1);
    const page = await this.audit.accessLog(referenceId(patients[0].values[0]), search.count || 1, search.offset, {
      from: from.length ? new Date(Math.max(...from)).toISOString() : null,
      to: to.length ? new Date(Math.min(...to)).toISOString() : null,
    });
    return { resources: search.count === 0 ? [] : page.data.map(accessLogToAuditEvent), total: page.pagination.total };
  }

  // ---- $everything ---------------------------------------------------------

  async everything(patientId: string, params: RawParam[]): Promise<Bundle> {
    const search = parseSearch('Everything', params);
    const all = await this.everythingResources(patientId);
    return searchBundle(`Patient/${patientId}/$everything`, search, all.slice(search.offset, search.offset + search.count), all.length, []);
  }

  /** Every resource of $everything, unpaged: the Patient first, then clinical resources newest first, then appointments (the CDA export reads these). */
  async everythingResources(patientId: string): Promise<FhirResource[]> {
    this.policy.assertReachesRecords();
    const patient = await this.read('Patient', patientId);
    const clinical = (await this.compositions.scan({ patientId }, SCAN_CAP)).filter((c) => c.content);
    const definitions = new Map<string, MappedTemplate>();
    for (const id of new Set(clinical.map((c) => c.templateId))) definitions.set(id, await this.definition(id));
    const resources = clinical.flatMap((c) => compositionToResources(c, definitions.get(c.templateId)!)).sort(comparator([{ name: 'date', descending: true }]));
    const appointments = await this.searchAppointments(bareSearch([{ name: 'patient', kind: 'reference', values: [patientId] }], SCAN_CAP));
    return [patient, ...resources, ...appointments.resources];
  }

  // ---- create, update ------------------------------------------------------

  async create(resource: FhirResource, reason?: string | null): Promise<FhirResource> {
    this.policy.assertReachesRecords();
    const resourceType = resource.resourceType;
    this.assertType(resourceType);
    if (!WRITABLE_TYPES.includes(resourceType))
      throw new AppError('NOT_IMPLEMENTED', `create is not supported for ${resourceType} (only ${WRITABLE_TYPES.join(', ')})`);
    if (resourceType === 'Patient') {
      const created = await this.patients.create(patientInput(resource), reason);
      return this.read('Patient', created.id);
    }
    if (resourceType === 'Appointment') {
      const { status, ...slot } = appointmentInput(resource);
      if (status !== 'booked') throw validationError("A new Appointment is 'booked'", [{ path: 'Appointment.status', message: `'${status}' on create` }]);
      const created = await this.appointments.book(slot, reason);
      return this.read('Appointment', created.id);
    }
    const vitals = vitalSignsInput(resource);
    if (vitals.kind !== 'blood_pressure') {
      throw validationError('A new vital-signs record starts with a blood pressure panel (85354-9); add a heart rate by updating its <id>.pulse Observation', [
        { path: 'Observation.code', message: 'create takes 85354-9' },
      ]);
    }
    const patient = await this.patients.get(vitals.patientId);
    const templateId = await this.vitalSignsTemplate();
    const composition = await this.compositions.create(
      {
        templateId,
        ehrId: patient.ehrId,
        content: { blood_pressure: { systolic: vitals.systolic, diastolic: vitals.diastolic }, recorded_at: vitals.recordedAt },
      },
      reason,
    );
    const created = (await this.compositionResources(composition)).find((r) => r.code?.coding?.[0]?.code === '85354-9');
    if (!created) throw new AppError('INTERNAL_ERROR', 'The new composition did not map to an Observation');
    return created;
  }

  /** Conditional create (`If-None-Exist`): no match creates, one match is returned unchanged, more than one is 412. */
  async conditionalCreate(resource: FhirResource, ifNoneExist: string, reason?: string | null): Promise<{ created: boolean; resource: FhirResource }> {
    this.policy.assertReachesRecords();
    this.assertType(resource.resourceType);
    const matches = await this.conditionalMatches(resource.resourceType, ifNoneExist, 'If-None-Exist');
    if (matches.length === 1) return { created: false, resource: matches[0] };
    return { created: true, resource: await this.create(resource, reason) };
  }

  /** Conditional update (`PUT [type]?[search]`): no match creates (when the body has no id), one match is updated, more than one is 412. */
  async conditionalUpdate(
    resourceType: string,
    query: string,
    resource: FhirResource,
    ifMatch?: string | null,
    reason?: string | null,
  ): Promise<{ created: boolean; resource: FhirResource }> {
    this.policy.assertReachesRecords();
    this.assertType(resourceType);
    if (resource.resourceType !== resourceType)
      throw validationError(`The body is a ${resource.resourceType}, the URL names ${resourceType}`, [
        { path: 'resourceType', message: 'does not match the URL' },
      ]);
    const matches = await this.conditionalMatches(resourceType, query, 'search');
    if (matches.length === 0) {
      if (resource.id !== undefined)
        throw validationError('No resource matches and the body has an id: this server does not create resources with a client-chosen id', [
          { path: `${resourceType}.id`, message: 'remove it to create' },
        ]);
      return { created: true, resource: await this.create(resource, reason) };
    }
    const id = matches[0].id!;
    if (resource.id !== undefined && resource.id !== id)
      throw validationError(`The body's id '${String(resource.id)}' is not the matching resource's '${id}'`, [
        { path: `${resourceType}.id`, message: `expected '${id}'` },
      ]);
    return { created: false, resource: await this.update(resourceType, id, { ...resource, id }, ifMatch, reason) };
  }

  /** At most one resource matching a conditional interaction's search (strict: an unknown parameter must not widen the match). */
  private async conditionalMatches(resourceType: string, query: string, what: string): Promise<FhirResource[]> {
    const params = [...new URLSearchParams(query.replace(/^(?:[A-Z][A-Za-z]*)?\?/, '')).entries()].map(([name, value]) => ({ name, value }));
    if (params.length === 0) throw validationError(`The conditional ${what} has no search parameters`, [{ path: what, message: 'empty' }]);
    const search = parseSearch(resourceType, params, 'strict');
    if (search.used.some((p) => RESULT_PARAMETERS.includes(p.name)))
      throw validationError(`The conditional ${what} takes search criteria only, not ${RESULT_PARAMETERS.join(', ')}`, [
        { path: what, message: 'result parameter' },
      ]);
    const { resources, total } = await this.matches(resourceType, { ...search, count: 2, offset: 0 });
    if (total > 1) throw new AppError('PRECONDITION_FAILED', `${total} ${resourceType} resources match the conditional ${what}; it must match at most one`);
    return resources;
  }

  /** FHIR-created vital signs use the tenant's newest `vital_signs.v<n>` template. */
  private async vitalSignsTemplate(): Promise<string> {
    const candidates = (await this.templates.list('observation'))
      .filter((t) => /^vital_signs\.v\d+$/.test(t.id) && templateSlots(this.mapped(t)).some((s) => s.archetypeId === ARCHETYPE.bloodPressure))
      .sort((a, b) => Number(b.id.split('.v')[1]) - Number(a.id.split('.v')[1]));
    if (candidates.length === 0) throw new AppError('UNKNOWN_TEMPLATE', 'This tenant has no vital_signs template to record an Observation with');
    return candidates[0].id;
  }

  private async compositionResources(composition: CompositionView): Promise<FhirResource[]> {
    return compositionToResources(composition, await this.definition(composition.templateId));
  }

  /** PUT of an Appointment: status cancelled cancels it, booked moves it to the resource's slot (the same slot changes nothing). */
  private async updateAppointment(id: string, input: AppointmentInput, expected: number | undefined, reason?: string | null): Promise<FhirResource> {
    const current = await this.appointments.get(id);
    if (input.patientId !== current.patientId) {
      throw validationError('The patient of an appointment cannot change', [
        { path: 'Appointment.participant', message: `expected Patient/${current.patientId}` },
      ]);
    }
    if (input.status === 'cancelled') await this.appointments.cancel(id, reason, expected);
    else
      await this.appointments.reschedule(
        id,
        { start: input.start, end: input.end, practitionerId: input.practitionerId, location: input.location },
        reason,
        expected,
      );
    return this.read('Appointment', id);
  }

  async update(resourceType: string, id: string, resource: FhirResource, ifMatch?: string | null, reason?: string | null): Promise<FhirResource> {
    this.policy.assertReachesRecords();
    this.assertType(resourceType);
    if (!WRITABLE_TYPES.includes(resourceType))
      throw new AppError('NOT_IMPLEMENTED', `update is not supported for ${resourceType} (only ${WRITABLE_TYPES.join(', ')})`);
    if (resource.resourceType !== resourceType)
      throw validationError(`The body is a ${resource.resourceType}, the URL names ${resourceType}`, [
        { path: 'resourceType', message: 'does not match the URL' },
      ]);
    if (resource.id !== id)
      throw validationError('The resource id must equal the id in the URL', [{ path: `${resourceType}.id`, message: `expected '${id}'` }]);
    if (ifMatch !== undefined && ifMatch !== null && !VERSION.test(ifMatch))
      throw validationError('If-Match must be W/"<versionId>"', [{ path: 'If-Match', message: 'not a version id' }]);
    const expected = ifMatch ? Number(ifMatch) : undefined;
    if (resourceType === 'Patient') {
      await this.patients.update(id, patientInput(resource), reason, expected);
      return this.read('Patient', id);
    }
    if (resourceType === 'Appointment') return this.updateAppointment(id, appointmentInput(resource), expected, reason);
    const ref = parseResourceId(id);
    if (!ref) throw notFound(resourceType, id);
    const current = await this.compositions.get(ref.compositionId);
    const slot = resourceIds(await this.definition(current.templateId), ref.compositionId).find((r) => r.id === id);
    if (!slot) throw notFound(resourceType, id);
    const vitals = vitalSignsInput(resource);
    const writes = { [ARCHETYPE.bloodPressure]: 'blood_pressure', [ARCHETYPE.pulse]: 'pulse' } as Record<string, string>;
    if (writes[slot.archetypeId] !== vitals.kind) {
      throw new AppError(
        'NOT_IMPLEMENTED',
        `Only the blood pressure and heart rate Observations of vital-signs records can be updated; ${id} is not one that takes code ${resource.code?.coding?.[0]?.code}`,
      );
    }
    // Operational templates are updated through their simple form, which must hold the whole composition.
    const content: Record<string, any> = structuredClone((await this.compositions.presentedContent(current)) ?? {});
    if (content._type === 'COMPOSITION')
      throw new AppError('NOT_IMPLEMENTED', `${id} belongs to a composition with elements this update cannot keep; update it through the openEHR API`);
    if (vitals.kind === 'blood_pressure') content[slot.key] = { ...(content[slot.key] ?? {}), systolic: vitals.systolic, diastolic: vitals.diastolic };
    else content[slot.key] = { ...(content[slot.key] ?? {}), rate: vitals.rate };
    if ('recorded_at' in content) content.recorded_at = vitals.recordedAt;
    const versionUid = `${ref.compositionId}::${this.systemId}::${expected ?? current.version}`;
    const updated = await this.compositions.update(ref.compositionId, versionUid, content, reason);
    const result = (await this.compositionResources(updated)).find((r) => r.id === id);
    if (!result) throw new AppError('INTERNAL_ERROR', 'The updated composition did not map back to the Observation');
    return result;
  }

  // ---- patch, delete -------------------------------------------------------

  /**
   * PATCH with JSON Patch: the operations apply to the current version (If-Match: that version, else 412) and the
   * result is written as an update of that version, so it is validated, access-checked and audited as a PUT is.
   * A patch may not change the resource's type or id; one that changes nothing writes no version.
   */
  async patch(resourceType: string, id: string, document: unknown, ifMatch?: string | null, reason?: string | null): Promise<FhirResource> {
    this.policy.assertReachesRecords();
    this.assertType(resourceType);
    if (!WRITABLE_TYPES.includes(resourceType))
      throw new AppError('NOT_IMPLEMENTED', `patch is not supported for ${resourceType} (only ${WRITABLE_TYPES.join(', ')})`);
    const operations = parseJsonPatch(document);
    const expected = expectedVersion(ifMatch);
    const current = await this.read(resourceType, id);
    if (expected !== undefined && String(expected) !== current.meta.versionId) {
      throw new AppError(
        'PRECONDITION_FAILED',
        `Version ${expected} is not the current version of ${resourceType}/${id}; the current version is ${current.meta.versionId}`,
        [{ path: 'If-Match', message: `current version is ${current.meta.versionId}` }],
      );
    }
    const patched = applyJsonPatch(current, operations);
    if (!patched || typeof patched !== 'object' || Array.isArray(patched))
      throw validationError('The patched resource is not a JSON object', [{ path: 'body', message: 'the patch replaces the resource' }]);
    if (patched.resourceType !== resourceType)
      throw validationError('A patch may not change the resourceType', [{ path: 'resourceType', message: `must stay '${resourceType}'` }]);
    if (patched.id !== id) throw validationError('A patch may not change the id', [{ path: `${resourceType}.id`, message: `must stay '${id}'` }]);
    if (jsonEqual(patched, current)) return current;
    // The version read is the version written over: a change in between fails the update with 412.
    return this.update(resourceType, id, patched, current.meta.versionId, reason);
  }

  /**
   * DELETE: a new, audited version of the record, never a removal of data. An Observation's entry is taken out of
   * its composition in a new version, or the composition is deleted (openEHR: a version with change type deleted)
   * when it was its only entry. Reads then answer 410 Gone and searches leave it out; `_history` ends with the
   * deletion. Deleting what is deleted already changes nothing (`false`).
   */
  async delete(resourceType: string, id: string, ifMatch?: string | null, reason?: string | null): Promise<boolean> {
    this.policy.assertReachesRecords();
    this.assertType(resourceType);
    if (!DELETABLE_TYPES.includes(resourceType))
      throw new AppError('NOT_IMPLEMENTED', `delete is not supported for ${resourceType} (only ${DELETABLE_TYPES.join(', ')})`);
    const expected = expectedVersion(ifMatch);
    const ref = parseResourceId(id);
    if (!ref) throw notFound(resourceType, id);
    if (await this.deleted(resourceType, id)) return false;
    const current = await this.compositions.get(ref.compositionId);
    const resources = await this.compositionResources(current);
    if (!resources.some((r) => r.resourceType === resourceType && r.id === id)) throw notFound(resourceType, id);
    const versionUid = `${ref.compositionId}::${this.systemId}::${expected ?? current.version}`;
    if (resources.length === 1) {
      await this.compositions.delete(ref.compositionId, versionUid, reason);
      return true;
    }
    const slot = resourceIds(await this.definition(current.templateId), ref.compositionId).find((r) => r.id === id);
    const content: Record<string, unknown> = structuredClone((await this.compositions.presentedContent(current)) ?? {});
    if (!slot || content._type === 'COMPOSITION' || !(slot.key in content))
      throw new AppError(
        'CONFLICT',
        `${id} is one of the entries of a composition this server cannot take it out of; delete the composition through the openEHR API`,
      );
    delete content[slot.key];
    await this.compositions.update(ref.compositionId, versionUid, content, reason);
    return true;
  }

  /** Conditional delete (`DELETE [type]?[search]`): no match deletes nothing, one match is deleted, more than one is 412. */
  async conditionalDelete(resourceType: string, query: string, reason?: string | null): Promise<boolean> {
    this.policy.assertReachesRecords();
    this.assertType(resourceType);
    if (!DELETABLE_TYPES.includes(resourceType))
      throw new AppError('NOT_IMPLEMENTED', `delete is not supported for ${resourceType} (only ${DELETABLE_TYPES.join(', ')})`);
    const [match] = await this.conditionalMatches(resourceType, query, 'delete');
    return match ? this.delete(resourceType, match.id!, null, reason) : false;
  }
}

/** One Patient criterion as SQL (Prisma): the alternatives OR-ed, `:missing` and token `:not` included. */
function patientCriterion(criterion: SearchCriterion): Prisma.PatientWhereInput {
  if (criterion.modifier === 'missing') {
    const missing = criterion.values[0] === 'true';
    // identifier is always present on a CareGraph patient; a name is not (a patient may be registered without one).
    if (criterion.name === 'birthdate') return missing ? { birthDate: null } : { NOT: { birthDate: null } };
    if (criterion.name === 'gender') return missing ? { gender: null } : { NOT: { gender: null } };
    if (criterion.name === 'name') {
      const nameless: Prisma.PatientWhereInput = { family: null, givenNames: { isEmpty: true } };
      return missing ? nameless : { NOT: nameless };
    }
    return missing ? { id: { in: [] } } : {};
  }
  const any: Prisma.PatientWhereInput = { OR: criterion.values.map((value) => patientCondition(criterion, value)) };
  return criterion.modifier === 'not' ? { NOT: any } : any;
}

function patientCondition(criterion: SearchCriterion, value: string): Prisma.PatientWhereInput {
  switch (criterion.name) {
    case '_id':
      return { id: value };
    case 'gender':
      return { gender: parseToken(value).code ?? '' };
    case 'identifier': {
      const token = parseToken(value);
      if (token.system === PATIENT_ID_SYSTEM) return { id: token.code ?? '' };
      if (token.system === EHR_ID_SYSTEM) return { ehrId: token.code ?? '' };
      if (token.system === undefined) return { OR: [{ id: token.code ?? '' }, { ehrId: token.code ?? '' }] };
      return { id: { in: [] } };
    }
    case 'name': {
      const exact = criterion.modifier === 'exact';
      const text = exact ? { equals: value } : { startsWith: value, mode: 'insensitive' as const };
      return {
        OR: [
          { family: text },
          { givenNames: exact ? { has: value } : { hasSome: [value] } },
          ...(exact ? [] : [{ family: { contains: ` ${value}`, mode: 'insensitive' as const } }]),
        ],
      };
    }
    case 'birthdate': {
      const p = parseDateParam('birthdate', value);
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      // Birth dates are YYYY-MM-DD strings: compare them as text.
      switch (p.prefix) {
        case 'eq':
          return { birthDate: { gte: day(p.lo), lt: day(p.hi) } };
        case 'ne':
          return { NOT: { birthDate: { gte: day(p.lo), lt: day(p.hi) } } };
        case 'lt':
          return { birthDate: { lt: day(p.lo) } };
        case 'le':
          return { birthDate: { lt: day(p.hi) } };
        case 'gt':
          return { birthDate: { gte: day(p.hi) } };
        case 'ge':
          return { birthDate: { gte: day(p.lo) } };
      }
    }
  }
  throw validationError(`Search parameter '${criterion.name}' is not supported for Patient`);
}

/** The values every criterion allows (AND of ORs), or null when there is no criterion. */
function intersect(lists: string[][]): string[] | null {
  if (lists.length === 0) return null;
  return lists.reduce((acc, list) => acc.filter((v) => list.includes(v)));
}

/** A search with criteria only (for includes and $everything). */
function bareSearch(criteria: SearchCriterion[], count: number): ParsedSearch {
  return { criteria, count, offset: 0, sort: [], include: [], revinclude: [], used: [], ignored: [] };
}

/** A match as `_summary=true` or `_elements` asks. */
function shaped(resource: FhirResource, search: ParsedSearch): FhirResource {
  if (search.summary === 'true') return subset(resource, SUMMARY_ELEMENTS[resource.resourceType] ?? []);
  if (search.elements) return subset(resource, [...search.elements, ...(MANDATORY_ELEMENTS[resource.resourceType] ?? [])]);
  return resource;
}

/**
 * `selfPath`: the searched path, relative to the service base like every URL
 * of the Bundle. The links repeat only the parameters used (FHIR: the self
 * link shows what the server applied); ignored ones are reported in an
 * OperationOutcome entry (search mode `outcome`).
 */
function searchBundle(selfPath: string, search: ParsedSearch, resources: FhirResource[], total: number, included: FhirResource[]): Bundle {
  const link = (offset: number) => {
    const query = new URLSearchParams(search.used.filter((p) => p.name !== '_count' && p.name !== '_offset').map((p): [string, string] => [p.name, p.value]));
    query.set('_count', String(search.count));
    query.set('_offset', String(offset));
    return `${selfPath}?${query.toString()}`;
  };
  const paged = search.summary !== 'count';
  const outcome = search.ignored.length
    ? [
        {
          resource: {
            resourceType: 'OperationOutcome',
            issue: search.ignored.map((p) => ({ severity: 'warning', code: 'not-supported', diagnostics: `Ignored ${p.name}=${p.value}: ${p.reason}` })),
          },
          search: { mode: 'outcome' },
        },
      ]
    : [];
  return withoutEmpty({
    resourceType: 'Bundle',
    type: 'searchset',
    total,
    link: [
      { relation: 'self', url: link(search.offset) },
      ...(paged && search.offset + search.count < total ? [{ relation: 'next', url: link(search.offset + search.count) }] : []),
      ...(paged && search.offset > 0 ? [{ relation: 'previous', url: link(Math.max(0, search.offset - search.count)) }] : []),
    ],
    entry: [
      ...resources.map((resource) => ({ fullUrl: `${resource.resourceType}/${resource.id}`, resource, search: { mode: 'match' } })),
      ...included.map((resource) => ({ fullUrl: `${resource.resourceType}/${resource.id}`, resource, search: { mode: 'include' } })),
      ...outcome,
    ],
  });
}

/** An If-Match version id (already without W/"…"), or undefined without one. */
function expectedVersion(ifMatch: string | null | undefined): number | undefined {
  if (ifMatch === undefined || ifMatch === null) return undefined;
  if (!VERSION.test(ifMatch)) throw validationError('If-Match must be W/"<versionId>"', [{ path: 'If-Match', message: 'not a version id' }]);
  return Number(ifMatch);
}

function gone(resourceType: string, id: string, versionId?: string): AppError {
  return new AppError('GONE', `${resourceType}/${id}${versionId ? `/_history/${versionId}` : ''} was deleted`);
}
