import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, validationError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../common/json-depth';
import { toAppError } from '../http-errors';
import type { GraphQLRunner } from './execute';
import type { PublicBase } from '../public-url';
import { hasBody, ifMatch, pathId } from './params';
import { BODY_LIMIT_BYTES } from '../security/body';
import { verifyUtf8 } from '../security/text';

/** Paths below /openehr/v1 whose bodies may be XML (the body guard admits XML there): OPT upload, canonical XML compositions. */
export const OPENEHR_XML_PATHS: Array<string | RegExp> = ['/definition/template/adl1.4', /^\/ehr\/[^/]+\/composition(\/[^/]+)?$/];
/** Paths below /openehr/v1 whose bodies may be plain text: stored query definitions (AQL). */
export const OPENEHR_TEXT_PATHS = [/^\/definition\/query\/[^/]+(\/[^/]+)?$/];
const XML = ['application/xml', 'text/xml'];
const xmlBody = express.text({ type: XML, limit: BODY_LIMIT_BYTES, verify: verifyUtf8 });
/** `?format=` of composition and example interactions: JSON (canonical), FLAT, STRUCTURED. */
const formatParam = (req: Request) => (typeof req.query.format === 'string' ? req.query.format : null);

/**
 * `/openehr/v1`: the openEHR REST API (Release 1.0.3 shapes). Thin: HTTP-level
 * checks and headers, then one GraphQL operation per interaction (openehr*
 * and aqlQuery fields of the ehr subgraph). Errors carry openEHR's
 * `{message, validationErrors}` beside the contract's `error` object.
 */
const RESULT = 'body uid lastModified deleted';

interface OpenEhrResult {
  body?: unknown;
  uid?: string | null;
  lastModified?: string | null;
  deleted?: boolean | null;
}

/**
 * Where each answered resource lives below /openehr/v1 (the Location header):
 * the REST paths are this adapter's, so it builds them from the request path
 * and the version uid the clinical record answered.
 */
const at = {
  ehr: (r: OpenEhrResult) => `/ehr/${r.uid}`,
  ehrStatus: (ehrId: string, r: OpenEhrResult) => `/ehr/${ehrId}/ehr_status/${r.uid}`,
  composition: (ehrId: string, r: OpenEhrResult) => `/ehr/${ehrId}/composition/${r.uid}`,
  // A version uid is <versioned object id>::<system>::<version>.
  ehrStatusVersion: (ehrId: string, r: OpenEhrResult) => `/ehr/${ehrId}/versioned_ehr_status/version/${r.uid}`,
  compositionVersion: (ehrId: string, r: OpenEhrResult) => `/ehr/${ehrId}/versioned_composition/${r.uid!.split('::')[0]}/version/${r.uid}`,
  contribution: (ehrId: string, r: OpenEhrResult) => `/ehr/${ehrId}/contribution/${r.uid}`,
  template: (templateId: string) => `/definition/template/adl1.4/${templateId}`,
};

/** The `name="value"` pairs of openEHR's structured headers (`committer.name="Dr X", description.value="why"`), names lower-cased. */
function headerFields(req: Request, names: string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const name of names) {
    const header = req.headers[name];
    if (typeof header !== 'string') continue;
    for (const match of header.matchAll(/([A-Za-z_.]+)\s*=\s*"((?:[^"\\]|\\.)*)"/g)) fields[match[1].toLowerCase()] = match[2].replace(/\\(.)/g, '$1');
  }
  return fields;
}

/** `openehr-audit-details: committer.name="Dr X", description.value="why"` (plus X-Change-Reason) → the audit record's reason. */
function auditReason(req: Request): string | undefined {
  const fields = headerFields(req, ['openehr-audit-details']);
  const changeReason = req.headers['x-change-reason'];
  const description = fields['description.value'] ?? fields.description ?? (typeof changeReason === 'string' ? changeReason.trim() : undefined);
  const committer = fields['committer.name'];
  const reason = [description, committer ? `(committer: ${committer})` : undefined].filter(Boolean).join(' ');
  return reason ? reason.slice(0, 1000) : undefined;
}

