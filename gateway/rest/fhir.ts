import { Router, type NextFunction, type Request, type Response } from 'express';
import { AppError, validationError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { toAppError } from '../http-errors';
import type { GraphQLRunner } from './execute';
import { changeReason, ifMatch } from './params';
import type { PublicBase } from '../public-url';
import { capabilityStatement } from '../../common/fhir/capability';

/**
 * `/fhir/R4`: HL7 FHIR R4 REST over the clinical record. Thin: HTTP-level
 * checks, then one GraphQL operation per interaction (fhir* fields of the ehr
 * subgraph, which owns the mapping); errors are OperationOutcome.
 */
const FHIR_JSON = 'application/fhir+json; charset=utf-8';
const TYPE = /^[A-Z][A-Za-z]{1,63}$/;
const ID = /^[A-Za-z0-9\-.]{1,64}$/;

const ISSUE_TYPE: Record<string, string> = {
  VALIDATION_ERROR: 'invalid',
  TENANT_REQUIRED: 'required',
  UNAUTHENTICATED: 'login',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not-found',
  NOT_ACCEPTABLE: 'not-supported',
  GONE: 'deleted',
  CONFLICT: 'conflict',
  PRECONDITION_FAILED: 'conflict',
  PAYLOAD_TOO_LARGE: 'too-costly',
  UNSUPPORTED_MEDIA_TYPE: 'not-supported',
  PATIENT_OPTED_OUT: 'business-rule',
  TEMPLATE_VARIABLES_INVALID: 'invalid',
  COMPOSITION_INVALID: 'invariant',
  UNKNOWN_TEMPLATE: 'not-found',
  RATE_LIMIT_EXCEEDED: 'throttled',
  NOT_IMPLEMENTED: 'not-supported',
  INTERNAL_ERROR: 'exception',
  SERVICE_UNAVAILABLE: 'transient',
};

function send(res: Response, status: number, body: unknown) {
  res.status(status).type(FHIR_JSON).send(JSON.stringify(body));
}

function operationOutcome(error: AppError) {
  return {
    resourceType: 'OperationOutcome',
    issue: [
      { severity: 'error', code: ISSUE_TYPE[error.code] ?? 'exception', details: { text: error.code }, diagnostics: error.message },
      ...(error.details ?? []).map((d) => ({
        severity: 'error',
        code: ISSUE_TYPE[error.code] ?? 'exception',
        // A detail's own code (an XDS error code of an MHD refusal, e.g. XDSUnknownPatientId) is the issue's details.
        ...(typeof d.xdsErrorCode === 'string' ? { details: { text: d.xdsErrorCode } } : {}),
        diagnostics: d.path ? `${d.path}: ${d.message}` : d.message,
      })),
    ],
  };
}

const notSupported = (what: string) => new AppError('NOT_IMPLEMENTED', `${what} is not supported by this server (see GET /fhir/R4/metadata)`);

function segment(req: Request, name: string, pattern: RegExp): string {
  const value = req.params[name];
  if (typeof value !== 'string' || !pattern.test(value))
    throw validationError(`'${String(value)}' is not a valid FHIR ${name}`, [{ path: name, message: 'invalid' }]);
  return value;
}

/** Search parameters in order, repeats kept: the query string, plus the form body of POST _search. `_format` is content negotiation. */
function searchParams(req: Request): Array<{ name: string; value: string }> {
  const params = [...new URL(req.originalUrl, 'http://localhost').searchParams.entries()].map(([name, value]) => ({ name, value }));
  if (req.method === 'POST' && req.body && typeof req.body === 'object') {
    for (const [name, value] of Object.entries(req.body as Record<string, unknown>)) {
      for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string') params.push({ name, value: v });
    }
  }
  return params.filter((p) => p.name !== '_format' && p.name !== '_pretty');
}

/** The FHIR version media-type parameter (`fhirVersion=4.0`): R4 is 4.0 (4.0.1 names the same version). */
const FHIR_VERSION_PARAMETER = /;\s*fhirVersion\s*=\s*"?([^";,\s]*)"?/i;
const R4_VERSIONS = ['4.0', '4.0.1'];

