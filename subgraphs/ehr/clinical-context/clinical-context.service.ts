import { validationError } from '../../../common/errors';
import type { TenantStore } from '../db/store';
import type { PatientService } from '../patients/patient.service';
import type { AppointmentService } from '../appointments/appointment.service';
import type { CompositionService, CompositionView } from '../compositions/composition.service';
import type { ConsentService } from '../consents/consent.service';
import type { ClinicalTemplateService } from '../templates/clinical-template.service';
import type { AccessPolicyService } from '../policy/access-policy.service';
import { assertAgentConsent, disclosure, type DataArea, type Disclosure } from '../policy/rules';
import { compositionToResources, mappedTemplate, type FhirResource } from '../exchange/fhir/mapping';
import { parseBound } from '../common/dates';
import { systemClock, type Clock } from '../../../common/clock';
import { initialsOf } from '../../../common/initials';
import { PURPOSES_OF_USE, type PurposeOfUse } from '../../../common/auth/purpose-of-use';

/**
 * One patient's clinical context in one typed, FHIR-coded model, for web apps
 * (GraphQL `clinicalContext`) and AI agents (the MCP server) alike. Every read
 * goes through the services and so through the policy point; an agent also
 * needs the patient's ai_assistance consent; contact details and free text
 * are redacted unless role and consent allow (rules.ts, DISCLOSURE_RULES);
 * each call leaves an access-log entry with its declared purpose of use.
 */

export const CONTEXT_SECTIONS = ['demographics', 'medications', 'vitals', 'labs', 'encounters', 'notes', 'appointments', 'communication'] as const;
export type ContextSection = (typeof CONTEXT_SECTIONS)[number];

/** Where each clinical section's data lives. */
const AREA_OF_SECTION: Partial<Record<ContextSection, DataArea>> = {
  medications: 'order',
  vitals: 'observation',
  labs: 'observation',
  encounters: 'encounter',
  notes: 'document',
};
const MAX_ITEMS = 100;
const DEFAULT_ITEMS = 10;
/** Most compositions one context decrypts; a larger record is narrowed with `since`. */
const SCAN_CAP = 2000;

interface Coding {
  system: string;
  code: string;
  display: string | null;
}
interface Quantity {
  value: number;
  unit: string;
  system: string;
  code: string;
}
interface ObservationEntry {
  id: string;
  compositionUid: string;
  status: string;
  category: string;
  code: Coding;
  text: string | null;
  effective: string;
  value: Quantity | null;
  interpretation: Coding | null;
  referenceRange: string | null;
  components: Array<{ code: Coding | null; text: string | null; value: Quantity | null; interpretation: Coding | null; referenceRange: string | null }>;
  note: string | null;
}
interface MedicationEntry {
  id: string;
  compositionUid: string;
  status: string;
  medication: string;
  authoredOn: string;
  dose: Quantity | null;
  dosesPerDay: number | null;
  route: Coding | null;
  start: string | null;
  end: string | null;
  asNeeded: boolean | null;
  instructions: string | null;
}
interface EncounterEntry {
  id: string;
  compositionUid: string;
  status: string;
  class: Coding | null;
  start: string;
  end: string | null;
  reason: string | null;
  location: string | null;
  appointmentId: string | null;
}
interface NoteEntry {
  id: string;
  compositionUid: string;
  type: Coding | null;
  title: string | null;
  date: string;
  author: string | null;
  text: string | null;
}
interface AppointmentEntry {
  id: string;
  start: Date;
  end: Date;
  status: string;
  location: string | null;
}
interface SectionInfo {
  section: ContextSection;
  /** Entries the record holds for the section (after `since`). */
  total: number;
  returned: number;
  truncated: boolean;
}

export interface ClinicalContextView {
  patientId: string;
  purpose: PurposeOfUse;
  purposeCode: string;
  generatedAt: Date;
  since: Date | null;
  maxItems: number;
  sections: ContextSection[];
  disclosure: Disclosure;
  coverage: SectionInfo[];
  demographics: {
    patientId: string;
    initials: string;
    birthYear: number | null;
    ageYears: number | null;
    gender: string | null;
    contact: { phone: string | null; email: string | null } | null;
  } | null;
  medications: MedicationEntry[] | null;
  vitals: ObservationEntry[] | null;
  labs: ObservationEntry[] | null;
  encounters: EncounterEntry[] | null;
  notes: NoteEntry[] | null;
  appointments: AppointmentEntry[] | null;
}