function requiredIfMatch(req: Request): string {
  const version = ifMatch(req);
  if (!version) throw validationError('If-Match is required: the version uid this change replaces', [{ path: 'If-Match', message: 'required' }]);
  return version;
}

function jsonBody(req: Request, optional = false): Record<string, unknown> | undefined {
  // An optional body may be left out, with or without a Content-Type.
  if (optional && !hasBody(req)) return undefined;
  if (!req.is(['application/json', 'application/*+json'])) {
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      req.is(['application/xml', 'text/xml']) ? 'XML is not supported: send JSON (see docs/exchange.md)' : 'Send the body as application/json',
    );
  }
  if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw validationError('The body must be a JSON object');
  return req.body as Record<string, unknown>;
}

/** `Prefer: return=minimal|representation|identifier` (minimal by default). */
function preference(req: Request): 'minimal' | 'representation' | 'identifier' {
  const match = /return=(minimal|representation|identifier)/.exec(String(req.headers.prefer ?? ''));
  return (match?.[1] as 'minimal' | 'representation' | 'identifier' | undefined) ?? 'minimal';
}

/**
 * The caller's word on a commit: `openEHR-AUDIT_DETAILS` (committer.name, description.value)
 * and `openEHR-VERSION` (lifecycle_state.code_string), stored in the version's commit_audit.
 */
function commitAudit(req: Request): Record<string, string> | null {
  const fields = headerFields(req, ['openehr-audit-details', 'openehr-version']);
  const audit: Record<string, string> = {};
  if (fields['committer.name']) audit.committer = fields['committer.name'];
  const description = fields['description.value'] ?? fields.description;
  if (description) audit.description = description;
  const state = fields['lifecycle_state.code_string'];
  if (state) audit.lifecycleState = state;
  return Object.keys(audit).length ? audit : null;
}

function headers(res: Response, result: OpenEhrResult, location?: string) {
  const base = res.locals.openEhrBase as string;
  if (result.uid) res.setHeader('ETag', `"${result.uid}"`);
  if (location) res.location(`${base}${location}`);
  if (result.lastModified) res.setHeader('Last-Modified', new Date(result.lastModified).toUTCString());
}

/** JSON as `application/json` exactly (openEHR's documented content type; JSON needs no charset parameter). */
function sendJson(res: Response, status: number, body: unknown) {
  // setHeader, not res.type(): the latter appends `; charset=utf-8`.
  if (!res.get('Content-Type')) res.setHeader('Content-Type', 'application/json');
  res.status(status).send(Buffer.from(JSON.stringify(body)));
}

/** GET: the body (204 for a logically deleted composition); `location` is the resource's path below /openehr/v1. */
function read(res: Response, result: OpenEhrResult, location?: string) {
  headers(res, result, location);
  if (result.deleted) res.status(204).end();
  else send(res, 200, result.body);
}

/** A body as JSON, or as XML when it is a string (a canonical XML composition). */
function send(res: Response, status: number, body: unknown) {
  if (typeof body === 'string') res.status(status).type('application/xml').send(body);
  else sendJson(res, status, body);
}

/** Writes: `Prefer: return=representation` gives the body, `return=identifier` `{uid}`, the default (minimal) none. */
function written(req: Request, res: Response, status: 200 | 201, result: OpenEhrResult, location: string) {
  headers(res, result, location);
  const prefer = preference(req);
  if (prefer === 'representation' && result.body !== undefined) send(res, status, result.body);
  else if (prefer === 'identifier' && result.uid) sendJson(res, status, { uid: result.uid });
  else res.status(status === 200 ? 204 : 201).end();
}

/**
 * The AQL parameters of a query string: every parameter but paging and
 * `reserved` ones; `query_parameters` may also carry them as a JSON object.
 */
