import { Router, type Request } from 'express';
import { z } from 'zod';
import { AppError, validationError, zodDetails, type ErrorDetail } from '../../common/errors';
import type { GraphQLRunner } from './execute';
import { onlyQueryParams, pathId, queryInt, queryParam, queryPaging } from './params';

const WEBHOOK_FIELDS = 'id url events status ordering rateLimit createdAt updatedAt disabledAt disabledReason';
const RECOVERY_FIELDS = 'id webhookId since until all status events error createdAt finishedAt';
const DELIVERY_FIELDS =
  'id webhookId eventId eventType status attemptCount nextAttemptAt createdAt updatedAt attempts { attempt at statusCode durationMs success error responseSnippet }';

/** Shapes only (types, required, unknown fields); the service judges the values. */
export const createWebhookSchema = z.strictObject({
  url: z.string(),
  events: z.array(z.string()),
  secret: z.string().optional(),
  ordering: z.string().optional(),
  rateLimit: z.number().optional(),
});
export const updateWebhookSchema = z
  .strictObject({
    url: z.string(),
    events: z.array(z.string()),
    secret: z.string(),
    status: z.string(),
    ordering: z.string(),
    rateLimit: z.number().nullable(),
  })
  .partial();
export const recoverWebhookSchema = z.strictObject({ since: z.string(), until: z.string().optional(), all: z.boolean().optional() });
export const testEventSchema = z.strictObject({ type: z.string() }).partial();

function jsonBody<T>(req: Request, schema: z.ZodType<T>, optional = false): T {
  const length = req.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody && optional) return schema.parse({});
  if (hasBody && !req.is(['application/json', 'application/*+json'])) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw validationError('The request body must be a JSON object');
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw validationError('Invalid request body', zodDetails(parsed.error.issues));
  return parsed.data;
}

/** `/v1/webhooks…` and `/v1/alerts` (docs/api.md §6): each a thin translation to one GraphQL operation. */
export function webhookRoutes(run: GraphQLRunner): Router {
  const router = Router();

  router.get('/webhooks', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `{ webhooks { data { ${WEBHOOK_FIELDS} } } }`);
    res.json(data.webhooks);
  });

  router.post('/webhooks', async (req, res) => {
    onlyQueryParams(req, []);
    const input = jsonBody(req, createWebhookSchema);
    const data = await run(
      req,
      `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id url events status ordering rateLimit createdAt secret } }`,
      {
        input,
      },
    );
    // `secret` only when the server generated it (docs/api.md §6).
    const { secret, ...created } = data.createWebhook;
    res
      .status(201)
      .location(`/v1/webhooks/${created.id}`)
      .json(secret === null ? created : { ...created, secret });
  });

  router.get('/webhooks/:id', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `query($id: ID!) { webhook(id: $id) { ${WEBHOOK_FIELDS} } }`, { id: pathId(req, 'id') });
    res.json(data.webhook);
  });

  router.patch('/webhooks/:id', async (req, res) => {
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const input = jsonBody(req, updateWebhookSchema);
    const data = await run(req, `mutation($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { ${WEBHOOK_FIELDS} } }`, {
      id,
      input,
    });
    res.json(data.updateWebhook);
  });

  router.delete('/webhooks/:id', async (req, res) => {
    onlyQueryParams(req, []);
    await run(req, `mutation($id: ID!) { deleteWebhook(id: $id) }`, { id: pathId(req, 'id') });
    res.status(204).end();
  });

  router.get('/webhooks/:id/deliveries', async (req, res) => {
    onlyQueryParams(req, ['limit', 'offset', 'status']);
    const id = pathId(req, 'id');
    const { limit, offset } = queryPaging(req);
    const data = await run(
      req,
      `query($id: ID!, $status: String, $limit: Int, $offset: Int) { webhookDeliveries(webhookId: $id, status: $status, limit: $limit, offset: $offset) { data { ${DELIVERY_FIELDS} } pagination { limit offset total } } }`,
      { id, status: queryParam(req, 'status'), limit, offset },
    );
    res.json(data.webhookDeliveries);
  });

  router.post('/webhooks/:id/test', async (req, res) => {
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const { type } = jsonBody(req, testEventSchema, true);
    const data = await run(
      req,
      `mutation($id: ID!, $type: String) { sendTestEvent(id: $id, type: $type) { deliveryId eventId eventType success statusCode durationMs error deliveryStatus nextAttemptAt } }`,
      { id, type },
    );
    res.json(data.sendTestEvent);
  });

  router.post('/webhooks/:id/recover', async (req, res) => {
    onlyQueryParams(req, []);
    const id = pathId(req, 'id');
    const input = jsonBody(req, recoverWebhookSchema);
    const data = await run(req, `mutation($id: ID!, $input: RecoverWebhookInput!) { recoverWebhook(id: $id, input: $input) { ${RECOVERY_FIELDS} } }`, {
      id,
      input,
    });
    const recovery = data.recoverWebhook;
    res.status(202).location(`/v1/webhooks/${id}/recoveries/${recovery.id}`).json(recovery);
  });

  router.get('/webhooks/:id/recoveries/:recoveryId', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `query($webhookId: ID!, $id: ID!) { webhookRecovery(webhookId: $webhookId, id: $id) { ${RECOVERY_FIELDS} } }`, {
      webhookId: pathId(req, 'id'),
      id: pathId(req, 'recoveryId'),
    });
    res.json(data.webhookRecovery);
  });

  router.get('/alerts', async (req, res) => {
    onlyQueryParams(req, ['limit']);
    const details: ErrorDetail[] = [];
    const limit = queryInt(req, 'limit', details);
    if (details.length > 0) throw validationError('Invalid query parameters', details);
    const data = await run(req, `query($limit: Int) { alerts(limit: $limit) { data { id type webhookId message url reason createdAt } } }`, { limit });
    res.json(data.alerts);
  });

  return router;
}