export interface ClinicalContextRequest {
  patientId: string;
  purpose: string;
  sections?: string[] | null;
  since?: string | null;
  until?: string | null;
  maxItems?: number | null;
  /** Observation codes (LOINC) to keep; vitals and labs only. */
  codes?: string[] | null;
}

type Json = Record<string, any>;
const codingOf = (concept: Json | undefined): Coding | null => {
  const c = concept?.coding?.[0] ?? (concept?.system ? concept : undefined);
  return c ? { system: c.system, code: c.code, display: c.display ?? null } : null;
};
const quantityOf = (q: Json | undefined): Quantity | null => (q ? { value: q.value, unit: q.unit, system: q.system, code: q.code } : null);
const newestFirst = <T>(entries: T[], date: (e: T) => string) => entries.sort((a, b) => Date.parse(date(b)) - Date.parse(date(a)));

export class ClinicalContextService {
  constructor(
    private readonly store: TenantStore,
    private readonly patients: PatientService,
    private readonly appointments: AppointmentService,
    private readonly compositions: CompositionService,
    private readonly consents: ConsentService,
    private readonly templates: ClinicalTemplateService,
    private readonly policy: AccessPolicyService,
    private readonly clock: Pick<Clock, 'now'> = systemClock,
  ) {}

  async get(request: ClinicalContextRequest): Promise<ClinicalContextView> {
    const { purpose, sections, since, until, maxItems, codes } = this.parse(request);
    const patientId = request.patientId;
    // Hidden or absent patients are NOT_FOUND here, before anything else is read.
    const patient = await this.patients.get(patientId);
    const consents = await this.consents.effective(patientId);
    const target = { patientId, consents };
    assertAgentConsent(this.store.identity, target);
    // Each clinical section's area is asked of the policy point up front: a role without it is refused, not given less.
    for (const section of sections) {
      const area = AREA_OF_SECTION[section];
      if (area) await this.policy.assert('read', area, target);
    }
    if (sections.includes('appointments')) await this.policy.assert('read', 'appointment', target);
    const shown = disclosure(this.store.identity, target);

    const view: ClinicalContextView = {
      patientId,
      purpose,
      purposeCode: PURPOSES_OF_USE[purpose],
      generatedAt: this.clock.now(),
      since: since ?? null,
      maxItems,
      sections,
      disclosure: shown,
      coverage: [],
      demographics: null,
      medications: null,
      vitals: null,
      labs: null,
      encounters: null,
      notes: null,
      appointments: null,
    };
    const take = <T>(section: ContextSection, entries: T[]): T[] => {
      view.coverage.push({ section, total: entries.length, returned: Math.min(entries.length, maxItems), truncated: entries.length > maxItems });
      return entries.slice(0, maxItems);
    };

    if (sections.includes('demographics')) {
      const birthYear = patient.birthDate ? Number(patient.birthDate.slice(0, 4)) : null;
      view.demographics = {
        patientId,
        initials: initialsOf(patient.name),
        birthYear,
        ageYears: patient.birthDate ? ageOn(patient.birthDate, view.generatedAt) : null,
        gender: patient.gender,
        contact: shown.contactDetails ? patient.contact : null,
      };
    }

    const resources = await this.resources(sections, patientId);
    const inRange = (date: string) => (!since || Date.parse(date) >= since.getTime()) && (!until || Date.parse(date) <= until.getTime());
    const observations = resources
      .filter((r) => r.resource.resourceType === 'Observation')
      .map((r) => observationEntry(r.resource, r.uid, shown.freeText))
      .filter((o) => inRange(o.effective) && (!codes || codes.includes(o.code.code) || o.components.some((c) => c.code && codes.includes(c.code.code))));
    if (sections.includes('vitals'))
      view.vitals = take(
        'vitals',
        newestFirst(
          observations.filter((o) => o.category === 'vital-signs'),
          (o) => o.effective,
        ),
      );
    if (sections.includes('labs'))
      view.labs = take(
        'labs',
        newestFirst(
          observations.filter((o) => o.category === 'laboratory'),
          (o) => o.effective,
        ),
      );
    if (sections.includes('medications')) {
      const meds = resources.filter((r) => r.resource.resourceType === 'MedicationRequest').map((r) => medicationEntry(r.resource, r.uid, shown.freeText));
      view.medications = take(
        'medications',
        newestFirst(
          meds.filter((m) => inRange(m.authoredOn)),
          (m) => m.authoredOn,
        ),
      );
    }
    if (sections.includes('encounters')) {
      const encounters = resources.filter((r) => r.resource.resourceType === 'Encounter').map((r) => encounterEntry(r.resource, r.uid, shown.freeText));
      view.encounters = take(
        'encounters',
        newestFirst(
          encounters.filter((e) => inRange(e.start)),
          (e) => e.start,
        ),
      );
    }
    if (sections.includes('notes')) {
      const notes = resources.filter((r) => r.resource.resourceType === 'DocumentReference').map((r) => noteEntry(r.resource, r.uid, shown.freeText));
      view.notes = take(
        'notes',
        newestFirst(
          notes.filter((n) => inRange(n.date)),
          (n) => n.date,
        ),
      );
    }
    if (sections.includes('appointments')) {
      // Upcoming: from now (or `since`, when later), soonest first.
      const from = since && since > view.generatedAt ? since : view.generatedAt;
      const page = await this.appointments.forPatient(
        patientId,
        { statuses: ['booked', 'confirmed'], from: from.toISOString(), to: until?.toISOString() },
        MAX_ITEMS,
        0,
      );
      view.appointments = take(
        'appointments',
        page.data.map((a) => ({ id: a.id, start: a.start, end: a.end, status: a.status, location: a.location })),
      );
    }
    if (sections.includes('communication')) view.coverage.push({ section: 'communication', total: 0, returned: 0, truncated: false });

    await this.store.read((tx) =>
      this.store.logAccess(tx, [{ entityType: 'ClinicalContext', entityId: sections.join(','), patientId, purpose: PURPOSES_OF_USE[purpose] }]),
    );
    return view;
  }

