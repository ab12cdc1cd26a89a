import { type Request, type Response } from 'express';
import { AppError, validationError } from '../../../common/errors';
import { hasBody, ifMatch, pathId } from '../params';

/** What the adapter's HTTP pieces share: the answer of one ehr-subgraph field, and the openEHR headers and bodies around it. */
export const RESULT = 'body uid lastModified deleted itemTags';

export interface OpenEhrResult {
  body?: unknown;
  uid?: string | null;
  lastModified?: string | null;
  deleted?: boolean | null;
  itemTags?: { versionedObject: ItemTag[]; version: ItemTag[] } | null;
}

/** An ITEM_TAG as the openEHR tag headers carry it. */
interface ItemTag {
  key: string;
  value?: string;
  target_path?: string;
}

/** The adapter's one-operation call: `field(arg: $arg, …) { body uid lastModified deleted }`. */
export type Call = (req: Request, field: string, vars: Record<string, unknown>, kind?: 'query' | 'mutation') => Promise<OpenEhrResult>;

export const queryString = (req: Request, name: string) => (typeof req.query[name] === 'string' ? req.query[name] : null);

/** Which version a read names: `…/:versionUid` in the path, else `?version_at_time=` (neither: the latest). */
export const versionSelector = (req: Request) =>
  req.params.versionUid === undefined ? { versionAtTime: queryString(req, 'version_at_time') } : { versionUid: pathId(req, 'versionUid') };

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
export function auditReason(req: Request): string | undefined {
  const fields = headerFields(req, ['openehr-audit-details']);
  const changeReason = req.headers['x-change-reason'];
  const description = fields['description.value'] ?? fields.description ?? (typeof changeReason === 'string' ? changeReason.trim() : undefined);
  const committer = fields['committer.name'];
  const reason = [description, committer ? `(committer: ${committer})` : undefined].filter(Boolean).join(' ');
  return reason ? reason.slice(0, 1000) : undefined;
}

const TAG_HEADERS = { versionedObject: 'openehr-item-tag', version: 'openehr-version-item-tag' } as const;
/** One `name="value"` pair of a tag; the value's quotes and backslashes escaped with a backslash. */
const TAG_PAIR = /^\s*(key|value|target_path)\s*=\s*"((?:[^"\\]|\\.)*)"\s*/;

/**
 * The tags a commit sets (`openehr-item-tag` on the versioned object, `openehr-version-item-tag` on the new
 * version): `key="category",value="final"; key="flag",value="follow-up",target_path="/content[…]"`.
 * The ehr subgraph checks each tag as the tag resources do; a header that is not this syntax is a 400 here.
 */
export function commitItemTags(req: Request): Record<string, ItemTag[]> | null {
  const tags: Record<string, ItemTag[]> = {};
  for (const [target, name] of Object.entries(TAG_HEADERS)) {
    const header = req.headers[name];
    if (typeof header !== 'string') continue;
    const list: ItemTag[] = [];
    let rest = header.trim();
    while (rest) {
      const tag: Record<string, string> = {};
      for (;;) {
        const match = TAG_PAIR.exec(rest);
        if (!match || match[1] in tag)
          throw validationError(`${name}: expected key="…"[,value="…"][,target_path="…"] per tag, tags separated by ";"`, [
            { path: name, message: 'malformed' },
          ]);
        tag[match[1]] = match[2].replace(/\\(.)/g, '$1');
        rest = rest.slice(match[0].length);
        if (!rest.startsWith(',')) break;
        rest = rest.slice(1);
      }
      if (rest && !rest.startsWith(';')) throw validationError(`${name}: tags are separated by ";"`, [{ path: name, message: 'malformed' }]);
      rest = rest.slice(1).trim();
      list.push(tag as unknown as ItemTag);
    }
    tags[target] = list;
  }
  return Object.keys(tags).length ? tags : null;
}

