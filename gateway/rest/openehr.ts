import { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, validationError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { toAppError } from '../http-errors';
import type { GraphQLRunner } from './execute';
import { pathId } from './params';

/**
 * `/openehr/v1`: the openEHR REST API (Release 1.0.3 shapes). Thin: HTTP-level
 * checks and headers, then one GraphQL operation per interaction (openehr*
 * and aqlQuery fields of the ehr subgraph). Errors carry openEHR's
 * `{message, validationErrors}` beside the contract's `error` object.
 */
const RESULT = 'body uid lastModified location deleted';

interface OpenEhrResult {
  body?: unknown;
  uid?: string | null;
  lastModified?: string | null;
  location?: string | null;
  deleted?: boolean | null;
}

/** `openehr-audit-details: committer.name="Dr X", description.value="why"` (plus X-Change-Reason) → the audit record's reason. */
export function auditReason(req: Request): string | undefined {
  const header = req.headers['openehr-audit-details'];
  const fields: Record<string, string> = {};
  if (typeof header === 'string') {
    for (const match of header.matchAll(/([A-Za-z_.]+)\s*=\s*"((?:[^"\\]|\\.)*)"/g)) fields[match[1].toLowerCase()] = match[2].replace(/\\(.)/g, '$1');
  }
  const changeReason = req.headers['x-change-reason'];
  const description = fields['description.value'] ?? fields.description ?? (typeof changeReason === 'string' ? changeReason.trim() : undefined);
  const committer = fields['committer.name'];
  const reason = [description, committer ? `(committer: ${committer})` : undefined].filter(Boolean).join(' ');
  return reason ? reason.slice(0, 1000) : undefined;
}

/** If-Match is a version uid, quoted or not. */
function ifMatch(req: Request): string {
  const value = req.headers['if-match'];
  if (typeof value !== 'string' || !value.trim()) throw validationError('If-Match is required: the version uid this change replaces', [{ path: 'If-Match', message: 'required' }]);
  return value.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
}

function jsonBody(req: Request, optional = false): Record<string, unknown> | undefined {
  if (optional && (req.body === undefined || (typeof req.body === 'object' && Object.keys(req.body ?? {}).length === 0 && !req.is('json')))) return undefined;
  if (!req.is(['application/json', 'application/*+json'])) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', req.is(['application/xml', 'text/xml']) ? 'XML is not supported: send JSON (see docs/exchange.md)' : 'Send the body as application/json');
  }
  if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw validationError('The body must be a JSON object');
  return req.body as Record<string, unknown>;
}

const representation = (req: Request) => /return=representation/.test(String(req.headers.prefer ?? ''));

function headers(req: Request, res: Response, result: OpenEhrResult) {
  const base = `${req.protocol}://${req.get('host')}${req.baseUrl}`;
  if (result.uid) res.setHeader('ETag', `"${result.uid}"`);
  if (result.location) res.location(`${base}${result.location}`);
  if (result.lastModified) res.setHeader('Last-Modified', new Date(result.lastModified).toUTCString());
}

/** GET: the body (204 for a logically deleted composition). */
function read(req: Request, res: Response, result: OpenEhrResult) {
  headers(req, res, result);
  if (result.deleted) res.status(204).end();
  else res.status(200).json(result.body);
}

/** Writes: `Prefer: return=representation` gives the body, the default (minimal) none. */
function written(req: Request, res: Response, status: 200 | 201, result: OpenEhrResult) {
  headers(req, res, result);
  if (representation(req) && result.body !== undefined) res.status(status).json(result.body);
  else res.status(status === 200 ? 204 : 201).end();
}

function intParam(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\d{1,7}$/.test(value)) return Number(value);
  throw validationError(`${name} must be a whole number`, [{ path: name, message: 'invalid' }]);
}

const AQL = 'query($q: String!, $parameters: JSONObject, $offset: Int, $fetch: Int) { aqlQuery(q: $q, parameters: $parameters, offset: $offset, fetch: $fetch) }';

