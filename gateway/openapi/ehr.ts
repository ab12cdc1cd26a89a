import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { COMPOSITION_AREAS, createAppointmentSchema, createCompositionSchema, updateAppointmentSchema, updateCompositionSchema } from '../rest/ehr';
import { authenticated, dateTime, json, jsonBody, pagination, pagingQuery, pathId, rateHeaders } from './common';
import { appointment, EXAMPLE_PATIENT, patient } from './messaging';

/** `/api/ehr/…` clinical record paths (docs/api.md §8). */

const composition = z
  .strictObject({
    uid: z.string().meta({ description: 'Version uid `<uuid>::<system-id>::<version>`.' }),
    id: z.string().meta({ description: 'The versioned object (the same for every version).' }),
    ehrId: z.string(),
    patientId: z.string(),
    templateId: z.string(),
    area: z.enum(['ENCOUNTER', 'OBSERVATION', 'ORDER', 'DOCUMENT']),
    version: z.int(),
    changeType: z.enum(['creation', 'modification', 'deleted']),
    lifecycleState: z.enum(['complete', 'deleted']),
    committedAt: dateTime,
    committer: z.string(),
    content: z.record(z.string(), z.unknown()).nullable().meta({ description: 'null for the deletion version.' }),
  })
  .meta({ id: 'Composition' });
const audit = z
  .strictObject({
    id: z.string(),
    tenantId: z.string(),
    seq: z.int(),
    actor: z.string(),
    action: z.string(),
    entityType: z.string(),
    entityId: z.string(),
    at: dateTime,
    before: z.unknown(),
    after: z.unknown(),
    reason: z.string().nullable(),
    prevHash: z.string(),
    hash: z.string(),
  })
  .meta({ id: 'AuditRecord' });

const clinicalAppointment = appointment
  .extend({
    practitionerId: z.string().nullable(),
    timeZone: z.string().nullable().meta({ description: 'IANA zone of the local times; null: UTC.' }),
  })
  .meta({ id: 'ClinicalAppointment' });
const EXAMPLE_APPOINTMENT = {
  id: 'appt-5b0c7e0e-2f7c-4a51-9d2e-1f3a4b5c6d7e',
  patientId: 'p-1001',
  start: '2026-12-01T08:00:00.000Z',
  end: '2026-12-01T08:30:00.000Z',
  status: 'booked',
  location: 'Room 2',
  practitionerId: 'dr-jansen',
  timeZone: 'Europe/Amsterdam',
};
const erasure = z
  .strictObject({
    patientId: z.string(),
    record: z.strictObject({
      patientId: z.string(),
      restrictedAt: dateTime.nullable(),
      deleteAfter: dateTime.nullable().meta({ description: 'When the retention purge deletes the record (unless under legal hold).' }),
      legalHold: z.boolean(),
    }),
    messaging: z
      .strictObject({
        messages: z.int(),
        replies: z.int(),
        preferenceChanges: z.int(),
        preferences: z.int(),
        events: z.int(),
        webhookDeliveries: z.int(),
      })
      .meta({ description: 'Rows deleted per kind.' }),
  })
  .meta({ id: 'Erasure' });
const EXAMPLE_ERASURE = {
  patientId: 'p-1001',
  record: { patientId: 'p-1001', restrictedAt: '2026-11-23T06:00:00.000Z', deleteAfter: '2046-11-23T06:00:00.000Z', legalHold: false },
  messaging: { messages: 3, replies: 1, preferenceChanges: 1, preferences: 1, events: 7, webhookDeliveries: 2 },
};

const patientExport = z
  .strictObject({
    id: z.string(),
    patientId: z.string(),
    status: z.enum(['queued', 'running', 'done', 'failed', 'expired']),
    progress: z.int().meta({ description: 'Percent of the archive written.' }),
    error: z.string().nullable(),
    size: z.int().nullable().meta({ description: 'Bytes of the finished ZIP.' }),
    chunks: z.int(),
    createdAt: dateTime,
    completedAt: dateTime.nullable(),
    expiresAt: dateTime.meta({ description: 'After this the archive is no longer served.' }),
  })
  .meta({ id: 'PatientExport' });