/** A media type's fhirVersion, when it has one. */
const fhirVersionOf = (mediaType: string): string | undefined => FHIR_VERSION_PARAMETER.exec(mediaType)?.[1];

/**
 * Only JSON of FHIR R4 is served: `_format` (which overrides Accept) or an Accept naming no JSON type answers 406.
 * An Accept range with `fhirVersion=4.0` is that range; one naming another FHIR version is not acceptable here.
 */
function negotiate(req: Request) {
  const format = new URL(req.originalUrl, 'http://localhost').searchParams.get('_format');
  if (format && !['json', 'application/json', 'application/fhir+json'].includes(format.replace(FHIR_VERSION_PARAMETER, '').trim()))
    throw new AppError('NOT_ACCEPTABLE', `_format=${format}: only JSON (application/fhir+json) is served`);
  if (format) return assertR4(fhirVersionOf(format), 'NOT_ACCEPTABLE', `_format=${format}`);
  const accept = req.headers.accept;
  if (!accept) return;
  const ranges = accept.split(',').flatMap((range) => {
    const version = fhirVersionOf(range);
    if (version === undefined) return [range];
    return R4_VERSIONS.includes(version) ? [range.replace(FHIR_VERSION_PARAMETER, '')] : [];
  });
  if (ranges.length === 0) assertR4(fhirVersionOf(accept), 'NOT_ACCEPTABLE', `Accept: ${accept}`);
  // Express negotiates on the parameters too: the R4 ranges are matched without theirs.
  req.headers.accept = ranges.join(',');
  if (!req.accepts(['application/fhir+json', 'application/json']))
    throw new AppError('NOT_ACCEPTABLE', `Accept: ${accept}: only JSON (application/fhir+json) is served`);
}

function assertR4(version: string | undefined, code: 'NOT_ACCEPTABLE' | 'UNSUPPORTED_MEDIA_TYPE', what: string): void {
  if (version !== undefined && !R4_VERSIONS.includes(version))
    throw new AppError(code, `${what}: this server serves FHIR R4 (fhirVersion=4.0), not fhirVersion=${version}`);
}

/** A request body's Content-Type may name FHIR R4 (fhirVersion=4.0) and no other version (415). */
function assertR4Body(req: Request): void {
  assertR4(fhirVersionOf(String(req.headers['content-type'] ?? '')), 'UNSUPPORTED_MEDIA_TYPE', `Content-Type: ${String(req.headers['content-type'])}`);
}

/** `Prefer: handling=strict` makes unknown search parameters a 400; lenient is FHIR's default. */
const strictHandling = (req: Request): boolean => /(?:^|[\s,;])handling\s*=\s*strict\b/i.test(String(req.headers.prefer ?? ''));

function resourceBody(req: Request): Record<string, unknown> {
  if (!req.is(['application/fhir+json', 'application/json'])) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the resource as application/fhir+json');
  assertR4Body(req);
  const body = req.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body) || typeof body.resourceType !== 'string')
    throw validationError('The body must be a FHIR resource (JSON object with resourceType)');
  return body;
}

function sendResource(req: Request, res: Response, status: number, resource: any) {
  const base = serviceBase(res);
  if (resource.meta?.versionId) res.setHeader('ETag', `W/"${resource.meta.versionId}"`);
  if (resource.meta?.lastUpdated) res.setHeader('Last-Modified', new Date(resource.meta.lastUpdated).toUTCString());
  if (status === 201) res.location(`${base}/${resource.resourceType}/${resource.id}/_history/${resource.meta.versionId}`);
  const prefer = String(req.headers.prefer ?? '');
  if (/return=minimal/.test(prefer)) res.status(status).end();
  else send(res, status, resource);
}

