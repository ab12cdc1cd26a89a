import { randomUUID } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import type { Config } from '../../common/config';
import { AppError, notFound, validationError, zodDetails } from '../../common/errors';
import { verifyTwilioSignature } from '../../common/http/twilio-signature';
import { verifyVonageSignature } from '../../common/http/vonage-signature';
import { ALL_TENANTS, SYSTEM_SUBJECTS } from '../../common/auth/system-identities';
import type { GraphQLRunner } from './execute';
import { parsedBodyGuard, verifyUtf8 } from '../security/text';
import type { PublicBase } from '../public-url';
import { hasBody, onlyQueryParams, pathId, queryParam, queryPaging } from './params';

const MESSAGE_FIELDS =
  'id patientId templateId templateVersion language channel variables subject body status error provider appointmentId dueAt sendAt createdAt updatedAt';
const TEMPLATE_FIELDS = 'id version name channel language subject body variables { name type required }';
const PREFERENCE_FIELDS = 'channels { sms email } language quietHours { start end timezone }';
const REPLY_FIELDS = 'id messageId patientId keyword action receivedAt';

const id = z.string().min(1).max(128);
// Request shapes, exported for the OpenAPI document (gateway/openapi).
export const sendSchema = z.strictObject({
  patientId: id,
  templateId: id,
  channel: z.enum(['sms', 'email']),
  variables: z.record(z.string().max(64), z.string().max(1000)).optional(),
  // Judged by the service (ISO 8601 with an offset, 1 minute to 35 days ahead), which names `sendAt` when it refuses it.
  sendAt: z.string().max(64).optional(),
});
export const batchSchema = z.strictObject({ messages: z.array(z.unknown()).min(1).max(1000) });
export const preferencesSchema = z.strictObject({
  channels: z.strictObject({ sms: z.boolean().optional(), email: z.boolean().optional() }).optional(),
  language: z.string().max(16).optional(),
  quietHours: z
    .strictObject({ start: z.string().max(5), end: z.string().max(5), timezone: z.string().max(64) })
    .nullable()
    .optional(),
});
export const remindSchema = z.strictObject({ templateId: id.optional(), channel: z.enum(['sms', 'email']).optional() });
export const replySchema = z.strictObject({ messageId: id, body: z.string().min(1).max(1600) });
// Twilio posts many more fields (AccountSid, To, NumMedia, …): only these matter.
export const inboundSchema = z.object({ From: z.string().min(1).max(32), Body: z.string().max(1600), MessageSid: z.string().max(64).optional() });
export const twilioStatusSchema = z.object({
  MessageSid: z.string().min(1).max(64),
  MessageStatus: z.string().min(1).max(32),
  ErrorCode: z.string().max(16).optional(),
});
// A Vonage delivery receipt: these fields matter, the signature covers all of them.
export const vonageReceiptSchema = z.object({
  messageId: z.string().min(1).max(64),
  status: z.string().min(1).max(32),
  'err-code': z.string().max(16).optional(),
});

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (!result.success) throw validationError('The request body is invalid', zodDetails(result.error.issues));
  return result.data;
}

/** Idempotency-Key: 1-255 visible ASCII characters. */
function idempotencyKey(req: Request): string | undefined {
  const value = req.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[\x21-\x7E]{1,255}$/.test(value)) {
    throw validationError('Idempotency-Key must be 1-255 visible ASCII characters', [{ path: 'Idempotency-Key', message: 'invalid header' }]);
  }
  return value;
}

/**
 * The key a send runs with: the client's Idempotency-Key, or else one chosen here, so
 * that a send whose outcome the deadline leaves unknown can be retried safely with it
 * (the 503 names it; docs/security.md, "Request deadlines").
 */
function sendKey(req: Request): string {
  req.idempotencyKey = idempotencyKey(req) ?? randomUUID();
  return req.idempotencyKey;
}

