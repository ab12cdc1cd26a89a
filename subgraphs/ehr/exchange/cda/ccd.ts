import { createHash } from 'node:crypto';
import { convertCcdaToXml, convertFhirToCcda, type Ccda } from '@medplum/ccda';
import type { FhirResource } from '../fhir/mapping';
import { LOINC } from '../fhir/mapping';

/**
 * FHIR → CDA R2 (C-CDA 2.1 Continuity of Care Document). The clinical record's
 * FHIR mapping gives the resources; @medplum/ccda turns a FHIR document Bundle
 * into C-CDA entries (templateIds, LOINC codes, UCUM units) and serializes
 * it. What it leaves out or gets wrong for a valid document is fixed up here:
 * instance identifiers as UUID roots, setId/versionNumber, the service event
 * the CCD requires, narrative text of every section, note entries, the
 * organizers C-CDA 2.1 puts around vital signs and results, code systems of
 * routes and the software name of the authoring device.
 */

/** The sections of every document, in order: LOINC section code, title and the resources each takes. */
const SECTIONS = [
  { code: '48765-2', title: 'Allergies and adverse reactions', takes: () => false },
  { code: '11450-4', title: 'Problem list', takes: () => false },
  { code: '29762-2', title: 'Social history', takes: () => false },
  { code: '10160-0', title: 'Medications', takes: (r: FhirResource) => r.resourceType === 'MedicationRequest' },
  { code: '8716-3', title: 'Vital signs', takes: (r: FhirResource) => category(r) === 'vital-signs' },
  { code: '30954-2', title: 'Results', takes: (r: FhirResource) => category(r) === 'laboratory' },
  { code: '46240-8', title: 'Encounters', takes: (r: FhirResource) => r.resourceType === 'Encounter' },
  { code: '11488-4', title: 'Notes', takes: (r: FhirResource) => r.resourceType === 'DocumentReference' },
] as const;

const category = (r: FhirResource): string | undefined => (r.resourceType === 'Observation' ? r.category?.[0]?.coding?.[0]?.code : undefined);

const OID = {
  loinc: '2.16.840.1.113883.6.1',
  actCode: '2.16.840.1.113883.5.4',
  snomed: '2.16.840.1.113883.6.96',
  edqm: '0.4.0.127.0.16.1.1.2.1',
};
const NOTE_ACTIVITY = '2.16.840.1.113883.10.20.22.4.202';
const VITAL_SIGNS_ORGANIZER = '2.16.840.1.113883.10.20.22.4.26';
const RESULT_ORGANIZER = '2.16.840.1.113883.10.20.22.4.1';
/** The code every Vital Signs Organizer carries (C-CDA 2.1, CONF:1198-32740 to 32742), LOINC's panel code as translation. */
const VITAL_SIGNS_CODE = {
  '@_code': '46680005',
  '@_codeSystem': OID.snomed,
  '@_codeSystemName': 'SNOMED CT',
  '@_displayName': 'Vital signs',
  translation: [
    {
      '@_code': '74728-7',
      '@_codeSystem': OID.loinc,
      '@_codeSystemName': 'LOINC',
      '@_displayName': 'Vital signs, weight, height, head circumference, oximetry, BMI, and BSA panel',
    },
  ],
};

