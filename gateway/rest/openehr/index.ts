import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, validationError } from '../../../common/errors';
import type { Logger } from '../../../common/logger';
import { toAppError } from '../../http-errors';
import type { GraphQLRunner } from '../execute';
import type { PublicBase } from '../../public-url';
import { hasBody, pathId } from '../params';
import { BODY_LIMIT_BYTES } from '../../security/body';
import { verifyUtf8 } from '../../security/text';
import { DIRECTORY_FIELDS, directoryRoutes } from './directory';
import {
  auditReason,
  commitAudit,
  commitItemTags,
  headers,
  jsonBody,
  queryString,
  read,
  RESULT,
  requiredIfMatch,
  sendJson,
  sendXml,
  versionSelector,
  written,
  type OpenEhrResult,
} from './http';
import { ITEM_TAG_FIELDS, itemTagRoutes } from './item-tags';
import { queryRoutes } from './queries';

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
 * `{message, validationErrors}` beside the contract's `error` object. One
 * file per resource group beside this one: directory, item tags, queries.
 */

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
    const vars = { ehrStatus: jsonBody(req, true) ?? null, reason: auditReason(req) ?? null, audit: commitAudit(req) };
    const result = await call(req, 'openehrCreateEhr', vars, 'mutation');
    written(req, res, 201, result, at.ehr(result));
  });
  router.put('/ehr/:ehrId', async (req, res) => {
    const vars = { ehrId: pathId(req, 'ehrId'), ehrStatus: jsonBody(req, true) ?? null, reason: auditReason(req) ?? null, audit: commitAudit(req) };
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

  /**
   * A read of `field` at the version the request names: the latest, the one at ?version_at_time=, or the one the path
   * names. One handler serves both paths of a resource, and each path keeps its own route label.
   */
  const readVersion =
    (
      field: string,
      location: (ehrId: string, r: OpenEhrResult) => string,
      ids: (req: Request) => { ehrId: string } = (req) => ({ ehrId: pathId(req, 'ehrId') }),
    ) =>
    async (req: Request, res: Response) => {
      const vars = { ...ids(req), ...versionSelector(req) };
      const result = await call(req, field, vars);
      read(res, result, location(vars.ehrId, result));
    };

  // EHR_STATUS
  const readEhrStatus = readVersion('openehrEhrStatus', at.ehrStatus);
  router.get('/ehr/:ehrId/ehr_status', readEhrStatus);
  router.get('/ehr/:ehrId/ehr_status/:versionUid', readEhrStatus);
  router.put('/ehr/:ehrId/ehr_status', async (req, res) => {
    const vars = {
      ehrId: pathId(req, 'ehrId'),
      ifMatch: requiredIfMatch(req),
      ehrStatus: jsonBody(req),
      reason: auditReason(req) ?? null,
      audit: commitAudit(req),
      itemTags: commitItemTags(req),
    };
    const result = await call(req, 'openehrUpdateEhrStatus', vars, 'mutation');
    written(req, res, 200, result, at.ehrStatus(vars.ehrId, result));
  });

  // VERSIONED_EHR_STATUS
  router.get('/ehr/:ehrId/versioned_ehr_status', async (req, res) => read(res, await call(req, 'openehrVersionedEhrStatus', { ehrId: pathId(req, 'ehrId') })));
  router.get('/ehr/:ehrId/versioned_ehr_status/revision_history', async (req, res) =>
    read(res, await call(req, 'openehrEhrStatusRevisionHistory', { ehrId: pathId(req, 'ehrId') })),
  );
  const readEhrStatusVersion = readVersion('openehrEhrStatusVersion', at.ehrStatusVersion);
  router.get('/ehr/:ehrId/versioned_ehr_status/version', readEhrStatusVersion);
  router.get('/ehr/:ehrId/versioned_ehr_status/version/:versionUid', readEhrStatusVersion);

  // COMPOSITION
  router.post('/ehr/:ehrId/composition', xmlBody, async (req, res) => {
    const vars = { ehrId: pathId(req, 'ehrId'), ...compositionCommit(req) };
    const result = await call(req, 'openehrCreateComposition', vars, 'mutation');
    written(req, res, 201, result, at.composition(vars.ehrId, result));
  });
  router.get('/ehr/:ehrId/composition/:uid', async (req, res) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrComposition', { ehrId, uid: pathId(req, 'uid'), format: compositionOutputFormat(req) });
    read(res, result, at.composition(ehrId, result));
  });
  router.put('/ehr/:ehrId/composition/:uid', xmlBody, async (req, res) => {
    const vars = { ehrId: pathId(req, 'ehrId'), versionedObjectUid: pathId(req, 'uid'), ifMatch: requiredIfMatch(req), ...compositionCommit(req) };
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
  const readCompositionVersion = readVersion('openehrCompositionVersion', at.compositionVersion, versioned);
  router.get('/ehr/:ehrId/versioned_composition/:uid/version', readCompositionVersion);
  router.get('/ehr/:ehrId/versioned_composition/:uid/version/:versionUid', readCompositionVersion);

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
    acceptable(req, ['application/xml', 'application/json', 'application/openehr.wt+json']);
    const web = /application\/openehr\.wt\+json/.test(String(req.headers.accept ?? ''));
    const templateId = pathId(req, 'templateId');
    const result = await call(req, 'openehrTemplate', { templateId, webTemplate: web });
    if (typeof result.body === 'string') {
      // An OPT is answered as the XML it was uploaded as.
      headers(res, result, at.template(templateId));
      return void sendXml(res, 200, result.body);
    }
    if (web) res.setHeader('Content-Type', 'application/openehr.wt+json');
    read(res, result, at.template(templateId));
  });
  router.get('/definition/template/adl1.4/:templateId/example', async (req, res) => {
    acceptable(req, ['application/json', 'application/xml']);
    read(res, await call(req, 'openehrTemplateExample', { templateId: pathId(req, 'templateId'), format: formatParam(req) }));
  });

  directoryRoutes(router, call);
  itemTagRoutes(router, call);
  queryRoutes(router, run, call);

  // The rest of the openEHR REST API (ADL2 templates, demographics, admin) is not implemented.
  router.all('/{*rest}', (req) => {
    throw new AppError('NOT_IMPLEMENTED', `${req.method} ${req.baseUrl}${req.path} is not implemented (see docs/exchange.md)`);
  });
  return router;
}