/** JSON paths refuse other bodies with 415 (express.json leaves them unparsed). */
function requireJson(req: Request, _res: Response, next: NextFunction) {
  if (req.method !== 'GET' && req.method !== 'HEAD' && hasBody(req) && !req.is(['application/json', 'application/*+json'])) {
    next(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json'));
    return;
  }
  next();
}

/** A flat REST message: `error` only when failed, `sendAt` only when scheduled for a time, `provider` once one took it (docs/messaging.md). */
function messageBody(message: Record<string, unknown>) {
  const { error, sendAt, provider, ...rest } = message;
  return { ...rest, ...(sendAt ? { sendAt } : {}), ...(error ? { error } : {}), ...(provider ? { provider } : {}) };
}

/** `/v1/…`: the messaging spec's REST paths, each a thin translation to one GraphQL operation. */
export function messagingRoutes(run: GraphQLRunner): Router {
  const router = Router();
  const form = [express.urlencoded({ extended: false, limit: '1mb', verify: verifyUtf8 }), parsedBodyGuard];

  // Inbound SMS takes Twilio's form posts as well as JSON; everything else is JSON only.
  router.post('/inbound/sms', ...form, async (req, res) => {
    if (hasBody(req) && !req.is(['application/json', 'application/x-www-form-urlencoded'])) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/x-www-form-urlencoded or application/json');
    }
    const input = parse(inboundSchema, req.body);
    const data = await run(
      req,
      `mutation($from: String!, $body: String!, $sid: String) { receiveSms(from: $from, body: $body, providerMessageId: $sid) { ${REPLY_FIELDS} } }`,
      {
        from: input.From,
        body: input.Body,
        sid: input.MessageSid ?? null,
      },
    );
    res.status(201).json(data.receiveSms);
  });

  router.use(requireJson);

  router.post('/messages', async (req, res) => {
    onlyQueryParams(req, []);
    const input = parse(sendSchema, req.body);
    const data = await run(
      req,
      `mutation($input: SendMessageInput!, $key: String) { sendMessage(input: $input, idempotencyKey: $key) { ${MESSAGE_FIELDS} } }`,
      {
        input,
        key: sendKey(req),
      },
    );
    res.status(201).json(messageBody(data.sendMessage));
  });

  router.post('/messages/batch', async (req, res) => {
    onlyQueryParams(req, []);
    const { messages } = parse(batchSchema, req.body);
    const key = sendKey(req);
    // Items are checked one by one: a malformed item is refused on its own and the others still go.
    const results: unknown[] = new Array(messages.length);
    const valid: { index: number; input: z.infer<typeof sendSchema> }[] = [];
    messages.forEach((item, index) => {
      const parsed = sendSchema.safeParse(item);
      if (parsed.success) valid.push({ index, input: parsed.data });
      else {
        const details = zodDetails(parsed.error.issues);
        results[index] = {
          index,
          error: { code: 'VALIDATION_ERROR', message: `Invalid message: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}` },
        };
      }
    });
    if (valid.length > 0) {
      const data = await run(
        req,
        `mutation($messages: [SendMessageInput!]!, $itemKeys: [String!]) { sendMessages(messages: $messages, itemKeys: $itemKeys) { results { index id status createdAt error { code message } } } }`,
        // Per-item idempotency keys follow the item's position in the request, not in the forwarded list:
        // a retry of the batch with its malformed items corrected finds the items already queued.
        { messages: valid.map((v) => v.input), itemKeys: valid.map((v) => `${key}#${v.index}`) },
      );
      data.sendMessages.results.forEach((result: any, n: number) => {
        const index = valid[n].index;
        results[index] = result.error ? { index, error: result.error } : { index, id: result.id, status: result.status, createdAt: result.createdAt };
      });
    }
    const accepted = results.filter((r: any) => r.id).length;
    res.status(200).json({ results, accepted, rejected: results.length - accepted });
  });

  router.post('/messages/:id/cancel', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `mutation($id: ID!) { cancelMessage(id: $id) { ${MESSAGE_FIELDS} } }`, { id: pathId(req, 'id') });
    res.json(messageBody(data.cancelMessage));
  });

  router.get('/messages/:id', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `query($id: ID!) { message(id: $id) { ${MESSAGE_FIELDS} statusHistory { status at error } } }`, { id: pathId(req, 'id') });
    res.json(messageBody(data.message));
  });

  router.get('/messages', async (req, res) => {
    onlyQueryParams(req, ['patientId', 'status', 'limit', 'offset']);
    const { limit, offset } = queryPaging(req);
    const data = await run(
      req,
      `query($patientId: ID, $status: String, $limit: Int, $offset: Int) { messages(patientId: $patientId, status: $status, limit: $limit, offset: $offset) { data { ${MESSAGE_FIELDS} } pagination { limit offset total } } }`,
      { patientId: queryParam(req, 'patientId'), status: queryParam(req, 'status'), limit, offset },
    );
    res.json({ data: data.messages.data.map(messageBody), pagination: data.messages.pagination });
  });

  router.get('/patients/:id', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(
      req,
      `query($id: ID!) { patient(id: $id) { id ehrId name { given family } birthDate gender contact { phone email } preferences { ${PREFERENCE_FIELDS} } } }`,
      { id: pathId(req, 'id') },
    );
    if (!data.patient) throw notFound('Patient', req.params.id);
    res.json(data.patient);
  });

  router.patch('/patients/:id/preferences', async (req, res) => {
    onlyQueryParams(req, []);
    const patientId = pathId(req, 'id');
    if (req.body === undefined) throw validationError('A JSON body with the fields to change is required');
    const input = parse(preferencesSchema, req.body);
    const data = await run(req, `mutation($id: ID!, $input: PreferencesInput!) { updatePreferences(patientId: $id, input: $input) { ${PREFERENCE_FIELDS} } }`, {
      id: patientId,
      input,
    });
    res.json(data.updatePreferences);
  });

  router.get('/templates', async (req, res) => {
    onlyQueryParams(req, []);
    const data = await run(req, `{ templates { data { ${TEMPLATE_FIELDS} } } }`);
    res.json(data.templates);
  });

  router.get('/templates/:id', async (req, res) => {
    onlyQueryParams(req, ['language']);
    const data = await run(req, `query($id: ID!, $language: String) { template(id: $id, language: $language) { ${TEMPLATE_FIELDS} } }`, {
      id: pathId(req, 'id'),
      language: queryParam(req, 'language') ?? null,
    });
    res.json(data.template);
  });

  router.get('/appointments', async (req, res) => {
    onlyQueryParams(req, ['from', 'to']);
    const data = await run(
      req,
      `query($from: String, $to: String) { appointments(from: $from, to: $to) { data { id patientId start end status location } } }`,
      { from: queryParam(req, 'from'), to: queryParam(req, 'to') },
    );
    res.json(data.appointments);
  });

  router.post('/appointments/:id/remind', async (req, res) => {
    onlyQueryParams(req, []);
    const appointmentId = pathId(req, 'id');
    const input = parse(remindSchema, req.body);
    const data = await run(
      req,
      `mutation($id: ID!, $templateId: String, $channel: String, $key: String) { remindAppointment(appointmentId: $id, templateId: $templateId, channel: $channel, idempotencyKey: $key) { ${MESSAGE_FIELDS} } }`,
      { id: appointmentId, templateId: input.templateId ?? null, channel: input.channel ?? null, key: sendKey(req) },
    );
    res.status(201).json(messageBody(data.remindAppointment));
  });

  router.post('/simulator/replies', async (req, res) => {
    onlyQueryParams(req, []);
    const input = parse(replySchema, req.body);
    const data = await run(req, `mutation($id: ID!, $body: String!) { simulateReply(messageId: $id, body: $body) { ${REPLY_FIELDS} } }`, {
      id: input.messageId,
      body: input.body,
    });
    res.status(201).json(data.simulateReply);
  });

  return router;
}