const EXAMPLE_EXPORT = {
  id: '3c9a4e1b-7d2f-4c6a-8e5b-1a2b3c4d5e6f',
  patientId: 'p-1001',
  status: 'done',
  progress: 100,
  error: null,
  size: 48213,
  chunks: 1,
  createdAt: '2026-11-23T07:00:00.000Z',
  completedAt: '2026-11-23T07:00:03.000Z',
  expiresAt: '2026-11-30T07:00:00.000Z',
};

const VITALS = {
  blood_pressure: { systolic: { magnitude: 120, unit: 'mm[Hg]' }, diastolic: { magnitude: 80, unit: 'mm[Hg]' } },
  pulse: { rate: { magnitude: 72, unit: '/min' } },
  recorded_at: '2026-11-22T09:00:00Z',
};
const UID = '8d3f1c2a-4b5e-4f60-9a7b-0c1d2e3f4a5b::caregraph.local::1';
const EXAMPLE_COMPOSITION = {
  uid: UID,
  id: '8d3f1c2a-4b5e-4f60-9a7b-0c1d2e3f4a5b',
  ehrId: 'ehr-p-1001',
  patientId: 'p-1001',
  templateId: 'vital_signs.v1',
  area: 'OBSERVATION',
  version: 1,
  changeType: 'creation',
  lifecycleState: 'complete',
  committedAt: '2026-11-22T09:01:00.000Z',
  committer: 'dr.jansen@example.org',
  content: VITALS,
};

const changeReason = z.string().min(1).max(1000).optional().meta({ description: 'Why: stored as the audit record’s reason.', example: 'morning round' });
const ifMatch = (required: boolean) => {
  const value = z.string().meta({ description: 'The version uid this change replaces (quoted or not).', example: `"${UID}"` });
  return required ? value : value.optional();
};
const versionHeaders = {
  ETag: { description: 'The version uid, quoted.', schema: { type: 'string' as const } },
  Location: { description: 'The version’s path.', schema: { type: 'string' as const } },
};

