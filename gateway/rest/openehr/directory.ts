import type { Request, Response, Router } from 'express';
import { pathId } from '../params';
import {
  auditReason,
  commitAudit,
  headers,
  jsonBody,
  queryString,
  read,
  requiredIfMatch,
  versionSelector,
  written,
  type Call,
  type OpenEhrResult,
} from './http';

export const DIRECTORY_FIELDS: Record<string, Record<string, string>> = {
  openehrDirectory: { ehrId: 'ID!', versionUid: 'String', versionAtTime: 'String', path: 'String' },
  openehrCreateDirectory: { ehrId: 'ID!', folder: 'JSONObject!', reason: 'String', audit: 'JSONObject' },
  openehrUpdateDirectory: { ehrId: 'ID!', ifMatch: 'String!', folder: 'JSONObject!', reason: 'String', audit: 'JSONObject' },
  openehrDeleteDirectory: { ehrId: 'ID!', ifMatch: 'String!', reason: 'String', audit: 'JSONObject' },
};

/** The directory version's place below /openehr/v1. */
const directoryAt = (ehrId: string, r: OpenEhrResult) => `/ehr/${ehrId}/directory/${r.uid}`;

/** DIRECTORY: the EHR's versioned FOLDER tree (create, update and delete with If-Match, read by version, at a time, at a path). */
export function directoryRoutes(router: Router, call: Call) {
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
  const readDirectory = async (req: Request, res: Response) => {
    const ehrId = pathId(req, 'ehrId');
    const result = await call(req, 'openehrDirectory', { ehrId, ...versionSelector(req), path: queryString(req, 'path') });
    read(res, result, directoryAt(ehrId, result));
  };
  router.get('/ehr/:ehrId/directory', readDirectory);
  router.get('/ehr/:ehrId/directory/:versionUid', readDirectory);
}