const TWIML_EMPTY = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

/** Twilio's delivery-status callback and Vonage's delivery receipts, below the gateway's /v1 mount. */
export const TWILIO_STATUS_ROUTE = '/providers/twilio/status';
export const VONAGE_STATUS_ROUTE = '/providers/vonage/status';
/** Gateway paths that take the providers' form posts. */
export const SMS_PROVIDER_PATHS = ['/v1/inbound/sms', `/v1${TWILIO_STATUS_ROUTE}`, `/v1${VONAGE_STATUS_ROUTE}`];

/** The delivery-report URLs given to the providers with each message: this gateway's public routes (none without PUBLIC_URL). */
export function providerCallbackUrls(config: Pick<Config, 'PUBLIC_URL'>): { twilioStatusUrl?: string; vonageStatusUrl?: string } {
  if (!config.PUBLIC_URL) return {};
  const base = `${config.PUBLIC_URL.replace(/\/$/, '')}/v1`;
  return { twilioStatusUrl: `${base}${TWILIO_STATUS_ROUTE}`, vonageStatusUrl: `${base}${VONAGE_STATUS_ROUTE}` };
}

/** The provider's reserved identity: no role, it reaches only what it is granted (messaging finds the tenant from the message). */
const asSmsProvider = (req: Request) => {
  req.principal = { sub: SYSTEM_SUBJECTS.smsProvider, tenants: [ALL_TENANTS], roles: [] };
};