export function openEhrRoutes(run: GraphQLRunner): Router {
  const router = Router();
  /** One GraphQL operation: `field(arg: $arg, …)`, each variable named and typed like its argument. */
  const call = async (req: Request, field: string, vars: Record<string, unknown>, kind: 'query' | 'mutation' = 'query'): Promise<OpenEhrResult> => {
    const names = Object.keys(vars);
    const signature = names.length ? `(${names.map((k) => `$${k}: ${FIELDS[field][k]}`).join(', ')})` : '';
    const args = names.length ? `(${names.map((k) => `${k}: $${k}`).join(', ')})` : '';
    const data = await run(req, `${kind}${signature} { ${field}${args} { ${RESULT} } }`, vars);
    return data[field];
  };

  // EHR. CareGraph creates a patient's EHR together with the patient (demographics are required), so
  // POST /ehr for a registered subject answers 409 (its EHR exists) and for anyone else 400.
  router.post('/ehr', async (req) => {
    const status = jsonBody(req, true) as { subject?: { external_ref?: { id?: { value?: unknown } } } } | undefined;
    const subjectId = status?.subject?.external_ref?.id?.value;
    if (typeof subjectId !== 'string') {
      throw validationError('EHRs belong to registered patients: send an EHR_STATUS whose subject.external_ref.id.value is the patient id', [{ path: 'subject.external_ref.id.value', message: 'required' }]);
    }
    const existing = await call(req, 'openehrEhr', { subjectId, subjectNamespace: 'caregraph' }).catch((err) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    });
    if (existing) throw new AppError('CONFLICT', `The subject already has an EHR (${existing.location})`, [{ path: 'subject', message: 'EHR exists', latestVersionUid: existing.uid ?? undefined }]);
    throw validationError(`Subject '${subjectId}' is not a registered patient of this tenant; registering the patient (FHIR POST /Patient) creates the EHR`, [{ path: 'subject.external_ref.id.value', message: 'unknown patient' }]);
  });
  router.get('/ehr', async (req, res) => {
    const subjectId = typeof req.query.subject_id === 'string' ? req.query.subject_id : null;
    const subjectNamespace = typeof req.query.subject_namespace === 'string' ? req.query.subject_namespace : null;
    read(req, res, await call(req, 'openehrEhr', { subjectId, subjectNamespace }));
  });
  router.get('/ehr/:ehrId', async (req, res) => read(req, res, await call(req, 'openehrEhr', { ehrId: pathId(req, 'ehrId') })));

  // EHR_STATUS
  router.get('/ehr/:ehrId/ehr_status', async (req, res) => {
    const versionAtTime = typeof req.query.version_at_time === 'string' ? req.query.version_at_time : null;
    read(req, res, await call(req, 'openehrEhrStatus', { ehrId: pathId(req, 'ehrId'), versionAtTime }));
  });
  router.get('/ehr/:ehrId/ehr_status/:versionUid', async (req, res) =>
    read(req, res, await call(req, 'openehrEhrStatus', { ehrId: pathId(req, 'ehrId'), versionUid: pathId(req, 'versionUid') })),
  );
  router.put('/ehr/:ehrId/ehr_status', async (req, res) => {
    const vars = { ehrId: pathId(req, 'ehrId'), ifMatch: ifMatch(req), ehrStatus: jsonBody(req), reason: auditReason(req) ?? null };
    written(req, res, 200, await call(req, 'openehrUpdateEhrStatus', vars, 'mutation'));
  });

  // COMPOSITION
  router.post('/ehr/:ehrId/composition', async (req, res) => {
    const templateId = typeof req.query.templateId === 'string' ? req.query.templateId : null;
    const vars = { ehrId: pathId(req, 'ehrId'), templateId, composition: jsonBody(req), reason: auditReason(req) ?? null };
    written(req, res, 201, await call(req, 'openehrCreateComposition', vars, 'mutation'));
  });
  router.get('/ehr/:ehrId/composition/:uid', async (req, res) =>
    read(req, res, await call(req, 'openehrComposition', { ehrId: pathId(req, 'ehrId'), uid: pathId(req, 'uid') })),
  );
  router.put('/ehr/:ehrId/composition/:uid', async (req, res) => {
    const templateId = typeof req.query.templateId === 'string' ? req.query.templateId : null;
    const vars = { ehrId: pathId(req, 'ehrId'), versionedObjectUid: pathId(req, 'uid'), ifMatch: ifMatch(req), templateId, composition: jsonBody(req), reason: auditReason(req) ?? null };
    written(req, res, 200, await call(req, 'openehrUpdateComposition', vars, 'mutation'));
  });
  router.delete('/ehr/:ehrId/composition/:uid', async (req, res) => {
    const result = await call(req, 'openehrDeleteComposition', { ehrId: pathId(req, 'ehrId'), precedingVersionUid: pathId(req, 'uid'), reason: auditReason(req) ?? null }, 'mutation');
    headers(req, res, result);
    res.status(204).end();
  });

  // VERSIONED_COMPOSITION
  const versioned = (req: Request) => ({ ehrId: pathId(req, 'ehrId'), versionedObjectUid: pathId(req, 'uid') });
  router.get('/ehr/:ehrId/versioned_composition/:uid', async (req, res) => read(req, res, await call(req, 'openehrVersionedComposition', versioned(req))));
  router.get('/ehr/:ehrId/versioned_composition/:uid/revision_history', async (req, res) => read(req, res, await call(req, 'openehrRevisionHistory', versioned(req))));
  router.get('/ehr/:ehrId/versioned_composition/:uid/version', async (req, res) => {
    const versionAtTime = typeof req.query.version_at_time === 'string' ? req.query.version_at_time : null;
    read(req, res, await call(req, 'openehrCompositionVersion', { ...versioned(req), versionAtTime }));
  });
  router.get('/ehr/:ehrId/versioned_composition/:uid/version/:versionUid', async (req, res) =>
    read(req, res, await call(req, 'openehrCompositionVersion', { ...versioned(req), versionUid: pathId(req, 'versionUid') })),
  );

  // DEFINITION
  router.post('/definition/template/adl1.4', async (req, res) => {
    written(req, res, 201, await call(req, 'openehrUploadTemplate', { template: jsonBody(req), reason: auditReason(req) ?? null }, 'mutation'));
  });
  router.get('/definition/template/adl1.4', async (req, res) => read(req, res, await call(req, 'openehrTemplates', {})));
  router.get('/definition/template/adl1.4/:templateId', async (req, res) => {
    const web = /application\/openehr\.wt\+json/.test(String(req.headers.accept ?? ''));
    const result = await call(req, 'openehrTemplate', { templateId: pathId(req, 'templateId'), webTemplate: web });
    if (web) res.type('application/openehr.wt+json');
    read(req, res, result);
  });

  // AQL
  router.post('/query/aql', async (req, res) => {
    const body = jsonBody(req)!;
    if (typeof body.q !== 'string' || !body.q.trim()) throw validationError('q (the AQL query) is required', [{ path: 'q', message: 'required' }]);
    const parameters = body.query_parameters ?? null;
    if (parameters !== null && (typeof parameters !== 'object' || Array.isArray(parameters))) throw validationError('query_parameters must be an object', [{ path: 'query_parameters', message: 'object' }]);
    const data = await run(req, AQL, { q: body.q, parameters, offset: intParam(body.offset, 'offset'), fetch: intParam(body.fetch, 'fetch') });
    res.json(data.aqlQuery);
  });
  router.get('/query/aql', async (req, res) => {
    const search = new URL(req.originalUrl, 'http://localhost').searchParams;
    const q = search.get('q');
    if (!q) throw validationError('q (the AQL query) is required', [{ path: 'q', message: 'required' }]);
    // Every other parameter is a query parameter; query_parameters may also carry them as JSON.
    let parameters: Record<string, unknown> = {};
    for (const [name, value] of search) if (!['q', 'offset', 'fetch', 'query_parameters'].includes(name)) parameters[name] = value;
    const json = search.get('query_parameters');
    if (json) {
      try {
        parameters = { ...parameters, ...JSON.parse(json) };
      } catch {
        throw validationError('query_parameters must be a JSON object', [{ path: 'query_parameters', message: 'invalid JSON' }]);
      }
    }
    const data = await run(req, AQL, { q, parameters, offset: intParam(search.get('offset'), 'offset'), fetch: intParam(search.get('fetch'), 'fetch') });
    res.json(data.aqlQuery);
  });

  // The rest of the openEHR REST API (CONTRIBUTION, DIRECTORY, stored queries, ADL2, …) is not implemented.
  router.all('/{*rest}', (req) => {
    throw new AppError('NOT_IMPLEMENTED', `${req.method} ${req.baseUrl}${req.path} is not implemented (see docs/exchange.md)`);
  });
  return router;
}