  private parse(request: ClinicalContextRequest) {
    if (!(request.purpose in PURPOSES_OF_USE))
      throw validationError(`Unknown purpose of use '${request.purpose}'`, [{ path: 'purpose', message: `one of ${Object.keys(PURPOSES_OF_USE).join(', ')}` }]);
    const sections = [...new Set(request.sections ?? CONTEXT_SECTIONS)] as ContextSection[];
    const unknown = sections.find((s) => !(CONTEXT_SECTIONS as readonly string[]).includes(s));
    if (unknown !== undefined)
      throw validationError(`Unknown section '${unknown}'`, [{ path: 'sections', message: `each one of ${CONTEXT_SECTIONS.join(', ')}` }]);
    if (sections.length === 0) throw validationError('Name at least one section', [{ path: 'sections', message: 'empty' }]);
    const maxItems = request.maxItems ?? DEFAULT_ITEMS;
    if (!Number.isInteger(maxItems) || maxItems < 1 || maxItems > MAX_ITEMS)
      throw validationError(`maxItems must be 1..${MAX_ITEMS}`, [{ path: 'maxItems', message: `1..${MAX_ITEMS}` }]);
    const codes = request.codes ?? null;
    if (codes && (codes.length === 0 || codes.length > 20 || codes.some((c) => !/^[A-Za-z0-9.-]{1,32}$/.test(c))))
      throw validationError('codes must be 1..20 codes such as 8480-6', [{ path: 'codes', message: 'invalid' }]);
    return {
      purpose: request.purpose as PurposeOfUse,
      sections,
      since: parseBound('since', request.since),
      until: parseBound('until', request.until, true),
      maxItems,
      codes,
    };
  }

