import type { Request, Router } from 'express';
import { AppError, validationError } from '../../../common/errors';
import { hasBody, pathId } from '../params';
import { auditReason, preference, queryString, read, sendJson, type Call } from './http';

export const ITEM_TAG_FIELDS: Record<string, Record<string, string>> = {
  openehrItemTags: { ehrId: 'ID!', targetType: 'String!', uid: 'String!' },
  openehrEhrTags: { ehrId: 'ID!', key: 'String', value: 'String', targetPath: 'String' },
  openehrSetItemTags: { ehrId: 'ID!', targetType: 'String!', uid: 'String!', tags: 'JSON!', reason: 'String' },
  openehrDeleteItemTags: { ehrId: 'ID!', targetType: 'String!', uid: 'String!', key: 'String!', reason: 'String' },
};

/** The path segment of each taggable resource and the RM type it names. */
const TARGETS = [
  ['composition', 'COMPOSITION'],
  ['ehr_status', 'EHR_STATUS'],
] as const;

/** A filter given at most once: `?tag_key=a&tag_key=b` is refused rather than half-read. */
function filterParam(req: Request, name: string): string | null {
  if (Array.isArray(req.query[name])) throw validationError(`${name} may be given once`, [{ path: name, message: 'repeated' }]);
  return queryString(req, name);
}

/** The PUT body: a JSON array of UPDATE_ITEM_TAG (the ehr subgraph checks each tag). */
function tagList(req: Request): unknown {
  if (!hasBody(req)) throw validationError('The body must be a JSON array of tags {key, value, target_path}', [{ path: 'tags', message: 'required' }]);
  if (!req.is(['application/json', 'application/*+json'])) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the tags as application/json');
  return req.body;
}

/**
 * ITEM_TAG: `GET /ehr/{ehr_id}/tags` (filtered by tag_key, tag_value,
 * tag_target_path), and GET / PUT (replace the list) / DELETE (by key) of the
 * tags of a composition or EHR_STATUS, named by versioned object uid or
 * version uid.
 */
export function itemTagRoutes(router: Router, call: Call) {
  router.get('/ehr/:ehrId/tags', async (req, res) => {
    const vars = {
      ehrId: pathId(req, 'ehrId'),
      key: filterParam(req, 'tag_key'),
      value: filterParam(req, 'tag_value'),
      targetPath: filterParam(req, 'tag_target_path'),
    };
    read(res, await call(req, 'openehrEhrTags', vars));
  });
  for (const [segment, targetType] of TARGETS) {
    const target = (req: Request) => ({ ehrId: pathId(req, 'ehrId'), targetType, uid: pathId(req, 'uid') });
    router.get(`/ehr/:ehrId/${segment}/:uid/tags`, async (req, res) => read(res, await call(req, 'openehrItemTags', target(req))));
    router.put(`/ehr/:ehrId/${segment}/:uid/tags`, async (req, res) => {
      const result = await call(req, 'openehrSetItemTags', { ...target(req), tags: tagList(req), reason: auditReason(req) ?? null }, 'mutation');
      // 200 with the tags as stored for return=representation, else 204.
      if (preference(req) === 'representation') sendJson(res, 200, result.body);
      else res.status(204).end();
    });
    router.delete(`/ehr/:ehrId/${segment}/:uid/tags/:key`, async (req, res) => {
      // A key is any printable text (the ehr subgraph checks it), so it is not held to the path-id pattern.
      await call(req, 'openehrDeleteItemTags', { ...target(req), key: String(req.params.key), reason: auditReason(req) ?? null }, 'mutation');
      res.status(204).end();
    });
  }
}