/**
 * The SMS providers' webhooks, authenticated by each provider's request signature instead of a bearer token:
 * Twilio's (inbound SMS, status callbacks) when SMS_PROVIDER names twilio, Vonage's delivery receipts when it
 * names vonage. Mounted before the bearer-token routes; without those providers they pass through.
 */
export function smsProviderRoutes(run: GraphQLRunner, config: Config, publicBase: PublicBase): Router {
  const router = Router();
  const form = [express.urlencoded({ extended: false, limit: '1mb', verify: verifyUtf8 }), parsedBodyGuard];
  const recordStatus = (req: Request, provider: string, sid: string, status: string, code: string | undefined) =>
    run(
      req,
      `mutation($provider: String, $sid: String!, $status: String!, $code: String) { recordDeliveryStatus(provider: $provider, providerMessageId: $sid, status: $status, errorCode: $code) }`,
      { provider, sid, status, code: code ?? null },
    );
  if (config.SMS_PROVIDER.includes('vonage')) {
    const body = [express.json({ limit: '1mb', verify: verifyUtf8 }), ...form];
    router.post(VONAGE_STATUS_ROUTE, ...body, async (req, res) => {
      if (!req.is(['application/json', 'application/x-www-form-urlencoded'])) {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Vonage delivery receipts are JSON or application/x-www-form-urlencoded');
      }
      const params = Object.fromEntries(Object.entries((req.body ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
      if (!verifyVonageSignature(config.VONAGE_SIGNATURE_SECRET!, params, config.VONAGE_SIGNATURE_METHOD, new Date())) {
        throw new AppError('FORBIDDEN', 'Invalid or expired Vonage signature (sig, timestamp)');
      }
      asSmsProvider(req);
      const input = parse(vonageReceiptSchema, params);
      await recordStatus(req, 'vonage', input.messageId, input.status, input['err-code']);
      res.status(204).end();
    });
  }
  if (!config.SMS_PROVIDER.includes('twilio')) return router;

  const verify = (req: Request, _res: Response, next: NextFunction) => {
    if (!req.is('application/x-www-form-urlencoded')) {
      next(new AppError('UNSUPPORTED_MEDIA_TYPE', 'Twilio webhooks are application/x-www-form-urlencoded'));
      return;
    }
    // Twilio signs the URL it called: the public one (PUBLIC_URL or a trusted proxy's), never a client-chosen Host.
    const base = publicBase(req);
    const params = Object.fromEntries(Object.entries((req.body ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
    if (!verifyTwilioSignature(config.TWILIO_AUTH_TOKEN!, `${base}${req.originalUrl}`, params, req.header('x-twilio-signature'))) {
      next(new AppError('FORBIDDEN', 'Invalid X-Twilio-Signature'));
      return;
    }
    asSmsProvider(req);
    next();
  };

  router.post('/inbound/sms', ...form, verify, async (req, res) => {
    const input = parse(inboundSchema, req.body);
    try {
      await run(req, `mutation($from: String!, $body: String!, $sid: String) { receiveSms(from: $from, body: $body, providerMessageId: $sid) { id } }`, {
        from: input.From,
        body: input.Body,
        sid: input.MessageSid ?? null,
      });
    } catch (err) {
      // A text from a number we never wrote to is not Twilio's problem: acknowledge it so it is not retried.
      if (!(err instanceof AppError && err.code === 'NOT_FOUND')) throw err;
    }
    res.type('text/xml').send(TWIML_EMPTY);
  });

  router.post(TWILIO_STATUS_ROUTE, ...form, verify, async (req, res) => {
    const input = parse(twilioStatusSchema, req.body);
    await recordStatus(req, 'twilio', input.MessageSid, input.MessageStatus, input.ErrorCode);
    res.status(204).end();
  });

  return router;
}
