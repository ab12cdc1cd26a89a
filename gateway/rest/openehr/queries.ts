import express, { type Request, type Response, type Router } from 'express';
import { AppError, validationError } from '../../../common/errors';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../../common/json-depth';
import type { GraphQLRunner } from '../execute';
import { hasBody } from '../params';
import { BODY_LIMIT_BYTES } from '../../security/body';
import { verifyUtf8 } from '../../security/text';
import { auditReason, jsonBody, read, sendJson, type Call } from './http';

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

const plainText = express.text({ type: 'text/plain', limit: BODY_LIMIT_BYTES, verify: verifyUtf8 });
const RUN_STORED =
  'query($name: String!, $version: String, $parameters: JSONObject, $offset: Int, $fetch: Int, $ehrId: String) { openehrRunStoredQuery(name: $name, version: $version, parameters: $parameters, offset: $offset, fetch: $fetch, ehrId: $ehrId) }';

/** `openehr-ehr-id` header or `ehr_id` parameter: the EHR a query runs in. */
function queryEhrId(req: Request, search: URLSearchParams): string | null {
  const header = req.headers['openehr-ehr-id'];
  const value = typeof header === 'string' && header.trim() ? header.trim() : search.get('ehr_id');
  return value || null;
}

/** QUERY and stored queries: `/query/aql`, `/definition/query/…`, `/query/{qualified_query_name}`. */
export function queryRoutes(router: Router, run: GraphQLRunner, call: Call) {
  // AQL (ad hoc)
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

  // Stored queries
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
