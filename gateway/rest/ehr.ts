import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { AppError, notFound, validationError, zodDetails, type ErrorDetail } from '../../common/errors';
import { identityOf } from '../auth';
import type { GraphQLRunner } from './execute';
import { changeReason, ID, ifMatch, onlyQueryParams, pathId, queryInt, queryParam, queryPaging } from './params';

// Request shapes, exported for the OpenAPI document (gateway/openapi); the service judges content against the template.
const content = z.record(z.string(), z.unknown());
export const createCompositionSchema = z.strictObject({ templateId: z.string().min(1).max(128), ehrId: z.string().regex(ID), content });
export const updateCompositionSchema = z.strictObject({ content });
export const COMPOSITION_AREAS = ['encounter', 'observation', 'order', 'document'] as const;
// Appointments: times with an offset, or local times read in timeZone; the service checks the slot.
const time = z.string().min(1).max(64);
const slotFields = {
  timeZone: z.string().min(1).max(64).nullish(),
  practitionerId: z.string().min(1).max(128).nullish(),
  location: z.string().min(1).max(200).nullish(),
};
export const createAppointmentSchema = z.strictObject({ patientId: z.string().regex(ID), start: time, end: time, ...slotFields });
/** Either `status: "cancelled"` alone, or a new slot (`start` and `end`, optionally practitioner, location, zone). */
export const updateAppointmentSchema = z.union([z.strictObject({ status: z.literal('cancelled') }), z.strictObject({ start: time, end: time, ...slotFields })]);

const PATIENT_FIELDS = 'id ehrId name { given family } birthDate gender contact { phone email }';
const COMPOSITION_FIELDS = 'uid id ehrId patientId templateId area version changeType lifecycleState committedAt committer content';
const APPOINTMENT_FIELDS = 'id patientId start end status location practitionerId timeZone';
const RESTRICTION_FIELDS = 'patientId restrictedAt deleteAfter legalHold';
const ERASURE_FIELDS = 'messages replies preferenceChanges preferences events webhookDeliveries';
const ACCESS_LOG_FIELDS = 'id actor roles action entityType entityId patientId at purpose client tool responsibleUser dataCategory grounds';
const EXPORT_FIELDS = 'id patientId status progress error size chunks createdAt completedAt expiresAt';
const PUBLICATION_FIELDS = 'patientId documentUniqueId submissionSetUniqueId hash size creationTime repository';
/** CDA documents are XML (HL7 CDA R2); the clinical record's other answers are JSON. */
const CDA_XML = 'application/xml; charset=utf-8';
const AUDIT_FIELDS = 'id tenantId seq actor action entityType entityId at before after reason prevHash hash';

function requireJson(req: Request): Record<string, unknown> {
  if (!req.is(['application/json', 'application/*+json'])) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
  if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw validationError('The body must be a JSON object');
  return req.body as Record<string, unknown>;
}

/** Checks the body's shape; the body itself goes on, as zod's copy of a record would turn a `__proto__` key into a prototype. */
function parse<T>(schema: z.ZodType<T>, body: unknown, details: ErrorDetail[]): T | undefined {
  const result = schema.safeParse(body);
  if (result.success) return body as T;
  details.push(...zodDetails(result.error.issues));
  return undefined;
}