/** The arguments of each ehr-subgraph field the routes call, with their GraphQL types. */
const FIELDS: Record<string, Record<string, string>> = {
  openehrEhr: { ehrId: 'ID', subjectId: 'String', subjectNamespace: 'String' },
  openehrEhrStatus: { ehrId: 'ID!', versionUid: 'String', versionAtTime: 'String' },
  openehrUpdateEhrStatus: { ehrId: 'ID!', ifMatch: 'String!', ehrStatus: 'JSON', reason: 'String' },
  openehrCreateComposition: { ehrId: 'ID!', templateId: 'String', composition: 'JSONObject!', reason: 'String' },
  openehrComposition: { ehrId: 'ID!', uid: 'ID!' },
  openehrUpdateComposition: { ehrId: 'ID!', versionedObjectUid: 'ID!', ifMatch: 'String!', templateId: 'String', composition: 'JSONObject!', reason: 'String' },
  openehrDeleteComposition: { ehrId: 'ID!', precedingVersionUid: 'ID!', reason: 'String' },
  openehrVersionedComposition: { ehrId: 'ID!', versionedObjectUid: 'ID!' },
  openehrRevisionHistory: { ehrId: 'ID!', versionedObjectUid: 'ID!' },
  openehrCompositionVersion: { ehrId: 'ID!', versionedObjectUid: 'ID!', versionUid: 'String', versionAtTime: 'String' },
  openehrTemplates: {},
  openehrTemplate: { templateId: 'ID!', webTemplate: 'Boolean' },
  openehrUploadTemplate: { template: 'JSON', reason: 'String' },
};

/** openEHR-style error bodies for every failure under /openehr/v1 (the contract's `error` object included). */
export function openEhrErrorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let error = toAppError(err);
    if (!error) {
      logger.error({ err, requestId: req.requestId, path: req.path }, 'unhandled openEHR error');
      error = new AppError('INTERNAL_ERROR', 'Internal server error');
    }
    if (res.headersSent) return void res.end();
    // 412/409 name the latest version, as openEHR asks, in ETag and Location.
    const latest = error.details?.find((d) => typeof d.latestVersionUid === 'string')?.latestVersionUid as string | undefined;
    if (latest) {
      res.setHeader('ETag', `"${latest}"`);
      const ehrId = req.path.match(/^\/ehr\/([^/]+)\//)?.[1];
      if (ehrId && /\/composition\//.test(req.path)) res.location(`${req.protocol}://${req.get('host')}${req.baseUrl}/ehr/${ehrId}/composition/${latest}`);
    }
    res.status(error.status).json({
      message: error.message,
      code: error.code,
      ...(error.details ? { validationErrors: error.details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)) } : {}),
      ...error.toBody(),
    });
  };
}
