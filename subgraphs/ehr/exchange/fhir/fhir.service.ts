import { AppError, notFound, validationError } from '../../../../common/errors';
import type { CompositionService, CompositionView } from '../../compositions/composition.service';
import type { PatientService } from '../../patients/patient.service';
import type { AppointmentService } from '../../appointments/appointment.service';
import type { ClinicalTemplateService } from '../../templates/clinical-template.service';
import type { DataArea } from '../../policy/rules';
import type { ClinicalTemplate as TemplateRow, Prisma } from '../../db/generated/client';
import { capabilityStatement, FHIR_RESOURCE_TYPES, WRITABLE_TYPES } from './capability';
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
  type FhirResource,
  type MappedTemplate,
} from './mapping';
import { appointmentInput, patientInput, vitalSignsInput, type AppointmentInput } from './inbound';
import {
  matchesCriterion,
  parseDateParam,
  parseSearch,
  parseToken,
  referenceId,
  resourceDate,
  type ParsedSearch,
  type RawParam,
  type SearchCriterion,
} from './search';
import { ARCHETYPE } from './mapping';

/** The data area each composition-backed resource type lives in. */
const AREA_OF: Record<string, DataArea> = { Observation: 'observation', Encounter: 'encounter', MedicationRequest: 'order', DocumentReference: 'document' };
/** Most compositions one search or $everything decrypts and maps; beyond it the query must be narrowed. */
const SCAN_CAP = 5000;
const VERSION = /^[1-9]\d{0,8}$/;

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
    private readonly systemId: string,
  ) {}

  capabilities() {
    return capabilityStatement({ version: process.env.npm_package_version ?? '0.1.0', date: '2026-11-22' });
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
    this.assertType(resourceType);
    if (versionId !== undefined && versionId !== null && !VERSION.test(versionId)) throw notFound(`${resourceType} version`, `${id}/_history/${versionId}`);
    if (versionId) {
      const version = (await this.history(resourceType, id)).find((v) => v.versionId === versionId);
      if (!version) throw notFound(`${resourceType} version`, `${id}/_history/${versionId}`);
      if (!version.resource) throw notFound(`${resourceType} version`, `${id}/_history/${versionId} (deleted)`);
      return version.resource;
    }
    switch (resourceType) {
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
        const composition = await this.compositions.get(ref.compositionId);
        const resource = await this.compositionResource(resourceType, id, composition);
        if (!resource) throw notFound(resourceType, id);
        return resource;
      }
    }
  }

  // ---- history -------------------------------------------------------------

  /** Every version of a resource, oldest first; `resource` is absent for a deletion. */
  async history(resourceType: string, id: string): Promise<HistoryVersion[]> {
    this.assertType(resourceType);
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
        const result = versions.flatMap((v): HistoryVersion[] => {
          if (v.changeType === 'deleted') return [{ versionId: String(v.version), at: v.committedAt, method: 'DELETE' }];
          const resource = compositionToResources(v, definition).find((r) => r.id === id);
          return resource ? [{ versionId: String(v.version), at: v.committedAt, method: v.version === 1 ? 'POST' : 'PUT', resource }] : [];
        });
        if (result.length === 0) throw notFound(resourceType, id);
        return result;
      }
    }
  }

  async historyBundle(resourceType: string, id: string): Promise<Bundle> {
    const versions = (await this.history(resourceType, id)).reverse();
    return {
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
    };
  }

  // ---- search --------------------------------------------------------------

  async search(resourceType: string, params: RawParam[]): Promise<Bundle> {
    this.assertType(resourceType);
    const search = parseSearch(resourceType, params);
    const { resources, total } = await this.matches(resourceType, search);
    return searchBundle(resourceType, params, search, resources, total);
  }

  private async matches(resourceType: string, search: ParsedSearch): Promise<{ resources: FhirResource[]; total: number }> {
    if (resourceType === 'Patient') return this.searchPatients(search);
    if (resourceType === 'Appointment') return this.searchAppointments(search);
    const patientCriteria = search.criteria.filter((c) => c.name === 'patient');
    const others = search.criteria.filter((c) => c.name !== 'patient');
    const patientIds = intersect(patientCriteria.map((c) => c.values.map((v) => referenceId(v))));
    const found: FhirResource[] = [];
    for (const patientId of patientIds ?? [null]) {
      for (const resource of await this.clinicalResources(resourceType, patientId)) {
        if (others.every((c) => matchesCriterion(resource, c))) found.push(resource);
      }
    }
    found.sort(byDateDesc);
    return { resources: found.slice(search.offset, search.offset + search.count), total: found.length };
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
    const and: Prisma.PatientWhereInput[] = search.criteria.map((criterion) => ({ OR: criterion.values.map((value) => patientCondition(criterion, value)) }));
    const page = await this.patients.search({ AND: and }, search.count, search.offset);
    const versions = await this.patients.versionsOf(page.data.map((p) => p.id));
    return { resources: page.data.map((p) => patientToResource(p, versions.get(p.id)!)), total: page.pagination.total };
  }

  private async searchAppointments(search: ParsedSearch): Promise<{ resources: FhirResource[]; total: number }> {
    const patientIds = intersect(search.criteria.filter((c) => c.name === 'patient').map((c) => c.values.map((v) => referenceId(v))));
    const statusCriteria = search.criteria.filter((c) => c.name === 'status');
    const statuses = intersect(
      statusCriteria.map((c) => c.values.flatMap((v) => Object.keys(FHIR_APPOINTMENT_STATUS).filter((s) => FHIR_APPOINTMENT_STATUS[s] === parseToken(v).code))),
    );
    const dates = search.criteria.filter((c) => c.name === 'date');
    if ((patientIds && patientIds.length !== 1) || dates.some((d) => d.values.length > 1)) {
      throw validationError('Appointment search takes one patient and one value per date parameter', [{ path: 'patient', message: 'one value' }]);
    }
    // Date bounds narrow the database query; the exact prefix semantics are applied after.
    const bounds = dates.map((d) => parseDateParam('date', d.values[0]));
    const from = bounds.filter((b) => ['eq', 'gt', 'ge'].includes(b.prefix)).map((b) => (b.prefix === 'gt' ? b.hi : b.lo));
    const to = bounds.filter((b) => ['eq', 'lt', 'le'].includes(b.prefix)).map((b) => (b.prefix === 'lt' ? b.lo : b.hi) - 1);
    const rows: FhirResource[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await this.appointments.forPatient(
        patientIds?.[0] ?? null,
        {
          statuses: statuses ?? undefined,
          from: from.length ? new Date(Math.max(...from)).toISOString() : null,
          to: to.length ? new Date(Math.min(...to)).toISOString() : null,
        },
        100,
        offset,
      );
      const versions = await this.appointments.versionsOf(page.data.map((a) => a.id));
      rows.push(...page.data.map((a) => appointmentToResource(a, versions.get(a.id)!)).filter((r) => dates.every((d) => matchesCriterion(r, d))));
      if (offset + 100 >= page.pagination.total || offset + 100 >= SCAN_CAP) break;
    }
    return { resources: rows.slice(search.offset, search.offset + search.count), total: rows.length };
  }

  // ---- $everything ---------------------------------------------------------

  async everything(patientId: string, params: RawParam[]): Promise<Bundle> {
    const search = parseSearch('Everything', params);
    const all = await this.everythingResources(patientId);
    return searchBundle(`Patient/${patientId}/$everything`, params, search, all.slice(search.offset, search.offset + search.count), all.length);
  }

  /** Every resource of $everything, unpaged: the Patient first, then clinical resources newest first, then appointments (the CDA export reads these). */
  async everythingResources(patientId: string): Promise<FhirResource[]> {
    const patient = await this.read('Patient', patientId);
    const clinical = (await this.compositions.scan({ patientId }, SCAN_CAP)).filter((c) => c.content);
    const definitions = new Map<string, MappedTemplate>();
    for (const id of new Set(clinical.map((c) => c.templateId))) definitions.set(id, await this.definition(id));
    const resources = clinical.flatMap((c) => compositionToResources(c, definitions.get(c.templateId)!)).sort(byDateDesc);
    const appointments = await this.searchAppointments({ criteria: [{ name: 'patient', kind: 'reference', values: [patientId] }], count: SCAN_CAP, offset: 0 });
    return [patient, ...resources, ...appointments.resources];
  }

  // ---- create, update ------------------------------------------------------

  async create(resource: FhirResource, reason?: string | null): Promise<FhirResource> {
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

function byDateDesc(a: FhirResource, b: FhirResource): number {
  const da = Date.parse(resourceDate(a) ?? '') || 0;
  const db = Date.parse(resourceDate(b) ?? '') || 0;
  return db - da || String(a.id).localeCompare(String(b.id));
}

/** `selfPath`: the searched path, relative to the service base like every URL of the Bundle. */
function searchBundle(selfPath: string, params: RawParam[], search: ParsedSearch, resources: FhirResource[], total: number): Bundle {
  const link = (offset: number) => {
    const query = new URLSearchParams(params.filter((p) => p.name !== '_count' && p.name !== '_offset').map((p): [string, string] => [p.name, p.value]));
    query.set('_count', String(search.count));
    query.set('_offset', String(offset));
    return `${selfPath}?${query.toString()}`;
  };
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    total,
    link: [
      { relation: 'self', url: link(search.offset) },
      ...(search.offset + search.count < total ? [{ relation: 'next', url: link(search.offset + search.count) }] : []),
      ...(search.offset > 0 ? [{ relation: 'previous', url: link(Math.max(0, search.offset - search.count)) }] : []),
    ],
    entry: resources.map((resource) => ({ fullUrl: `${resource.resourceType}/${resource.id}`, resource, search: { mode: 'match' } })),
  };
}