/** `/api/ehr/…`: the clinical record's REST paths, each one GraphQL operation (docs/api.md §8). */
export function ehrRoutes(run: GraphQLRunner): Router {
  const router = Router();

  router.get('/patients/:id', async (req, res) => {
    identityOf(req, { requireTenantHeader: true });
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const data = await run(req, `query($id: ID!) { patient(id: $id) { ${PATIENT_FIELDS} } }`, { id });
    if (!data.patient) throw notFound('Patient', id);
    res.json(data.patient);
  });

  // The patient's erasure request (docs/privacy.md): the clinical record restricts itself first (unknown
  // patient → 404, nothing erased), then messaging erases its data; a repeat restricts nothing new.
  router.post('/patients/:id/erasure', async (req, res) => {
    identityOf(req, { requireTenantHeader: true });
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const reason = changeReason(req);
    const record = await run(req, `mutation($id: ID!, $reason: String) { restrictPatientRecord(patientId: $id, reason: $reason) { ${RESTRICTION_FIELDS} } }`, {
      id,
      reason,
    });
    const messaging = await run(req, `mutation($id: ID!) { erasePatientMessagingData(patientId: $id) { ${ERASURE_FIELDS} } }`, { id });
    res.json({ patientId: id, record: record.restrictPatientRecord, messaging: messaging.erasePatientMessagingData });
  });

  // Subject access export (docs/privacy.md): a queued job, its status, then the ZIP streamed chunk by chunk.
  const exportPath = (patientId: string, jobId: string) => `/api/ehr/patients/${encodeURIComponent(patientId)}/export/${encodeURIComponent(jobId)}`;
  const exportJob = async (req: Request, patientId: string, jobId: string) => {
    const data = await run(req, `query($id: ID!) { patientExport(id: $id) { ${EXPORT_FIELDS} } }`, { id: jobId });
    // A job is addressed under its own patient only.
    if (data.patientExport.patientId !== patientId) throw notFound('Export', jobId);
    return data.patientExport;
  };
  router.post('/patients/:id/export', async (req, res) => {
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const data = await run(req, `mutation($id: ID!) { requestPatientExport(patientId: $id) { ${EXPORT_FIELDS} } }`, { id });
    res.status(202).location(exportPath(id, data.requestPatientExport.id)).json(data.requestPatientExport);
  });

  router.get('/patients/:id/export/:jobId', async (req, res) => {
    onlyQueryParams(req, []);
    res.json(await exportJob(req, pathId(req, 'id'), pathId(req, 'jobId')));
  });

  router.get('/patients/:id/export/:jobId/download', async (req, res) => {
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const job = await exportJob(req, id, pathId(req, 'jobId'));
    if (job.status !== 'done') throw new AppError('CONFLICT', `The export is ${job.status}, not ready`);
    res.status(200).type('application/zip').setHeader('Content-Length', String(job.size));
    res.setHeader('Content-Disposition', `attachment; filename="patient-${id}-export.zip"`);
    // One chunk in memory at a time.
    for (let seq = 0; seq < job.chunks; seq++) {
      const chunk = await run(req, `query($id: ID!, $seq: Int!) { patientExportChunk(id: $id, seq: $seq) }`, { id: job.id, seq });
      if (!res.write(Buffer.from(chunk.patientExportChunk as string, 'base64'))) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  });

  router.get('/patients/:id/compositions', async (req, res) => {
    onlyQueryParams(req, ['area', 'templateId', 'from', 'to', 'limit', 'offset']);
    const id = pathId(req, 'id');
    const details: ErrorDetail[] = [];
    const limit = queryInt(req, 'limit', details);
    const offset = queryInt(req, 'offset', details);
    const area = queryParam(req, 'area');
    if (area !== undefined && !(COMPOSITION_AREAS as readonly string[]).includes(area))
      details.push({ path: 'area', message: 'one of encounter, observation, order, document' });
    if (details.length > 0) throw validationError('Invalid query parameters', details);
    const data = await run(
      req,
      `query($filter: CompositionFilter, $limit: Int, $offset: Int) { compositions(filter: $filter, limit: $limit, offset: $offset) { data { ${COMPOSITION_FIELDS} } pagination { limit offset total } } }`,
      {
        filter: {
          patientId: id,
          area: area?.toUpperCase(),
          templateId: queryParam(req, 'templateId'),
          from: queryParam(req, 'from'),
          to: queryParam(req, 'to'),
        },
        limit,
        offset,
      },
    );
    res.json(data.compositions);
  });

  router.post('/compositions', async (req, res) => {
    onlyQueryParams(req, []);
    const details: ErrorDetail[] = [];
    const input = parse(createCompositionSchema, requireJson(req), details);
    if (!input) throw validationError('Invalid composition', details);
    const data = await run(
      req,
      `mutation($input: CreateCompositionInput!, $reason: String) { createComposition(input: $input, reason: $reason) { ${COMPOSITION_FIELDS} } }`,
      { input, reason: changeReason(req) },
    );
    const composition = data.createComposition;
    res
      .status(201)
      .location(`/api/ehr/compositions/${encodeURIComponent(composition.uid)}`)
      .setHeader('ETag', `"${composition.uid}"`)
      .json(composition);
  });

  router.get('/compositions/:uid', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `query($uid: ID!) { composition(uid: $uid) { ${COMPOSITION_FIELDS} } }`, { uid: pathId(req, 'uid') });
    res.setHeader('ETag', `"${data.composition.uid}"`).json(data.composition);
  });

  router.get('/compositions/:uid/history', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `query($id: ID!) { compositionHistory(id: $id) { ${COMPOSITION_FIELDS} } }`, { id: pathId(req, 'uid') });
    res.json({ data: data.compositionHistory });
  });

  router.put('/compositions/:uid', async (req, res) => {
    onlyQueryParams(req, []);
    const uid = pathId(req, 'uid');
    const details: ErrorDetail[] = [];
    const body = parse(updateCompositionSchema, requireJson(req), details);
    const precondition = ifMatch(req);
    if (!precondition) details.push({ path: 'If-Match', message: 'required: the version uid this update replaces' });
    if (!body || details.length > 0) throw validationError('Invalid composition update', details);
    const data = await run(
      req,
      `mutation($id: ID!, $ifMatch: ID!, $content: JSONObject!, $reason: String) { updateComposition(id: $id, ifMatch: $ifMatch, content: $content, reason: $reason) { ${COMPOSITION_FIELDS} } }`,
      { id: uid, ifMatch: precondition, content: body.content, reason: changeReason(req) },
    );
    const composition = data.updateComposition;
    res
      .location(`/api/ehr/compositions/${encodeURIComponent(composition.uid)}`)
      .setHeader('ETag', `"${composition.uid}"`)
      .json(composition);
  });

  router.delete('/compositions/:uid', async (req, res) => {
    onlyQueryParams(req, []);
    await run(req, `mutation($id: ID!, $ifMatch: ID, $reason: String) { deleteComposition(id: $id, ifMatch: $ifMatch, reason: $reason) { uid } }`, {
      id: pathId(req, 'uid'),
      ifMatch: ifMatch(req),
      reason: changeReason(req),
    });
    res.status(204).end();
  });

  router.post('/appointments', async (req, res) => {
    onlyQueryParams(req, []);
    const details: ErrorDetail[] = [];
    const input = parse(createAppointmentSchema, requireJson(req), details);
    if (!input) throw validationError('Invalid appointment', details);
    const data = await run(
      req,
      `mutation($input: BookAppointmentInput!, $reason: String) { bookAppointment(input: $input, reason: $reason) { ${APPOINTMENT_FIELDS} } }`,
      { input, reason: changeReason(req) },
    );
    res
      .status(201)
      .location(`/api/ehr/appointments/${encodeURIComponent(data.bookAppointment.id)}`)
      .json(data.bookAppointment);
  });

  router.patch('/appointments/:id', async (req, res) => {
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const details: ErrorDetail[] = [];
    const body = parse(updateAppointmentSchema, requireJson(req), details);
    if (!body) throw validationError('Invalid appointment change', details);
    const reason = changeReason(req);
    if ('status' in body) {
      const data = await run(req, `mutation($id: ID!, $reason: String) { cancelAppointment(id: $id, reason: $reason) { ${APPOINTMENT_FIELDS} } }`, {
        id,
        reason,
      });
      res.json(data.cancelAppointment);
      return;
    }
    const data = await run(
      req,
      `mutation($id: ID!, $input: RescheduleAppointmentInput!, $reason: String) { rescheduleAppointment(id: $id, input: $input, reason: $reason) { ${APPOINTMENT_FIELDS} } }`,
      { id, input: body, reason },
    );
    res.json(data.rescheduleAppointment);
  });

  router.get('/patients/:id/access-log', async (req, res) => {
    onlyQueryParams(req, ['from', 'to', 'limit', 'offset']);
    const { limit, offset } = queryPaging(req);
    const data = await run(
      req,
      `query($patientId: ID!, $from: String, $to: String, $limit: Int, $offset: Int) { accessLog(patientId: $patientId, from: $from, to: $to, limit: $limit, offset: $offset) { data { ${ACCESS_LOG_FIELDS} } pagination { limit offset total } } }`,
      { patientId: pathId(req, 'id'), from: queryParam(req, 'from'), to: queryParam(req, 'to'), limit, offset },
    );
    res.json(data.accessLog);
  });

  router.get('/audit', async (req, res) => {
    onlyQueryParams(req, ['entityId', 'entityType', 'actor', 'limit', 'offset']);
    const { limit, offset } = queryPaging(req);
    const data = await run(
      req,
      `query($entityId: String, $entityType: String, $actor: String, $limit: Int, $offset: Int) { auditRecords(entityId: $entityId, entityType: $entityType, actor: $actor, limit: $limit, offset: $offset) { data { ${AUDIT_FIELDS} } pagination { limit offset total } } }`,
      { entityId: queryParam(req, 'entityId'), entityType: queryParam(req, 'entityType'), actor: queryParam(req, 'actor'), limit, offset },
    );
    res.json(data.auditRecords);
  });

  // ---- CDA export (docs/exchange.md): C-CDA 2.1 documents made by the clinical record, served as XML ----
  const sendCda = (res: Response, xml: string, filename: string) =>
    res.status(200).type(CDA_XML).setHeader('Content-Disposition', `inline; filename="${filename}"`).send(xml);

  router.get('/patients/:id/cda', async (req, res) => {
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const data = await run(req, 'query($id: ID!) { cdaPatientDocument(patientId: $id) }', { id });
    sendCda(res, data.cdaPatientDocument, `ccd-${id}.xml`);
  });

  // Publishing the CCD to the external XDS repository (ITI-41 as Document Source); the answer names what the remote holds.
  router.post('/patients/:id/cda/publish', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `mutation($id: ID!) { publishPatientCcd(patientId: $id) { ${PUBLICATION_FIELDS} } }`, { id: pathId(req, 'id') });
    res.status(201).json(data.publishPatientCcd);
  });

  router.get('/compositions/:uid/cda', async (req, res) => {
    onlyQueryParams(req, []);
    const uid = pathId(req, 'uid');
    const data = await run(req, 'query($uid: ID!) { cdaCompositionDocument(uid: $uid) }', { uid });
    sendCda(res, data.cdaCompositionDocument, `composition-${uid.replaceAll(':', '_')}.xml`);
  });

  return router;
}