const quoted = (value: string) => `"${value.replace(/["\\]/g, '\\$&')}"`;
const tagHeader = (tags: ItemTag[]) =>
  tags
    .map((t) =>
      [
        `key=${quoted(t.key)}`,
        ...(t.value !== undefined ? [`value=${quoted(t.value)}`] : []),
        ...(t.target_path ? [`target_path=${quoted(t.target_path)}`] : []),
      ].join(','),
    )
    .join('; ');

export function requiredIfMatch(req: Request): string {
  const version = ifMatch(req);
  if (!version) throw validationError('If-Match is required: the version uid this change replaces', [{ path: 'If-Match', message: 'required' }]);
  return version;
}

export function jsonBody(req: Request, optional = false): Record<string, unknown> | undefined {
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
export function preference(req: Request): 'minimal' | 'representation' | 'identifier' {
  const match = /return=(minimal|representation|identifier)/.exec(String(req.headers.prefer ?? ''));
  return (match?.[1] as 'minimal' | 'representation' | 'identifier' | undefined) ?? 'minimal';
}

/**
 * The caller's word on a commit: `openEHR-AUDIT_DETAILS` (committer.name, description.value)
 * and `openEHR-VERSION` (lifecycle_state.code_string), stored in the version's commit_audit.
 */
export function commitAudit(req: Request): Record<string, string> | null {
  const fields = headerFields(req, ['openehr-audit-details', 'openehr-version']);
  const audit: Record<string, string> = {};
  if (fields['committer.name']) audit.committer = fields['committer.name'];
  const description = fields['description.value'] ?? fields.description;
  if (description) audit.description = description;
  const state = fields['lifecycle_state.code_string'];
  if (state) audit.lifecycleState = state;
  return Object.keys(audit).length ? audit : null;
}

export function headers(res: Response, result: OpenEhrResult, location?: string) {
  const base = res.locals.openEhrBase as string;
  if (result.uid) res.setHeader('ETag', `"${result.uid}"`);
  if (location) res.location(`${base}${location}`);
  if (result.lastModified) res.setHeader('Last-Modified', new Date(result.lastModified).toUTCString());
  for (const [target, name] of Object.entries(TAG_HEADERS)) {
    const tags = result.itemTags?.[target as keyof typeof TAG_HEADERS];
    if (tags?.length) res.setHeader(name, tagHeader(tags));
  }
}

/** JSON as `application/json` exactly (openEHR's documented content type; JSON needs no charset parameter). */
export function sendJson(res: Response, status: number, body: unknown) {
  // setHeader, not res.type(): the latter appends `; charset=utf-8`.
  if (!res.get('Content-Type')) res.setHeader('Content-Type', 'application/json');
  res.status(status).send(Buffer.from(JSON.stringify(body)));
}

/** GET: the body (204 for a logically deleted composition); `location` is the resource's path below /openehr/v1. */
export function read(res: Response, result: OpenEhrResult, location?: string) {
  headers(res, result, location);
  if (result.deleted) res.status(204).end();
  else send(res, 200, result.body);
}

/** XML as `application/xml` exactly, the type the openEHR documents name (a string sent by Express would get `; charset=utf-8`). */
export function sendXml(res: Response, status: number, body: string) {
  res.setHeader('Content-Type', 'application/xml');
  res.status(status).send(Buffer.from(body));
}

/** A body as JSON, or as XML when it is a string (a canonical XML composition). */
function send(res: Response, status: number, body: unknown) {
  if (typeof body === 'string') sendXml(res, status, body);
  else sendJson(res, status, body);
}

/** Writes: `Prefer: return=representation` gives the body, `return=identifier` `{uid}`, the default (minimal) none. */
export function written(req: Request, res: Response, status: 200 | 201, result: OpenEhrResult, location: string) {
  headers(res, result, location);
  const prefer = preference(req);
  if (prefer === 'representation' && result.body !== undefined) send(res, status, result.body);
  else if (prefer === 'identifier' && result.uid) sendJson(res, status, { uid: result.uid });
  else res.status(status === 200 ? 204 : 201).end();
}