/** The FHIR service base of this request (set by fhirRoutes from the public base URL). */
const serviceBase = (res: Response): string => res.locals.fhirBase as string;

interface RelativeBundle {
  link?: Array<{ url: string }>;
  entry?: Array<{ fullUrl?: string }>;
}

/** The clinical record answers Bundles with URLs relative to the service base; clients get them absolute, from the public base URL. */
function absoluteBundle(bundle: RelativeBundle, base: string) {
  return {
    ...bundle,
    ...(bundle.link ? { link: bundle.link.map((l) => ({ ...l, url: `${base}/${l.url}` })) } : {}),
    ...(bundle.entry ? { entry: bundle.entry.map((e) => (e.fullUrl === undefined ? e : { ...e, fullUrl: `${base}/${e.fullUrl}` })) } : {}),
  };
}

export function fhirRoutes(run: GraphQLRunner, publicBase: PublicBase): Router {
  const router = Router();
  const baseUrl = (req: Request) => serviceBase(req.res!);
  router.use((req, res, next) => {
    res.locals.fhirBase = `${publicBase(req)}${req.baseUrl}`;
    next();
  });

  // ITI-68 Retrieve Document: the document's bytes, unless the client asks for FHIR JSON (then a Binary resource); negotiated here, not below.
  router.get('/Binary/:id', async (req, res) => {
    const data = await run(req, 'query($id: ID!) { fhirRead(resourceType: "Binary", id: $id) }', { id: segment(req, 'id', ID) });
    const resource = data.fhirRead as { contentType: string; data: string };
    const format = new URL(req.originalUrl, 'http://localhost').searchParams.get('_format');
    const wanted = format
      ? ['json', 'application/json', 'application/fhir+json'].includes(format)
        ? 'application/fhir+json'
        : format
      : req.accepts([resource.contentType, 'application/fhir+json', 'application/json']);
    if (wanted === 'application/fhir+json' || wanted === 'application/json') return sendResource(req, res, 200, resource);
    if (wanted !== resource.contentType)
      throw new AppError('NOT_ACCEPTABLE', `The document is ${resource.contentType}; ask for it, or for application/fhir+json`);
    res.status(200).type(resource.contentType).send(Buffer.from(resource.data, 'base64'));
  });

  router.use((req, _res, next) => {
    negotiate(req);
    next();
  });

  // IHE MHD ITI-65 Provide Document Bundle: the only transaction Bundle this server takes.
  router.post('/', async (req, res) => {
    const bundle = resourceBody(req);
    if (bundle.resourceType !== 'Bundle')
      throw validationError('POST [base] takes a transaction Bundle (IHE MHD ITI-65 Provide Document Bundle)', [
        { path: 'resourceType', message: "must be 'Bundle'" },
      ]);
    if (bundle.type === 'batch') throw notSupported('batch');
    const data = await run(req, 'mutation($bundle: JSONObject!) { mhdProvideDocumentBundle(bundle: $bundle) }', { bundle });
    send(res, 200, absoluteBundle(data.mhdProvideDocumentBundle, baseUrl(req)));
  });

  const search = async (req: Request, res: Response) => {
    if (req.method === 'POST' && !req.is('application/x-www-form-urlencoded'))
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'POST _search takes application/x-www-form-urlencoded');
    const data = await run(
      req,
      'query($type: String!, $params: [FhirSearchParam!]!, $strict: Boolean) { fhirSearch(resourceType: $type, params: $params, strict: $strict) }',
      { type: segment(req, 'type', TYPE), params: searchParams(req), strict: strictHandling(req) },
    );
    send(res, 200, absoluteBundle(data.fhirSearch, baseUrl(req)));
  };
  router.get('/:type', search);
  router.post('/:type/_search', search);

  router.post('/:type', async (req, res) => {
    const type = segment(req, 'type', TYPE);
    const resource = resourceBody(req);
    if (resource.resourceType !== type)
      throw validationError(`The body is a ${String(resource.resourceType)}, the URL names ${type}`, [
        { path: 'resourceType', message: 'does not match the URL' },
      ]);
    const ifNoneExist = req.headers['if-none-exist'];
    if (typeof ifNoneExist === 'string') {
      const data = await run(
        req,
        'mutation($resource: JSONObject!, $ifNoneExist: String!, $reason: String) { fhirConditionalCreate(resource: $resource, ifNoneExist: $ifNoneExist, reason: $reason) }',
        { resource, ifNoneExist, reason: changeReason(req) },
      );
      const { created, resource: result } = data.fhirConditionalCreate;
      return sendResource(req, res, created ? 201 : 200, result);
    }
    const data = await run(req, 'mutation($resource: JSONObject!, $reason: String) { fhirCreate(resource: $resource, reason: $reason) }', {
      resource,
      reason: changeReason(req),
    });
    sendResource(req, res, 201, data.fhirCreate);
  });

  // Conditional update: PUT [type]?[search].
  router.put('/:type', async (req, res) => {
    const query = new URL(req.originalUrl, 'http://localhost').search.slice(1);
    if (!query) throw validationError('PUT on a type needs search parameters (conditional update), or PUT [type]/[id]', [{ path: 'query', message: 'empty' }]);
    const data = await run(
      req,
      'mutation($type: String!, $query: String!, $resource: JSONObject!, $ifMatch: String, $reason: String) { fhirConditionalUpdate(resourceType: $type, query: $query, resource: $resource, ifMatch: $ifMatch, reason: $reason) }',
      { type: segment(req, 'type', TYPE), query, resource: resourceBody(req), ifMatch: ifMatch(req), reason: changeReason(req) },
    );
    const { created, resource } = data.fhirConditionalUpdate;
    sendResource(req, res, created ? 201 : 200, resource);
  });

  // Conditional delete: DELETE [type]?[search].
  router.delete('/:type', async (req, res) => {
    const query = new URL(req.originalUrl, 'http://localhost').search.slice(1);
    if (!query)
      throw validationError('DELETE on a type needs search parameters (conditional delete), or DELETE [type]/[id]', [{ path: 'query', message: 'empty' }]);
    await run(
      req,
      'mutation($type: String!, $query: String!, $reason: String) { fhirConditionalDelete(resourceType: $type, query: $query, reason: $reason) }',
      {
        type: segment(req, 'type', TYPE),
        query,
        reason: changeReason(req),
      },
    );
    res.status(204).end();
  });

  router.get('/:type/_history', () => {
    throw notSupported('Type-level history');
  });

  router.get('/:type/:id', async (req, res) => {
    if (req.params.id.startsWith('$')) throw notSupported(`Operation ${req.params.id}`);
    const data = await run(req, 'query($type: String!, $id: ID!) { fhirRead(resourceType: $type, id: $id) }', {
      type: segment(req, 'type', TYPE),
      id: segment(req, 'id', ID),
    });
    sendResource(req, res, 200, data.fhirRead);
  });

  router.put('/:type/:id', async (req, res) => {
    const data = await run(
      req,
      'mutation($type: String!, $id: ID!, $resource: JSONObject!, $ifMatch: String, $reason: String) { fhirUpdate(resourceType: $type, id: $id, resource: $resource, ifMatch: $ifMatch, reason: $reason) }',
      {
        type: segment(req, 'type', TYPE),
        id: segment(req, 'id', ID),
        resource: resourceBody(req),
        ifMatch: ifMatch(req),
        reason: changeReason(req),
      },
    );
    sendResource(req, res, 200, data.fhirUpdate);
  });

  // JSON Patch (RFC 6902); FHIRPath Patch (a Parameters resource) is not supported.
  router.patch('/:type/:id', async (req, res) => {
    if (!req.is('application/json-patch+json')) {
      if (req.is(['application/fhir+json', 'application/json'])) throw notSupported('FHIRPath Patch (a Parameters body)');
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'PATCH takes a JSON Patch document (Content-Type: application/json-patch+json)');
    }
    assertR4Body(req);
    const data = await run(
      req,
      'mutation($type: String!, $id: ID!, $patch: JSON!, $ifMatch: String, $reason: String) { fhirPatch(resourceType: $type, id: $id, patch: $patch, ifMatch: $ifMatch, reason: $reason) }',
      { type: segment(req, 'type', TYPE), id: segment(req, 'id', ID), patch: req.body ?? null, ifMatch: ifMatch(req), reason: changeReason(req) },
    );
    sendResource(req, res, 200, data.fhirPatch);
  });

  router.delete('/:type/:id', async (req, res) => {
    await run(
      req,
      'mutation($type: String!, $id: ID!, $ifMatch: String, $reason: String) { fhirDelete(resourceType: $type, id: $id, ifMatch: $ifMatch, reason: $reason) }',
      {
        type: segment(req, 'type', TYPE),
        id: segment(req, 'id', ID),
        ifMatch: ifMatch(req),
        reason: changeReason(req),
      },
    );
    res.status(204).end();
  });

  router.get('/:type/:id/_history', async (req, res) => {
    const data = await run(req, 'query($type: String!, $id: ID!) { fhirHistory(resourceType: $type, id: $id) }', {
      type: segment(req, 'type', TYPE),
      id: segment(req, 'id', ID),
    });
    send(res, 200, absoluteBundle(data.fhirHistory, baseUrl(req)));
  });

  router.get('/:type/:id/_history/:vid', async (req, res) => {
    const data = await run(req, 'query($type: String!, $id: ID!, $vid: String!) { fhirRead(resourceType: $type, id: $id, versionId: $vid) }', {
      type: segment(req, 'type', TYPE),
      id: segment(req, 'id', ID),
      vid: segment(req, 'vid', ID),
    });
    sendResource(req, res, 200, data.fhirRead);
  });

  router.get('/Patient/:id/:operation', async (req, res) => {
    if (req.params.operation !== '$everything') throw notSupported(`Patient/{id}/${req.params.operation}`);
    const data = await run(req, 'query($id: ID!, $params: [FhirSearchParam!]!) { fhirPatientEverything(patientId: $id, params: $params) }', {
      id: segment(req, 'id', ID),
      params: searchParams(req),
    });
    send(res, 200, absoluteBundle(data.fhirPatientEverything, baseUrl(req)));
  });

  // Everything else FHIR defines (batch and other transactions, system search, other operations) is not implemented.
  router.all('/{*rest}', (req) => {
    throw notSupported(`${req.method} ${req.baseUrl}${req.path}`);
  });
  return router;
}

/**
 * `GET /fhir/R4/metadata` without a token (FHIR R4: servers SHALL publish the
 * CapabilityStatement, and clients read it before they authenticate). Mounted
 * before authentication; every other path falls through to fhirRoutes.
 */
export function fhirPublicRoutes(publicBase: PublicBase): Router {
  const router = Router();
  router.get('/metadata', (req, res) => {
    negotiate(req);
    const statement = capabilityStatement();
    send(res, 200, { ...statement, implementation: { ...statement.implementation, url: `${publicBase(req)}${req.baseUrl}` } });
  });
  return router;
}

/** OperationOutcome for every failure under /fhir/R4, auth and body parsing included. */
export function fhirErrorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let error = toAppError(err);
    if (!error) {
      logger.error({ err, requestId: req.requestId, path: req.path }, 'unhandled FHIR error');
      error = new AppError('INTERNAL_ERROR', 'Internal server error');
    }
    if (res.headersSent) return void res.end();
    send(res, error.status, operationOutcome(error));
  };
}