/** Name-based (version 5) UUID: the same name always gives the same identifier. */
export function nameUuid(name: string): string {
  const hash = createHash('sha1').update(`caregraph:cda:${name}`).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`.toUpperCase();
}

const UID = /^([0-2](\.(0|[1-9]\d*))+|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})$/;

export interface DocumentInput {
  tenantId: string;
  /** The document instance's id (a UUID). */
  documentId: string;
  /** The document set (a UUID) and this document's version in it. */
  setId: string;
  version: number;
  effectiveTime: Date;
  title: string;
  patient: FhirResource;
  /** Clinical resources of the FHIR mapping (Observation, Encounter, MedicationRequest, DocumentReference); others are not exported. */
  resources: FhirResource[];
}

type Json = Record<string, any>;

/** The CDA document as XML. */
export function buildCcd(input: DocumentInput): string {
  const patient = input.patient;
  const resources = input.resources.filter((r) => SECTIONS.some((s) => s.takes(r)));
  const organization = { resourceType: 'Organization', id: input.tenantId, name: input.tenantId };
  const sections = SECTIONS.map((s) => {
    const entries = resources.filter(s.takes);
    return {
      title: s.title,
      code: { coding: [{ system: LOINC, code: s.code }] },
      // Notes become entries below: @medplum/ccda has no mapping for DocumentReference.
      entry: s.code === '11488-4' ? [] : entries.map((r) => ({ reference: `${r.resourceType}/${r.id}` })),
    };
  });
  const composition = {
    resourceType: 'Composition',
    id: input.documentId,
    status: 'final',
    type: { coding: [{ system: LOINC, code: '34133-9' }] },
    subject: { reference: `Patient/${patient.id}` },
    date: input.effectiveTime.toISOString(),
    title: input.title,
    confidentiality: 'N',
    language: 'en-US',
    author: [{ reference: `Organization/${input.tenantId}` }],
    custodian: { reference: `Organization/${input.tenantId}` },
    section: sections,
  };
  const bundle = {
    resourceType: 'Bundle' as const,
    type: 'document' as const,
    entry: [composition, patient, organization, ...resources.map(withEncounterType)].map((resource) => ({ resource })),
  };
  const ccda = convertFhirToCcda(bundle as any);
  const structured = (ccda.component as Json | undefined)?.structuredBody.component as Array<{ section: Json[] }>;
  structured.forEach(({ section: [section] }, i) => {
    const entries = resources.filter(SECTIONS[i].takes);
    if (SECTIONS[i].code === '11488-4') section.entry = entries.map(noteEntry);
    if (SECTIONS[i].code === '10160-0') section.entry.forEach((entry: Json, j: number) => withMedicationPeriod(entry, entries[j]));
    if (SECTIONS[i].code === '8716-3') section.entry = section.entry.map((entry: Json) => inOrganizer(entry, VITAL_SIGNS_ORGANIZER, VITAL_SIGNS_CODE));
    if (SECTIONS[i].code === '30954-2') section.entry = section.entry.map((entry: Json) => inOrganizer(entry, RESULT_ORGANIZER, undefined, true));
    withR11TemplateIds(section);
    if (entries.length === 0) {
      section['@_nullFlavor'] = 'NI';
      section.entry = [];
    } else delete section['@_nullFlavor'];
    section.text = narrative(entries);
  });
  const namespace = nameUuid(`tenant:${input.tenantId}`);
  const document: Json = {
    realmCode: ccda.realmCode,
    typeId: ccda.typeId,
    templateId: ccda.templateId,
    id: [{ '@_root': input.documentId }],
    code: ccda.code,
    title: ccda.title,
    effectiveTime: ccda.effectiveTime,
    confidentialityCode: ccda.confidentialityCode,
    languageCode: ccda.languageCode,
    setId: { '@_root': input.setId },
    versionNumber: { '@_value': String(input.version) },
    recordTarget: ccda.recordTarget,
    author: ccda.author,
    custodian: ccda.custodian,
    documentationOf: serviceEvent(input, resources),
    component: ccda.component,
  };
  fixUp(document, namespace);
  // C-CDA requires the patient's name (CONF:1198-5284); a patient registered without one has an unknown name.
  for (const target of [document.recordTarget ?? []].flat() as Json[]) {
    const person = target.patientRole?.patient;
    if (person && !person.name) person.name = [{ '@_nullFlavor': 'UNK' }];
  }
  return convertCcdaToXml(document as Ccda);
}

/** Encounter Activity needs a code: the encounter's class (ActCode) when the record has no type. */
function withEncounterType(r: FhirResource): FhirResource {
  if (r.resourceType !== 'Encounter' || r.type || !r.class) return r;
  return { ...r, type: [{ coding: [r.class] }] };
}

/**
 * C-CDA 2.1 sections carry the templateId of their R1.1 version (no extension) beside the versioned one, so
 * R1.1 receivers recognise them (the Schematron's "compatible R1.1 templateId" rule); @medplum/ccda omits some.
 */
function withR11TemplateIds(section: Json): void {
  const ids = section.templateId as Json[];
  for (const id of [...ids]) if (id['@_extension'] && !ids.some((o) => o['@_root'] === id['@_root'] && !o['@_extension'])) ids.push({ '@_root': id['@_root'] });
}

/**
 * C-CDA 2.1 puts every vital sign in a Vital Signs Organizer and every result in a Result Organizer; @medplum/ccda
 * makes an organizer only for a panel (blood pressure), coded as the panel, and leaves single observations bare.
 * An organizer made here takes its observation's code (or `code`) and time, as an interval when `interval` (a Result
 * Organizer's effectiveTime has low and high), and an identifier of its own.
 */
function inOrganizer(entry: Json, templateRoot: string, code?: Json, interval = false): Json {
  const templateId = [{ '@_root': templateRoot }, { '@_root': templateRoot, '@_extension': '2015-08-01' }];
  if (entry.organizer) {
    const [organizer] = entry.organizer as Json[];
    return { organizer: [{ ...organizer, templateId, code: code ?? organizer.code }] };
  }
  const [observation] = entry.observation as Json[];
  const observationId = (observation.id as Json[])[0];
  const organizer = {
    '@_classCode': 'CLUSTER',
    '@_moodCode': 'EVN',
    templateId,
    id: [{ '@_root': nameUuid(`organizer:${observationId['@_root']}:${observationId['@_extension'] ?? ''}`) }],
    code: code ?? observation.code,
    statusCode: { '@_code': 'completed' },
    effectiveTime: interval ? (observation.effectiveTime as Json[]).map((t) => ({ low: t, high: t })) : observation.effectiveTime,
    component: [{ observation: [observation] }],
  };
  return { organizer: [organizer] };
}

/**
 * Medication Activity needs the order's period (an IVL_TS with low) beside its frequency; @medplum/ccda drops
 * the bounds. A drug the record names only in text gets the code nullFlavor OTH with that text as originalText.
 */
function withMedicationPeriod(entry: Json, order: FhirResource): void {
  const administration = entry.substanceAdministration?.[0];
  const material = administration?.consumable?.manufacturedProduct?.[0]?.manufacturedMaterial?.[0];
  if (material && !material.code?.[0]?.['@_code']) material.code = [{ '@_nullFlavor': 'OTH', originalText: order.medicationCodeableConcept?.text }];
  const bounds = order.dosageInstruction?.[0]?.timing?.repeat?.boundsPeriod;
  if (!administration || !bounds?.start) return;
  const period = {
    '@_xsi:type': 'IVL_TS',
    low: { '@_value': bounds.start.replaceAll('-', '') },
    ...(bounds.end ? { high: { '@_value': bounds.end.replaceAll('-', '') } } : { high: { '@_nullFlavor': 'NI' } }),
  };
  administration.effectiveTime = [period, ...(administration.effectiveTime ?? [])];
}

/** The CCD's documentationOf/serviceEvent: the span of care the document covers. */
function serviceEvent(input: DocumentInput, resources: FhirResource[]): Json {
  const times = resources
    .flatMap((r) => [r.effectiveDateTime, r.period?.start, r.authoredOn, r.date])
    .filter((t): t is string => typeof t === 'string')
    .map((t) => Date.parse(t))
    .filter((t) => !Number.isNaN(t));
  const low = times.length ? new Date(Math.min(...times)) : input.effectiveTime;
  return {
    serviceEvent: {
      '@_classCode': 'PCPR',
      effectiveTime: [{ low: { '@_value': cdaTime(low) }, high: { '@_value': cdaTime(input.effectiveTime) } }],
    },
  };
}

const cdaTime = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d{3}Z$/, '+0000');

/** A Note Activity (C-CDA Notes section) from a clinical note's DocumentReference: its type, time and text. */
function noteEntry(note: FhirResource): Json {
  const type = note.type?.coding?.[0];
  const body = Buffer.from(note.content?.[0]?.attachment?.data ?? '', 'base64').toString('utf8');
  return {
    act: [
      {
        '@_classCode': 'ACT',
        '@_moodCode': 'EVN',
        templateId: [{ '@_root': NOTE_ACTIVITY, '@_extension': '2016-11-01' }],
        id: [{ '@_root': note.id }],
        code: {
          '@_code': '34109-9',
          '@_codeSystem': OID.loinc,
          '@_codeSystemName': 'LOINC',
          '@_displayName': 'Note',
          ...(type ? { translation: [{ '@_code': type.code, '@_codeSystem': OID.loinc, '@_codeSystemName': 'LOINC', '@_displayName': type.display }] } : {}),
        },
        text: { '#text': body },
        statusCode: { '@_code': 'completed' },
        effectiveTime: [{ '@_value': cdaTime(new Date(note.date)) }],
      },
    ],
  };
}

/** A section's human-readable text: one list item per entry, or "No information" for an empty section. */
function narrative(entries: FhirResource[]): Json {
  if (entries.length === 0) return { paragraph: ['No information'] };
  return { list: [{ item: entries.map((r) => ({ '#text': describe(r) })) }] };
}

const quantityText = (q?: Json) => (q ? `${q.value} ${q.unit ?? ''}`.trim() : '');
const codeText = (c?: Json) => c?.text ?? c?.coding?.[0]?.display ?? c?.coding?.[0]?.code ?? '';

function describe(r: FhirResource): string {
  switch (r.resourceType) {
    case 'Observation': {
      const values = r.component
        ? r.component.map((c: Json) => `${codeText(c.code)} ${quantityText(c.valueQuantity)}`).join(', ')
        : quantityText(r.valueQuantity);
      return `${r.effectiveDateTime}: ${codeText(r.code)} ${values}`.trim();
    }
    case 'MedicationRequest': {
      const dose = r.dosageInstruction?.[0];
      const times = dose?.timing?.repeat?.frequency;
      return [codeText(r.medicationCodeableConcept), quantityText(dose?.doseAndRate?.[0]?.doseQuantity), times ? `${times} times a day` : '', dose?.text ?? '']
        .filter(Boolean)
        .join(', ');
    }
    case 'Encounter':
      return [
        `${r.period?.start}${r.period?.end ? ` to ${r.period.end}` : ''}`,
        r.class?.display ?? r.class?.code,
        r.location?.[0]?.location?.display,
        r.reasonCode?.[0]?.text,
      ]
        .filter(Boolean)
        .join(', ');
    case 'DocumentReference':
      return `${r.date}: ${r.description ?? codeText(r.type)}`;
  }
  return r.resourceType;
}

/**
 * Instance identifiers are UIDs (OID or UUID) in CDA: a record's own id
 * becomes the extension under the tenant's namespace UUID. Codes whose code
 * system @medplum/ccda does not know get theirs, and the authoring device is
 * named after this software.
 */
function fixUp(node: unknown, namespace: string): void {
  if (Array.isArray(node)) return node.forEach((n) => fixUp(n, namespace));
  if (!node || typeof node !== 'object') return;
  const obj = node as Json;
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'id' && Array.isArray(value)) {
      obj.id = value.map((id: Json) =>
        typeof id['@_root'] === 'string' && !UID.test(id['@_root']) ? { '@_root': namespace, '@_extension': id['@_root'] } : id,
      );
    } else if (key === 'routeCode' && value && !value['@_codeSystem']) {
      obj.routeCode = { ...value, '@_codeSystem': OID.edqm, '@_codeSystemName': 'EDQM Standard Terms' };
    } else if (key === 'assignedAuthoringDevice') {
      obj.assignedAuthoringDevice = { manufacturerModelName: 'CareGraph', softwareName: 'CareGraph' };
    } else fixUp(value, namespace);
  }
}