function urlQueryParameters(search: URLSearchParams, reserved: string[]): Record<string, unknown> {
  let parameters: Record<string, unknown> = {};
  for (const [name, value] of search) if (![...reserved, 'offset', 'fetch', 'query_parameters'].includes(name)) parameters[name] = value;
  const json = search.get('query_parameters');
  if (json) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw validationError('query_parameters must be a JSON object', [{ path: 'query_parameters', message: 'invalid JSON' }]);
    }
    if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) {
      throw validationError(`query_parameters nests deeper than ${MAX_JSON_DEPTH} levels`, [
        { path: 'query_parameters', message: `nests deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
    parameters = { ...parameters, ...(parsed as Record<string, unknown>) };
  }
  return parameters;
}

function intParam(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\d{1,7}$/.test(value)) return Number(value);
  throw validationError(`${name} must be a whole number`, [{ path: name, message: 'invalid' }]);
}

/** A RESULTSET with its `_href`, the URL that runs the query by GET (an HTTP detail the engine does not know). */
function sendResultSet(res: Response, result: { meta: Record<string, unknown> }, path: string) {
  sendJson(res, 200, { ...result, meta: { _href: `${res.locals.openEhrBase}${path}`, ...result.meta } });
}

const AQL =
  'query($q: String!, $parameters: JSONObject, $offset: Int, $fetch: Int) { aqlQuery(q: $q, parameters: $parameters, offset: $offset, fetch: $fetch) }';

export function openEhrRoutes(run: GraphQLRunner, publicBase: PublicBase): Router {
  const router = Router();
  // Location headers are absolute, from the public base URL (never the request's Host).
  router.use((req, res, next) => {
    res.locals.openEhrBase = `${publicBase(req)}${req.baseUrl}`;
    next();
  });
  /** One GraphQL operation: `field(arg: $arg, …)`, each variable named and typed like its argument. */
  const call = async (req: Request, field: string, vars: Record<string, unknown>, kind: 'query' | 'mutation' = 'query'): Promise<OpenEhrResult> => {
    const names = Object.keys(vars);
    const signature = names.length ? `(${names.map((k) => `$${k}: ${FIELDS[field][k]}`).join(', ')})` : '';
    const args = names.length ? `(${names.map((k) => `${k}: $${k}`).join(', ')})` : '';
    const data = await run(req, `${kind}${signature} { ${field}${args} { ${RESULT} } }`, vars);
    return data[field];
  };

  // EHR: a body is an optional EHR_STATUS (subject, is_queryable, is_modifiable).
  router.post('/ehr', async (req, res) => {
    const result = await call(req, 'openehrCreateEhr', { ehrStatus: jsonBody(req, true) ?? null, reason: auditReason(req) ?? null }, 'mutation');
    written(req, res, 201, result, at.ehr(result));
  });
  router.put('/ehr/:ehrId', async (req, res) => {
    const vars = { ehrId: pathId(req, 'ehrId'), ehrStatus: jsonBody(req, true) ?? null, reason: auditReason(req) ?? null };
    const result = await call(req, 'openehrCreateEhr', vars, 'mutation');
    written(req, res, 201, result, at.ehr(result));
  });
  router.get('/ehr', async (req, res) => {
    const subjectId = typeof req.query.subject_id === 'string' ? req.query.subject_id : null;
    const subjectNamespace = typeof req.query.subject_namespace === 'string' ? req.query.subject_namespace : null;
    const result = await call(req, 'openehrEhr', { subjectId, subjectNamespace });
    read(res, result, at.ehr(result));
  });
  router.get('/ehr/:ehrId', async (req, res) => {
    const result = await call(req, 'openehrEhr', { ehrId: pathId(req, 'ehrId') });
    read(res, result, at.ehr(result));
  });

  // EHR_STATUS
  router.get('/ehr/:ehrId/ehr_status', async (req, res) => {
    const versionAtTime = typeof req.query.version_at_time === 'string' ? req.query.version_at_time : null;
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrEhrStatus', { ehrId, versionAtTime });
    read(res, result, at.ehrStatus(ehrId, result));
  });
  router.get('/ehr/:ehrId/ehr_status/:versionUid', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrEhrStatus', { ehrId, versionUid: pathId(req, 'versionUid') });
    read(res, result, at.ehrStatus(ehrId, result));
  });
  router.put('/ehr/:ehrId/ehr_status', async (req, res) => {
    const vars = { ehrId: pathId(req, 'ehrId'), ifMatch: requiredIfMatch(req), ehrStatus: jsonBody(req), reason: auditReason(req) ?? null };
    const result = await call(req, 'openehrUpdateEhrStatus', vars, 'mutation');
    written(req, res, 200, result, at.ehrStatus(vars.ehrId, result));
  });

  // VERSIONED_EHR_STATUS
  router.get('/ehr/:ehrId/versioned_ehr_status', async (req, res) => read(res, await call(req, 'openehrVersionedEhrStatus', { ehrId: pathId(req, 'ehrId') })));
  router.get('/ehr/:ehrId/versioned_ehr_status/revision_history', async (req, res) =>
    read(res, await call(req, 'openehrEhrStatusRevisionHistory', { ehrId: pathId(req, 'ehrId') })),
  );
  router.get('/ehr/:ehrId/versioned_ehr_status/version', async (req, res) => {
    const versionAtTime = typeof req.query.version_at_time === 'string' ? req.query.version_at_time : null;
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrEhrStatusVersion', { ehrId, versionAtTime });
    read(res, result, at.ehrStatusVersion(ehrId, result));
  });
  router.get('/ehr/:ehrId/versioned_ehr_status/version/:versionUid', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrEhrStatusVersion', { ehrId, versionUid: pathId(req, 'versionUid') });
    read(res, result, at.ehrStatusVersion(ehrId, result));
  });

  // COMPOSITION
  router.post('/ehr/:ehrId/composition', xmlBody, async (req, res) => {
    const templateId = typeof req.query.templateId === 'string' ? req.query.templateId : null;
    const vars = {
      ehrId: pathId(req, 'ehrId'),
      templateId,
      ...compositionInput(req),
      reason: auditReason(req) ?? null,
      audit: commitAudit(req),
    };
    const result = await call(req, 'openehrCreateComposition', vars, 'mutation');
    written(req, res, 201, result, at.composition(vars.ehrId, result));
  });
  router.get('/ehr/:ehrId/composition/:uid', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrComposition', { ehrId, uid: pathId(req, 'uid'), format: compositionOutputFormat(req) });
    read(res, result, at.composition(ehrId, result));
  });
  router.put('/ehr/:ehrId/composition/:uid', xmlBody, async (req, res) => {
    const templateId = typeof req.query.templateId === 'string' ? req.query.templateId : null;
    const vars = {
      ehrId: pathId(req, 'ehrId'),
      versionedObjectUid: pathId(req, 'uid'),
      ifMatch: requiredIfMatch(req),
      templateId,
      ...compositionInput(req),
      reason: auditReason(req) ?? null,
      audit: commitAudit(req),
    };
    const result = await call(req, 'openehrUpdateComposition', vars, 'mutation');
    written(req, res, 200, result, at.composition(vars.ehrId, result));
  });
  router.delete('/ehr/:ehrId/composition/:uid', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(
      req,
      'openehrDeleteComposition',
      { ehrId, precedingVersionUid: pathId(req, 'uid'), reason: auditReason(req) ?? null, audit: commitAudit(req) },
      'mutation',
    );
    headers(res, result, at.composition(ehrId, result));
    res.status(204).end();
  });

  // VERSIONED_COMPOSITION
  const versioned = (req: Request) => ({ ehrId: pathId(req, 'ehrId'), versionedObjectUid: pathId(req, 'uid') });
  router.get('/ehr/:ehrId/versioned_composition/:uid', async (req, res) => read(res, await call(req, 'openehrVersionedComposition', versioned(req))));
  router.get('/ehr/:ehrId/versioned_composition/:uid/revision_history', async (req, res) =>
    read(res, await call(req, 'openehrRevisionHistory', versioned(req))),
  );
  router.get('/ehr/:ehrId/versioned_composition/:uid/version', async (req, res) => {
    const versionAtTime = typeof req.query.version_at_time === 'string' ? req.query.version_at_time : null;
    const vars = { ...versioned(req), versionAtTime };
    const result = await call(req, 'openehrCompositionVersion', vars);
    read(res, result, at.compositionVersion(vars.ehrId, result));
  });
  router.get('/ehr/:ehrId/versioned_composition/:uid/version/:versionUid', async (req, res) => {
    const vars = { ...versioned(req), versionUid: pathId(req, 'versionUid') };
    const result = await call(req, 'openehrCompositionVersion', vars);
    read(res, result, at.compositionVersion(vars.ehrId, result));
  });

  // CONTRIBUTION
  router.post('/ehr/:ehrId/contribution', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrCommitContribution', { ehrId, contribution: jsonBody(req), reason: auditReason(req) ?? null }, 'mutation');
    written(req, res, 201, result, at.contribution(ehrId, result));
  });
  router.get('/ehr/:ehrId/contribution/:contributionUid', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrContribution', { ehrId, contributionUid: pathId(req, 'contributionUid') });
    read(res, result, at.contribution(ehrId, result));
  });

  // DEFINITION
  // An operational template (OPT 1.4) arrives as XML; CareGraph JSON templates as JSON.
  router.post('/definition/template/adl1.4', xmlBody, async (req, res) => {
    const xml = req.is(XML);
    if (xml && (typeof req.body !== 'string' || !req.body.trim())) throw validationError('The body must be an operational template (OPT 1.4 XML)');
    const template = xml ? (req.body as string) : jsonBody(req)!;
    const result = await call(req, 'openehrUploadTemplate', { template, reason: auditReason(req) ?? null }, 'mutation');
    // Stored under the OPT's template_id, or the template_id a JSON template was sent with.
    const templateId = typeof template === 'string' ? String(result.uid) : String(template.template_id);
    written(req, res, 201, { ...result, uid: undefined }, at.template(templateId));
  });
  router.get('/definition/template/adl1.4', async (req, res) => read(res, await call(req, 'openehrTemplates', {})));
  router.get('/definition/template/adl1.4/:templateId', async (req, res) => {
    const web = /application\/openehr\.wt\+json/.test(String(req.headers.accept ?? ''));
    const templateId = pathId(req, 'templateId');
    const result = await call(req, 'openehrTemplate', { templateId, webTemplate: web });
    if (typeof result.body === 'string') {
      // An OPT is answered as the XML it was uploaded as.
      headers(res, result, at.template(templateId));
      return void res.status(200).type('application/xml').send(result.body);
    }
    if (web) res.setHeader('Content-Type', 'application/openehr.wt+json');
    read(res, result, at.template(templateId));
  });
  router.get('/definition/template/adl1.4/:templateId/example', async (req, res) => {
    read(res, await call(req, 'openehrTemplateExample', { templateId: pathId(req, 'templateId'), format: formatParam(req) }));
  });

  // AQL
  router.post('/query/aql', async (req, res) => {
    const body = jsonBody(req)!;
    if (typeof body.q !== 'string' || !body.q.trim()) throw validationError('q (the AQL query) is required', [{ path: 'q', message: 'required' }]);
    const parameters = body.query_parameters ?? null;
    if (parameters !== null && (typeof parameters !== 'object' || Array.isArray(parameters)))
      throw validationError('query_parameters must be an object', [{ path: 'query_parameters', message: 'object' }]);
    const data = await run(req, AQL, { q: body.q, parameters, offset: intParam(body.offset, 'offset'), fetch: intParam(body.fetch, 'fetch') });
    sendResultSet(res, data.aqlQuery, `/query/aql?q=${encodeURIComponent(body.q)}`);
  });
  router.get('/query/aql', async (req, res) => {
    const search = new URL(req.originalUrl, 'http://localhost').searchParams;
    const q = search.get('q');
    if (!q) throw validationError('q (the AQL query) is required', [{ path: 'q', message: 'required' }]);
    const parameters = urlQueryParameters(search, ['q']);
    const data = await run(req, AQL, { q, parameters, offset: intParam(search.get('offset'), 'offset'), fetch: intParam(search.get('fetch'), 'fetch') });
    sendResultSet(res, data.aqlQuery, `/query/aql?q=${encodeURIComponent(q)}`);
  });

  directoryRoutes(router, call);
  storedQueryRoutes(router, run, call);

  // The rest of the openEHR REST API (ADL2, tags, …) is not implemented.
  router.all('/{*rest}', (req) => {
    throw new AppError('NOT_IMPLEMENTED', `${req.method} ${req.baseUrl}${req.path} is not implemented (see docs/exchange.md)`);
  });
  return router;
}

// ---- DIRECTORY --------------------------------------------------------------

/** The adapter's one-operation call (openEhrRoutes' `call`). */
type Call = (req: Request, field: string, vars: Record<string, unknown>, kind?: 'query' | 'mutation') => Promise<OpenEhrResult>;

const DIRECTORY_FIELDS: Record<string, Record<string, string>> = {
  openehrDirectory: { ehrId: 'ID!', versionUid: 'String', versionAtTime: 'String', path: 'String' },
  openehrCreateDirectory: { ehrId: 'ID!', folder: 'JSONObject!', reason: 'String', audit: 'JSONObject' },
  openehrUpdateDirectory: { ehrId: 'ID!', ifMatch: 'String!', folder: 'JSONObject!', reason: 'String', audit: 'JSONObject' },
  openehrDeleteDirectory: { ehrId: 'ID!', ifMatch: 'String!', reason: 'String', audit: 'JSONObject' },
};

/** The directory version's place below /openehr/v1. */
const directoryAt = (ehrId: string, r: OpenEhrResult) => `/ehr/${ehrId}/directory/${r.uid}`;
const queryString = (req: Request, name: string) => (typeof req.query[name] === 'string' ? req.query[name] : null);

/** DIRECTORY: the EHR's versioned FOLDER tree (create, update and delete with If-Match, read by version, at a time, at a path). */
function directoryRoutes(router: Router, call: Call) {
  router.post('/ehr/:ehrId/directory', async (req, res) => {
    const vars = { ehrId: pathId(req, 'ehrId'), folder: jsonBody(req), reason: auditReason(req) ?? null, audit: commitAudit(req) };
    const result = await call(req, 'openehrCreateDirectory', vars, 'mutation');
    written(req, res, 201, result, directoryAt(vars.ehrId, result));
  });
  router.put('/ehr/:ehrId/directory', async (req, res) => {
    const vars = {
      ehrId: pathId(req, 'ehrId'),
      ifMatch: requiredIfMatch(req),
      folder: jsonBody(req),
      reason: auditReason(req) ?? null,
      audit: commitAudit(req),
    };
    const result = await call(req, 'openehrUpdateDirectory', vars, 'mutation');
    written(req, res, 200, result, directoryAt(vars.ehrId, result));
  });
  router.delete('/ehr/:ehrId/directory', async (req, res) => {
    const vars = { ehrId: pathId(req, 'ehrId'), ifMatch: requiredIfMatch(req), reason: auditReason(req) ?? null, audit: commitAudit(req) };
    const result = await call(req, 'openehrDeleteDirectory', vars, 'mutation');
    headers(res, result, directoryAt(vars.ehrId, result));
    res.status(204).end();
  });
  router.get('/ehr/:ehrId/directory', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrDirectory', { ehrId, versionAtTime: queryString(req, 'version_at_time'), path: queryString(req, 'path') });
    read(res, result, directoryAt(ehrId, result));
  });
  router.get('/ehr/:ehrId/directory/:versionUid', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrDirectory', { ehrId, versionUid: pathId(req, 'versionUid'), path: queryString(req, 'path') });
    read(res, result, directoryAt(ehrId, result));
  });
}

// ---- Canonical XML compositions: Content-Type and Accept application/xml ----

/** The composition of a POST/PUT: canonical XML for an XML body (the ehr subgraph checks it against `?format=`), else JSON. */
function compositionInput(req: Request): { composition: Record<string, unknown> | null; xml: string | null; format: string | null } {
  if (!hasBody(req) || !req.is(XML)) return { composition: jsonBody(req)!, xml: null, format: formatParam(req) };
  if (typeof req.body !== 'string' || !req.body.trim()) throw validationError('The body must be a canonical XML composition');
  return { composition: null, xml: req.body, format: formatParam(req) };
}

/** `?format=`, else canonical XML when the client accepts XML rather than JSON. */
function compositionOutputFormat(req: Request): string | null {
  return formatParam(req) ?? (req.accepts(['application/json', 'application/xml']) === 'application/xml' ? 'XML' : null);
}

// ---- Stored queries: DEFINITION /definition/query and QUERY /query/{qualified_query_name} ----

const plainText = express.text({ type: 'text/plain', limit: BODY_LIMIT_BYTES, verify: verifyUtf8 });
const RUN_STORED =
  'query($name: String!, $version: String, $parameters: JSONObject, $offset: Int, $fetch: Int, $ehrId: String) { openehrRunStoredQuery(name: $name, version: $version, parameters: $parameters, offset: $offset, fetch: $fetch, ehrId: $ehrId) }';

/** `openehr-ehr-id` header or `ehr_id` parameter: the EHR a query runs in. */
function queryEhrId(req: Request, search: URLSearchParams): string | null {
  const header = req.headers['openehr-ehr-id'];
  const value = typeof header === 'string' && header.trim() ? header.trim() : search.get('ehr_id');
  return value || null;
}

function storedQueryRoutes(router: Router, run: GraphQLRunner, call: Call) {
  const location = (body: unknown) => {
    const stored = body as { name: string; version: string };
    return `/definition/query/${stored.name}/${stored.version}`;
  };
  // The AQL text is the body; the version is the path's, or the next one.
  const store = async (req: Request, res: Response) => {
    if (!hasBody(req)) throw validationError('The body must be the AQL query', [{ path: 'q', message: 'required' }]);
    if (!req.is('text/plain') || typeof req.body !== 'string')
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the AQL query as the body, Content-Type: text/plain');
    const queryType = typeof req.query.query_type === 'string' ? req.query.query_type : null;
    const vars = { name: req.params.name, version: req.params.version ?? null, q: req.body, type: queryType, reason: auditReason(req) ?? null };
    const result = await call(req, 'openehrStoreQuery', vars, 'mutation');
    res.location(`${res.locals.openEhrBase as string}${location(result.body)}`);
    res.status(200).end();
  };
  router.put('/definition/query/:name', plainText, store);
  router.put('/definition/query/:name/:version', plainText, store);
  router.get('/definition/query', async (req, res) => read(res, await call(req, 'openehrStoredQueries', {})));
  router.get('/definition/query/:name', async (req, res) => read(res, await call(req, 'openehrStoredQueries', { name: req.params.name })));
  router.get('/definition/query/:name/:version', async (req, res) =>
    read(res, await call(req, 'openehrStoredQuery', { name: req.params.name, version: req.params.version })),
  );

  const execute = async (req: Request, res: Response, body: { parameters: Record<string, unknown>; offset?: number; fetch?: number }, ehrId: string | null) => {
    // The EHR a query runs in also answers its $ehr_id.
    const parameters = ehrId && !('ehr_id' in body.parameters) ? { ...body.parameters, ehr_id: ehrId } : body.parameters;
    const vars = { name: req.params.name, version: req.params.version ?? null, parameters, offset: body.offset, fetch: body.fetch, ehrId };
    const data = await run(req, RUN_STORED, vars);
    const path = `/query/${encodeURIComponent(String(req.params.name))}${req.params.version ? `/${encodeURIComponent(String(req.params.version))}` : ''}`;
    sendResultSet(res, data.openehrRunStoredQuery, path);
  };
  const viaGet = async (req: Request, res: Response) => {
    const search = new URL(req.originalUrl, 'http://localhost').searchParams;
    const offset = intParam(search.get('offset'), 'offset');
    const fetch = intParam(search.get('fetch'), 'fetch');
    await execute(req, res, { parameters: urlQueryParameters(search, []), offset, fetch }, queryEhrId(req, search));
  };
  const viaPost = async (req: Request, res: Response) => {
    const body = jsonBody(req, true) ?? {};
    const parameters = body.query_parameters ?? {};
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters))
      throw validationError('query_parameters must be an object', [{ path: 'query_parameters', message: 'object' }]);
    const search = new URL(req.originalUrl, 'http://localhost').searchParams;
    const paging = { offset: intParam(body.offset, 'offset'), fetch: intParam(body.fetch, 'fetch') };
    await execute(req, res, { parameters: parameters as Record<string, unknown>, ...paging }, queryEhrId(req, search));
  };
  router.get('/query/:name', viaGet);
  router.get('/query/:name/:version', viaGet);
  router.post('/query/:name', viaPost);
  router.post('/query/:name/:version', viaPost);
}

/** The arguments of each ehr-subgraph field the routes call, with their GraphQL types. */
const FIELDS: Record<string, Record<string, string>> = {
  openehrStoreQuery: { name: 'String!', version: 'String', q: 'String!', type: 'String', reason: 'String' },
  openehrStoredQueries: { name: 'String' },
  openehrStoredQuery: { name: 'String!', version: 'String' },
  openehrEhr: { ehrId: 'ID', subjectId: 'String', subjectNamespace: 'String' },
  openehrCreateEhr: { ehrId: 'ID', ehrStatus: 'JSON', reason: 'String' },
  openehrVersionedEhrStatus: { ehrId: 'ID!' },
  openehrEhrStatusRevisionHistory: { ehrId: 'ID!' },
  openehrEhrStatusVersion: { ehrId: 'ID!', versionUid: 'String', versionAtTime: 'String' },
  openehrEhrStatus: { ehrId: 'ID!', versionUid: 'String', versionAtTime: 'String' },
  openehrUpdateEhrStatus: { ehrId: 'ID!', ifMatch: 'String!', ehrStatus: 'JSON', reason: 'String' },
  openehrCreateComposition: {
    ehrId: 'ID!',
    templateId: 'String',
    composition: 'JSONObject',
    xml: 'String',
    reason: 'String',
    format: 'String',
    audit: 'JSONObject',
  },
  openehrComposition: { ehrId: 'ID!', uid: 'ID!', format: 'String' },
  openehrUpdateComposition: {
    ehrId: 'ID!',
    versionedObjectUid: 'ID!',
    ifMatch: 'String!',
    templateId: 'String',
    composition: 'JSONObject',
    xml: 'String',
    reason: 'String',
    format: 'String',
    audit: 'JSONObject',
  },
  openehrDeleteComposition: { ehrId: 'ID!', precedingVersionUid: 'ID!', reason: 'String', audit: 'JSONObject' },
  openehrVersionedComposition: { ehrId: 'ID!', versionedObjectUid: 'ID!' },
  openehrRevisionHistory: { ehrId: 'ID!', versionedObjectUid: 'ID!' },
  openehrCompositionVersion: { ehrId: 'ID!', versionedObjectUid: 'ID!', versionUid: 'String', versionAtTime: 'String' },
  openehrCommitContribution: { ehrId: 'ID!', contribution: 'JSON!', reason: 'String' },
  openehrContribution: { ehrId: 'ID!', contributionUid: 'ID!' },
  openehrTemplates: {},
  openehrTemplate: { templateId: 'ID!', webTemplate: 'Boolean' },
  openehrTemplateExample: { templateId: 'ID!', format: 'String' },
  openehrUploadTemplate: { template: 'JSON', reason: 'String' },
  ...DIRECTORY_FIELDS,
};

/** openEHR-style error bodies for every failure under /openehr/v1 (the contract's `error` object included). */
export function openEhrErrorHandler(logger: Logger, publicBase: PublicBase) {
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
      if (ehrId && /\/composition\//.test(req.path)) res.location(`${publicBase(req)}${req.baseUrl}/ehr/${ehrId}/composition/${latest}`);
    }
    sendJson(res, error.status, {
      message: error.message,
      code: error.code,
      validationErrors: (error.details ?? []).map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)),
      ...error.toBody(),
    });
  };
}