  /** The FHIR resources of the patient's compositions in the areas the sections need (each composition read is access-logged). */
  private async resources(sections: ContextSection[], patientId: string): Promise<Array<{ resource: FhirResource; uid: string }>> {
    const areas = [...new Set(sections.map((s) => AREA_OF_SECTION[s]).filter((a): a is DataArea => a !== undefined))];
    const compositions: CompositionView[] = [];
    for (const area of areas) compositions.push(...(await this.compositions.scan({ patientId, area }, SCAN_CAP)));
    const result: Array<{ resource: FhirResource; uid: string }> = [];
    for (const composition of compositions) {
      if (!composition.content) continue;
      const template = await this.templates.get(composition.templateId);
      for (const resource of compositionToResources(composition, mappedTemplate(this.templates, template))) result.push({ resource, uid: composition.uid });
    }
    return result;
  }
}

function ageOn(birthDate: string, at: Date): number {
  const [y, m, d] = birthDate.split('-').map(Number);
  const beforeBirthday = at.getUTCMonth() + 1 < m || (at.getUTCMonth() + 1 === m && at.getUTCDate() < d);
  return at.getUTCFullYear() - y - (beforeBirthday ? 1 : 0);
}

function observationEntry(r: FhirResource, uid: string, freeText: boolean): ObservationEntry {
  const component = (c: Json) => ({
    code: codingOf(c.code),
    text: c.code?.text ?? null,
    value: quantityOf(c.valueQuantity),
    interpretation: codingOf(c.interpretation?.[0]),
    referenceRange: c.referenceRange?.[0]?.text ?? null,
  });
  return {
    id: r.id!,
    compositionUid: uid,
    status: r.status,
    category: r.category?.[0]?.coding?.[0]?.code ?? 'unknown',
    code: codingOf(r.code)!,
    text: r.code?.text ?? r.code?.coding?.[0]?.display ?? null,
    effective: r.effectiveDateTime,
    value: quantityOf(r.valueQuantity),
    interpretation: codingOf(r.interpretation?.[0]),
    referenceRange: r.referenceRange?.[0]?.text ?? null,
    components: (r.component ?? []).map(component),
    note: freeText ? (r.note?.map((n: Json) => n.text).join('\n') ?? null) : null,
  };
}

function medicationEntry(r: FhirResource, uid: string, freeText: boolean): MedicationEntry {
  const dosage = r.dosageInstruction?.[0] ?? {};
  const repeat = dosage.timing?.repeat ?? {};
  return {
    id: r.id!,
    compositionUid: uid,
    status: r.status,
    medication: r.medicationCodeableConcept?.text,
    authoredOn: r.authoredOn,
    dose: quantityOf(dosage.doseAndRate?.[0]?.doseQuantity),
    dosesPerDay: repeat.frequency ?? null,
    route: codingOf(dosage.route),
    start: repeat.boundsPeriod?.start ?? null,
    end: repeat.boundsPeriod?.end ?? null,
    asNeeded: dosage.asNeededBoolean ?? null,
    instructions: freeText ? (dosage.text ?? null) : null,
  };
}

function encounterEntry(r: FhirResource, uid: string, freeText: boolean): EncounterEntry {
  return {
    id: r.id!,
    compositionUid: uid,
    status: r.status,
    class: r.class ? { system: r.class.system, code: r.class.code, display: r.class.display ?? null } : null,
    start: r.period.start,
    end: r.period.end ?? null,
    reason: freeText ? (r.reasonCode?.[0]?.text ?? null) : null,
    location: r.location?.[0]?.location?.display ?? null,
    appointmentId: r.appointment?.[0]?.reference?.replace(/^Appointment\//, '') ?? null,
  };
}

function noteEntry(r: FhirResource, uid: string, freeText: boolean): NoteEntry {
  const attachment = r.content?.[0]?.attachment;
  return {
    id: r.id!,
    compositionUid: uid,
    type: codingOf(r.type),
    title: freeText ? (r.description ?? null) : null,
    date: r.date,
    author: r.author?.[0]?.display ?? null,
    text: freeText && attachment?.data ? Buffer.from(attachment.data, 'base64').toString('utf8') : null,
  };
}