/** 406 when the client's Accept names none of the types an interaction answers in. */
function acceptable(req: Request, types: string[]): void {
  if (!req.accepts(types)) throw new AppError('NOT_ACCEPTABLE', `Accept: ${req.headers.accept}: this resource is served as ${types.join(', ')}`);
}

// ---- Canonical XML compositions: Content-Type and Accept application/xml ----

/** The composition of a POST/PUT: canonical XML for an XML body (the ehr subgraph checks it against `?format=`), else JSON. */
function compositionInput(req: Request): { composition: Record<string, unknown> | null; xml: string | null; format: string | null } {
  if (!hasBody(req) || !req.is(XML)) return { composition: jsonBody(req)!, xml: null, format: formatParam(req) };
  if (typeof req.body !== 'string' || !req.body.trim()) throw validationError('The body must be a canonical XML composition');
  return { composition: null, xml: req.body, format: formatParam(req) };
}

/** What a POST/PUT of a composition commits beside the ids of its target: the variables of COMPOSITION_COMMIT. */
function compositionCommit(req: Request) {
  return {
    templateId: queryString(req, 'templateId'),
    ...compositionInput(req),
    reason: auditReason(req) ?? null,
    audit: commitAudit(req),
    itemTags: commitItemTags(req),
  };
}

/** `?format=`, else canonical XML when the client accepts XML rather than JSON. */
function compositionOutputFormat(req: Request): string | null {
  return formatParam(req) ?? (req.accepts(['application/json', 'application/xml']) === 'application/xml' ? 'XML' : null);
}

/** The arguments a composition commit (create or update) takes beside the ids of its target: CompositionCommitArgs. */
const COMPOSITION_COMMIT = {
  templateId: 'String',
  composition: 'JSONObject',
  xml: 'String',
  reason: 'String',
  format: 'String',
  audit: 'JSONObject',
  itemTags: 'JSONObject',
};

/** The arguments of each ehr-subgraph field the routes call, with their GraphQL types. */
const FIELDS: Record<string, Record<string, string>> = {
  openehrStoreQuery: { name: 'String!', version: 'String', q: 'String!', type: 'String', reason: 'String' },
  openehrStoredQueries: { name: 'String' },
  openehrStoredQuery: { name: 'String!', version: 'String' },
  openehrEhr: { ehrId: 'ID', subjectId: 'String', subjectNamespace: 'String' },
  openehrCreateEhr: { ehrId: 'ID', ehrStatus: 'JSON', reason: 'String', audit: 'JSONObject' },
  openehrVersionedEhrStatus: { ehrId: 'ID!' },
  openehrEhrStatusRevisionHistory: { ehrId: 'ID!' },
  openehrEhrStatusVersion: { ehrId: 'ID!', versionUid: 'String', versionAtTime: 'String' },
  openehrEhrStatus: { ehrId: 'ID!', versionUid: 'String', versionAtTime: 'String' },
  openehrUpdateEhrStatus: { ehrId: 'ID!', ifMatch: 'String!', ehrStatus: 'JSON', reason: 'String', audit: 'JSONObject', itemTags: 'JSONObject' },
  openehrCreateComposition: { ehrId: 'ID!', ...COMPOSITION_COMMIT },
  openehrComposition: { ehrId: 'ID!', uid: 'ID!', format: 'String' },
  openehrUpdateComposition: { ehrId: 'ID!', versionedObjectUid: 'ID!', ifMatch: 'String!', ...COMPOSITION_COMMIT },
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
  ...ITEM_TAG_FIELDS,
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