export function registerEhr(registry: OpenAPIRegistry): void {
  const tags = ['Clinical record'];
  const uid = z.object({ uid: pathId('uid', UID) });
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/patients/{id}',
      operationId: 'getEhrPatient',
      summary: 'Demographics of a patient',
      description: 'Always needs `X-Tenant-Id`, even with a single-tenant token.',
      tags,
      tenantRequired: true,
      request: { params: z.object({ id: pathId('id', 'p-1001') }), headers: z.object({ 'X-Tenant-Id': z.string().meta({ example: 'demo' }) }) },
      responses: { 200: json('The patient.', patient, EXAMPLE_PATIENT) },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/patients/{id}/compositions',
      operationId: 'listPatientCompositions',
      summary: "A patient's compositions, newest first",
      tags,
      request: {
        params: z.object({ id: pathId('id', 'p-1001') }),
        query: z.object({
          area: z.enum(COMPOSITION_AREAS).optional(),
          templateId: z.string().optional().meta({ example: 'vital_signs.v1' }),
          from: z.string().optional().meta({ description: 'YYYY-MM-DD or ISO 8601.' }),
          to: z.string().optional().meta({ description: 'YYYY-MM-DD or ISO 8601.' }),
          ...pagingQuery,
        }),
      },
      responses: {
        200: json('A page of compositions.', z.strictObject({ data: z.array(composition), pagination }), {
          data: [EXAMPLE_COMPOSITION],
          pagination: { limit: 20, offset: 0, total: 1 },
        }),
      },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: '/api/ehr/patients/{id}/erasure',
      operationId: 'erasePatient',
      summary: "Carry out a patient's erasure request (GDPR art. 17/18)",
      description:
        'Admin. The clinical record is restricted (no longer processed) and scheduled for deletion at the end of its retention period; the messaging data (messages, replies, preferences, events, webhook deliveries) is deleted. Repeating it is harmless.',
      tags,
      tenantRequired: true,
      request: {
        params: z.object({ id: pathId('id', 'p-1001') }),
        headers: z.object({ 'X-Tenant-Id': z.string().meta({ example: 'demo' }), 'X-Change-Reason': changeReason }),
      },
      responses: { 200: json('What was done.', erasure, EXAMPLE_ERASURE) },
      extraErrors: [404],
    }),
  );
  const exportParams = z.object({ id: pathId('id', 'p-1001'), jobId: pathId('jobId', EXAMPLE_EXPORT.id) });
  registry.registerPath(
    authenticated({
      method: 'post',
      path: '/api/ehr/patients/{id}/export',
      operationId: 'requestPatientExport',
      summary: "Start an export of a patient's data (GDPR art. 15/20)",
      description:
        'Admin, or the patient for their own record. A queued job packs a ZIP: the FHIR Bundle of the record, the openEHR compositions, the access log, consents, and the messaging data (messages, replies, preferences and their history). Poll the job at `Location`, then download it.',
      tags,
      request: { params: z.object({ id: pathId('id', 'p-1001') }) },
      responses: {
        202: json(
          'The queued job.',
          patientExport,
          { ...EXAMPLE_EXPORT, status: 'queued', progress: 0, size: null, chunks: 0, completedAt: null },
          {
            Location: { description: 'The job’s status path.', schema: { type: 'string' as const } },
          },
        ),
      },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/patients/{id}/export/{jobId}',
      operationId: 'getPatientExport',
      summary: 'Status and progress of an export',
      tags,
      request: { params: exportParams },
      responses: { 200: json('The job.', patientExport, EXAMPLE_EXPORT) },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/patients/{id}/export/{jobId}/download',
      operationId: 'downloadPatientExport',
      summary: 'Download a finished export',
      description: 'The ZIP, until the job’s `expiresAt`; `CONFLICT` while it is not done. Each download is recorded.',
      tags,
      request: { params: exportParams },
      responses: { 200: { description: 'The archive.', content: { 'application/zip': { schema: z.string().meta({ format: 'binary' }) } } } },
      extraErrors: [404, 409],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: '/api/ehr/compositions',
      operationId: 'createComposition',
      summary: 'Commit a composition from a clinical template',
      description: 'Content is checked against the template: `UNKNOWN_TEMPLATE`, or `COMPOSITION_INVALID` with one `details` entry per broken path.',
      tags,
      request: {
        headers: z.object({ 'X-Change-Reason': changeReason }),
        body: jsonBody(createCompositionSchema, { templateId: 'vital_signs.v1', ehrId: 'ehr-p-1001', content: VITALS }),
      },
      responses: { 201: json('The first version.', composition, EXAMPLE_COMPOSITION, versionHeaders) },
      extraErrors: [404, 413, 415, 422],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/compositions/{uid}',
      operationId: 'getComposition',
      summary: 'One composition version (a versioned object id gives the latest)',
      tags,
      request: { params: uid },
      responses: { 200: json('The version.', composition, EXAMPLE_COMPOSITION, { ETag: versionHeaders.ETag }) },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'put',
      path: '/api/ehr/compositions/{uid}',
      operationId: 'updateComposition',
      summary: 'Commit a new version',
      tags,
      request: {
        params: uid,
        headers: z.object({ 'If-Match': ifMatch(true), 'X-Change-Reason': changeReason }),
        body: jsonBody(updateCompositionSchema, { content: VITALS }),
      },
      responses: {
        200: json(
          'The new version.',
          composition,
          { ...EXAMPLE_COMPOSITION, uid: UID.replace(/1$/, '2'), version: 2, changeType: 'modification' },
          versionHeaders,
        ),
      },
      extraErrors: [404, 409, 412, 413, 415, 422],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'delete',
      path: '/api/ehr/compositions/{uid}',
      operationId: 'deleteComposition',
      summary: 'Delete (a deletion version; history is kept)',
      tags,
      request: { params: uid, headers: z.object({ 'If-Match': ifMatch(false), 'X-Change-Reason': changeReason }) },
      responses: { 204: { description: 'Deleted.', headers: rateHeaders } },
      extraErrors: [404, 409, 412],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/compositions/{uid}/history',
      operationId: 'getCompositionHistory',
      summary: 'Every version, oldest first',
      tags,
      request: { params: uid },
      responses: { 200: json('The versions.', z.strictObject({ data: z.array(composition) })) },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: '/api/ehr/appointments',
      operationId: 'bookAppointment',
      summary: 'Book an appointment',
      description:
        'Times carry an offset (`2026-12-01T09:00+01:00`) or are local times read in `timeZone` (default UTC). The slot must be in the future, end after start, last at most 24 h, and not overlap an upcoming appointment of the same practitioner or at the same location (409 `CONFLICT`). Emits `appointment.booked`; the reminder is scheduled automatically.',
      tags,
      request: {
        headers: z.object({ 'X-Change-Reason': changeReason }),
        body: jsonBody(createAppointmentSchema, {
          patientId: 'p-1001',
          start: '2026-12-01T09:00',
          end: '2026-12-01T09:30',
          timeZone: 'Europe/Amsterdam',
          practitionerId: 'dr-jansen',
          location: 'Room 2',
        }),
      },
      responses: {
        201: json('The booked appointment.', clinicalAppointment, EXAMPLE_APPOINTMENT, {
          Location: { description: 'The appointment’s path.', schema: { type: 'string' as const } },
        }),
      },
      extraErrors: [404, 409, 415],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'patch',
      path: '/api/ehr/appointments/{id}',
      operationId: 'changeAppointment',
      summary: 'Reschedule or cancel an appointment',
      description:
        'A new slot (`start`, `end`; practitioner, location and time zone stay unless given, null clears) → `appointment.rescheduled`, the reminder moves and a confirmed appointment is booked again; or `{"status": "cancelled"}` → `appointment.cancelled`, the reminder is cancelled. Cancelled, fulfilled and no-show appointments cannot be moved (409).',
      tags,
      request: {
        params: z.object({ id: pathId('id', EXAMPLE_APPOINTMENT.id) }),
        headers: z.object({ 'X-Change-Reason': changeReason }),
        body: jsonBody(updateAppointmentSchema, { start: '2026-12-02T14:00+01:00', end: '2026-12-02T14:30+01:00' }),
      },
      responses: {
        200: json('The appointment after the change.', clinicalAppointment, {
          ...EXAMPLE_APPOINTMENT,
          start: '2026-12-02T13:00:00.000Z',
          end: '2026-12-02T13:30:00.000Z',
        }),
      },
      extraErrors: [404, 409, 415],
    }),
  );
  const accessEntry = z
    .strictObject({
      id: z.string(),
      actor: z.string().meta({ description: 'Who read (the token subject).' }),
      roles: z.array(z.string()),
      action: z.string().meta({ description: 'read | list | query' }),
      entityType: z.string(),
      entityId: z.string(),
      patientId: z.string(),
      at: dateTime,
      purpose: z.string().nullable().meta({ description: 'Declared purpose of use (HL7 v3 PurposeOfUse), e.g. TREAT.' }),
      client: z.string().nullable().meta({ description: "AI agents: the token's OAuth client." }),
      tool: z.string().nullable().meta({ description: 'AI agents: the MCP tool.' }),
      responsibleUser: z
        .string()
        .nullable()
        .meta({ description: 'NEN 7513: who answers for the read (the actor, or whom an agent or integration acts for); null in older entries.' }),
      dataCategory: z.string().nullable().meta({ description: 'NEN 7513: the kind of data read (demographics, a data area, clinical, ehr, directory…).' }),
      grounds: z
        .string()
        .nullable()
        .meta({ description: 'NEN 7513: the grounds of the access: treatment, consent:<purpose>, own-record, subject-access or service.' }),
    })
    .meta({ id: 'AccessLogEntry' });
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/patients/{id}/access-log',
      operationId: 'listAccessLog',
      summary: "Who read a patient's record, newest first",
      description:
        "Admins, and a `patient` token for its own record (another patient's answers 404, as their record does). `from`/`to`: YYYY-MM-DD (`to` includes its day) or ISO 8601 timestamps.",
      tags,
      request: {
        params: z.object({ id: pathId('id', 'p-1001') }),
        query: z.object({
          from: z.string().optional().meta({ example: '2026-12-01' }),
          to: z.string().optional().meta({ example: '2026-12-31' }),
          ...pagingQuery,
        }),
      },
      responses: { 200: json('A page of access-log entries.', z.strictObject({ data: z.array(accessEntry), pagination })) },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/audit',
      operationId: 'listAuditRecords',
      summary: 'The audit trail (hash-chained, append-only)',
      tags,
      request: { query: z.object({ entityId: z.string().optional(), entityType: z.string().optional(), actor: z.string().optional(), ...pagingQuery }) },
      responses: { 200: json('A page of audit records.', z.strictObject({ data: z.array(audit), pagination })) },
    }),
  );

  // ---- CDA export (docs/exchange.md) ----
  const cdaDocument = (description: string) => ({
    description,
    headers: rateHeaders as ResponseConfig['headers'],
    content: { 'application/xml': { schema: z.string().meta({ description: 'An HL7 CDA R2 ClinicalDocument (C-CDA 2.1 CCD templates).' }) } },
  });
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/patients/{id}/cda',
      operationId: 'getPatientCcd',
      summary: "The patient's Continuity of Care Document (C-CDA 2.1)",
      description:
        'CDA R2 XML made from the current record through the FHIR mapping: header (patient, author, custodian = the tenant, confidentiality N, language en-US, a fresh document id, one setId per patient) and the sections allergies, problems, medications, vital signs, results, encounters and notes; a section the record holds nothing for (or the caller may not read) has `nullFlavor="NI"` and the text "No information". Access as for FHIR `$everything`: role, consent and tenant; each export is in the access log.',
      tags,
      request: { params: z.object({ id: pathId('id', 'p-1001') }) },
      responses: { 200: cdaDocument('The CCD.') },
      extraErrors: [404],
    }),
  );
  const publication = z
    .strictObject({
      patientId: z.string(),
      documentUniqueId: z.string().meta({ description: 'XDSDocumentEntry.uniqueId: the CDA document id as an OID under 2.25.' }),
      submissionSetUniqueId: z.string(),
      hash: z.string().meta({ description: 'SHA-1 (hex) of the CCD as sent.' }),
      size: z.number().int(),
      creationTime: z.string().meta({ description: 'HL7 DTM, UTC.' }),
      repository: z.string().meta({ description: 'The repository endpoint (XDS_REPOSITORY_URL).' }),
    })
    .meta({ id: 'XdsPublication' });
  registry.registerPath(
    authenticated({
      method: 'post',
      path: '/api/ehr/patients/{id}/cda/publish',
      operationId: 'publishPatientCcd',
      summary: "Publish the patient's CCD to the external XDS repository (IHE ITI-41)",
      description:
        'Admin or clinician. The CCD of `GET /api/ehr/patients/{id}/cda`, sent as an ITI-41 Provide and Register Document Set-b (SOAP 1.2, MTOM) to `XDS_REPOSITORY_URL` with `XDS_REPOSITORY_TOKEN`. 409 `CONFLICT` when no repository is configured; 502 `UPSTREAM_ERROR` when the repository refuses the document (`details[].xdsErrorCode`: its RegistryErrors) or cannot be reached. Each publication, accepted or refused, is in the audit trail.',
      tags,
      request: { params: z.object({ id: pathId('id', 'p-1001') }) },
      responses: {
        201: json('What the remote registry now holds.', publication, {
          patientId: 'p-1001',
          documentUniqueId: '2.25.329800735698586629295641978511506172918',
          submissionSetUniqueId: '2.25.142357834217981470596829584717654032478',
          hash: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
          size: 18342,
          creationTime: '20261123101500',
          repository: 'https://xds.example.org/xds/repository',
        }),
      },
      extraErrors: [404, 409, 502],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/api/ehr/compositions/{uid}/cda',
      operationId: 'getCompositionCda',
      summary: 'One composition as a CDA document (C-CDA 2.1)',
      description:
        'A version uid, or the composition id for its latest version. The document set is the composition (setId = its id), versionNumber its version; the same version always has the same document id.',
      tags,
      request: { params: uid },
      responses: { 200: cdaDocument('The document.') },
      extraErrors: [404],
    }),
  );
}
