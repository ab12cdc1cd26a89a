import { Router, type Request } from 'express';
import { AppError, notFound, validationError, type ErrorDetail } from '../../common/errors';
import { identityOf } from '../auth';
import type { GraphQLRunner } from './execute';
import { onlyQueryParams, pathId, queryInt, queryParam, queryPaging } from './params';

const PATIENT_FIELDS = 'id ehrId name { given family } birthDate gender contact { phone email }';
const COMPOSITION_FIELDS = 'uid id ehrId patientId templateId area version changeType lifecycleState committedAt committer content';
const AUDIT_FIELDS = 'id tenantId seq actor action entityType entityId at before after reason prevHash hash';

/** X-Change-Reason → the audit record's reason (CONTRACT §8). */
function changeReason(req: Request): string | undefined {
  const value = req.headers['x-change-reason'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 1000) {
    throw validationError('X-Change-Reason must be 1..1000 characters', [{ path: 'X-Change-Reason', message: 'invalid header' }]);
  }
  return value.trim();
}

function requireJson(req: Request): Record<string, unknown> {
  if (!req.is(['application/json', 'application/*+json'])) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
  if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw validationError('The body must be a JSON object');
  return req.body as Record<string, unknown>;
}

function unknownFields(body: Record<string, unknown>, allowed: string[], details: ErrorDetail[]) {
  for (const key of Object.keys(body)) if (!allowed.includes(key)) details.push({ path: key, message: 'unknown field' });
}

const isPlainObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** openEHR sends version uids in If-Match, quoted or not. */
function ifMatch(req: Request): string | undefined {
  const value = req.headers['if-match'];
  return typeof value === 'string' && value.trim() ? value.trim().replace(/^W\//, '').replace(/^"|"$/g, '') : undefined;
}

/** `/api/ehr/…`: the clinical record's REST paths, each one GraphQL operation (CONTRACT §8). */
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

  router.get('/patients/:id/compositions', async (req, res) => {
    onlyQueryParams(req, ['area', 'templateId', 'from', 'to', 'limit', 'offset']);
    const id = pathId(req, 'id');
    const details: ErrorDetail[] = [];
    const limit = queryInt(req, 'limit', details);
    const offset = queryInt(req, 'offset', details);
    const area = queryParam(req, 'area');
    if (area !== undefined && !['encounter', 'observation', 'order', 'document'].includes(area)) details.push({ path: 'area', message: 'one of encounter, observation, order, document' });
    if (details.length > 0) throw validationError('Invalid query parameters', details);
    const data = await run(
      req,
      `query($filter: CompositionFilter, $limit: Int, $offset: Int) { compositions(filter: $filter, limit: $limit, offset: $offset) { data { ${COMPOSITION_FIELDS} } pagination { limit offset total } } }`,
      { filter: { patientId: id, area: area?.toUpperCase(), templateId: queryParam(req, 'templateId'), from: queryParam(req, 'from'), to: queryParam(req, 'to') }, limit, offset },
    );
    res.json(data.compositions);
  });

  router.post('/compositions', async (req, res) => {
    onlyQueryParams(req, []);
    const body = requireJson(req);
    const details: ErrorDetail[] = [];
    unknownFields(body, ['templateId', 'ehrId', 'content'], details);
    if (typeof body.templateId !== 'string' || body.templateId.length === 0 || body.templateId.length > 128) details.push({ path: 'templateId', message: 'required, 1..128 characters' });
    if (typeof body.ehrId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/.test(body.ehrId)) details.push({ path: 'ehrId', message: 'required, an EHR id' });
    if (!isPlainObject(body.content)) details.push({ path: 'content', message: 'required, a JSON object' });
    if (details.length > 0) throw validationError('Invalid composition', details);
    const data = await run(
      req,
      `mutation($input: CreateCompositionInput!, $reason: String) { createComposition(input: $input, reason: $reason) { ${COMPOSITION_FIELDS} } }`,
      { input: { templateId: body.templateId, ehrId: body.ehrId, content: body.content }, reason: changeReason(req) },
    );
    const composition = data.createComposition;
    res.status(201).location(`/api/ehr/compositions/${encodeURIComponent(composition.uid)}`).setHeader('ETag', `"${composition.uid}"`).json(composition);
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
    const body = requireJson(req);
    const details: ErrorDetail[] = [];
    unknownFields(body, ['content'], details);
    if (!isPlainObject(body.content)) details.push({ path: 'content', message: 'required, a JSON object' });
    const precondition = ifMatch(req);
    if (!precondition) details.push({ path: 'If-Match', message: 'required: the version uid this update replaces' });
    if (details.length > 0) throw validationError('Invalid composition update', details);
    const data = await run(
      req,
      `mutation($id: ID!, $ifMatch: ID!, $content: JSONObject!, $reason: String) { updateComposition(id: $id, ifMatch: $ifMatch, content: $content, reason: $reason) { ${COMPOSITION_FIELDS} } }`,
      { id: uid, ifMatch: precondition, content: body.content, reason: changeReason(req) },
    );
    const composition = data.updateComposition;
    res.location(`/api/ehr/compositions/${encodeURIComponent(composition.uid)}`).setHeader('ETag', `"${composition.uid}"`).json(composition);
  });

  router.delete('/compositions/:uid', async (req, res) => {
    onlyQueryParams(req, []);
    await run(
      req,
      `mutation($id: ID!, $ifMatch: ID, $reason: String) { deleteComposition(id: $id, ifMatch: $ifMatch, reason: $reason) { uid } }`,
      { id: pathId(req, 'uid'), ifMatch: ifMatch(req), reason: changeReason(req) },
    );
    res.status(204).end();
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

  return router;
}
