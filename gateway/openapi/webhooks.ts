import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../common/events/types';
import { createWebhookSchema, recoverWebhookSchema, testEventSchema, updateWebhookSchema } from '../rest/webhooks';
import { authenticated, dateTime, json, jsonBody, pagination, pagingQuery, pathId } from './common';

/** `/v1/webhooks…`, `/v1/alerts` and the deliveries CareGraph sends to subscribers (docs/api.md §6). */

const eventType = z.enum(WEBHOOK_EVENT_TYPES);
const webhookFields = {
  id: z.string(),
  url: z.string(),
  events: z.array(eventType),
  status: z.enum(['active', 'disabled']),
  ordering: z.enum(['parallel', 'fifo']).meta({ description: '`fifo`: one delivery at a time, in event order; a retried event holds back the later ones.' }),
  rateLimit: z.int().nullable().meta({ description: 'At most this many deliveries a second to the endpoint; null: no limit.' }),
  createdAt: dateTime,
};
const createdWebhook = z
  .strictObject({
    ...webhookFields,
    secret: z
      .string()
      .optional()
      .meta({ description: 'Only when the request gave no secret: the one the server generated (`whsec_` + base64 of 32 random bytes). Returned this once.' }),
  })
  .meta({ id: 'WebhookCreated' });
const webhook = z
  .strictObject({ ...webhookFields, updatedAt: dateTime, disabledAt: dateTime.nullable(), disabledReason: z.string().nullable() })
  .meta({ id: 'Webhook', description: 'A subscription; the secret is never returned.' });
const attempt = z.strictObject({
  attempt: z.int().meta({ description: '1 = first attempt, 2.. = retries.' }),
  at: dateTime,
  statusCode: z.int().nullable(),
  durationMs: z.int(),
  success: z.boolean(),
  error: z.string().nullable(),
  responseSnippet: z.string().nullable(),
});
const delivery = z
  .strictObject({
    id: z.string(),
    webhookId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed', 'cancelled']),
    attemptCount: z.int(),
    nextAttemptAt: dateTime.nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
    attempts: z.array(attempt),
  })
  .meta({ id: 'WebhookDelivery' });
const testResult = z
  .strictObject({
    deliveryId: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    success: z.boolean(),
    statusCode: z.int().nullable(),
    durationMs: z.int(),
    error: z.string().nullable(),
    deliveryStatus: z.string(),
    nextAttemptAt: dateTime.nullable(),
  })
  .meta({ id: 'WebhookTestResult' });
const recovery = z
  .strictObject({
    id: z.string(),
    webhookId: z.string(),
    since: dateTime,
    until: dateTime,
    all: z.boolean(),
    status: z.enum(['running', 'done', 'failed']),
    events: z.int().meta({ description: 'Events re-sent so far.' }),
    error: z.string().nullable(),
    createdAt: dateTime,
    finishedAt: dateTime.nullable(),
  })
  .meta({ id: 'WebhookRecovery' });
const alert = z
  .strictObject({
    id: z.string(),
    type: z.literal('webhook.disabled'),
    webhookId: z.string().nullable(),
    message: z.string(),
    url: z.string().nullable(),
    reason: z.string().nullable(),
    createdAt: dateTime,
  })
  .meta({ id: 'Alert' });

/** What each event type's `data` carries, with an example: the `webhooks` section has one entry per type. */
const messageData = { messageId: z.string(), patientId: z.string(), channel: z.enum(['sms', 'email']) };
const appointmentData = {
  appointmentId: z.string(),
  patientId: z.string(),
  status: z.string(),
  start: dateTime.meta({ description: 'When the appointment starts.' }),
};
const MESSAGE_EXAMPLE = { messageId: '0b9d7a52-3c4e-4f0a-9a31-6d1f2c8e5b10', patientId: 'p-1001', channel: 'sms' };
const APPOINTMENT_EXAMPLE = { appointmentId: 'appt-1001', patientId: 'p-1001', start: '2026-11-24T09:30:00.000Z' };
const withEnd = { end: dateTime.meta({ description: 'When it ends.' }) };
const EVENT_CATALOGUE: Record<WebhookEventType, { summary: string; data: z.ZodType; example: Record<string, unknown> }> = {
  'message.sent': {
    summary: 'The provider accepted a message',
    data: z.strictObject({ ...messageData, status: z.literal('sent') }),
    example: { ...MESSAGE_EXAMPLE, status: 'sent' },
  },
  'message.delivered': {
    summary: "The provider reported a message delivered to the patient's phone or mailbox",
    data: z.strictObject({ ...messageData, status: z.literal('delivered') }),
    example: { ...MESSAGE_EXAMPLE, status: 'delivered' },
  },
  'message.failed': {
    summary: 'A message could not be sent or delivered; no further attempt is made',
    data: z.strictObject({ ...messageData, status: z.literal('failed'), error: z.string().optional().meta({ description: "The provider's reason." }) }),
    example: { ...MESSAGE_EXAMPLE, status: 'failed', error: 'unreachable number' },
  },
  'message.response': {
    summary: 'The patient replied to a message',
    data: z.strictObject({ ...messageData, body: z.string().meta({ description: 'The reply as received.' }), receivedAt: dateTime }),
    example: { ...MESSAGE_EXAMPLE, body: 'JA', receivedAt: '2026-11-23T09:04:12.000Z' },
  },
  'message.cancelled': {
    summary: 'A scheduled or queued message was cancelled before it was sent; it never reaches a provider',
    data: z.strictObject({ ...messageData, status: z.literal('cancelled') }),
    example: { ...MESSAGE_EXAMPLE, status: 'cancelled' },
  },
  'appointment.booked': {
    summary: 'An appointment was booked (its reminder is scheduled)',
    data: z.strictObject({ ...appointmentData, ...withEnd }),
    example: { ...APPOINTMENT_EXAMPLE, status: 'booked', end: '2026-11-24T10:00:00.000Z' },
  },
  'appointment.rescheduled': {
    summary: 'An appointment moved to another time (its reminder moves with it)',
    data: z.strictObject({ ...appointmentData, ...withEnd, previousStart: dateTime.meta({ description: 'The start before the move.' }) }),
    example: { ...APPOINTMENT_EXAMPLE, status: 'booked', end: '2026-11-24T10:00:00.000Z', previousStart: '2026-11-23T14:00:00.000Z' },
  },
  'appointment.confirmed': {
    summary: 'The patient confirmed an appointment (a reply keyword, or a clinician on their behalf)',
    data: z.strictObject({ ...appointmentData, end: withEnd.end.optional() }),
    example: { ...APPOINTMENT_EXAMPLE, status: 'confirmed' },
  },
  'appointment.cancelled': {
    summary: 'An appointment was cancelled (by a reply keyword, a clinician or an integration)',
    data: z.strictObject({ ...appointmentData, end: withEnd.end.optional() }),
    example: { ...APPOINTMENT_EXAMPLE, status: 'cancelled' },
  },
};

const EXAMPLE_WEBHOOK = {
  id: '7f3e2a10-5b6c-4d8e-9f01-23456789abcd',
  url: 'https://hooks.example.org/caregraph',
  events: ['message.delivered', 'message.failed'],
  status: 'active',
  ordering: 'parallel',
  rateLimit: null,
  createdAt: '2026-11-23T09:00:00.000Z',
};

export function registerWebhooks(registry: OpenAPIRegistry): void {
  const tags = ['Webhooks'];
  const id = z.object({ id: pathId('id', EXAMPLE_WEBHOOK.id) });
  registry.registerPath(
    authenticated({
      method: 'post',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      summary: 'Subscribe a URL to events',
      description:
        '`url` is `https://` and must not resolve to a non-global address (unless `WEBHOOK_ALLOW_INSECURE=true`); `secret` has at least 16 characters (a `whsec_` secret: the base64 of at least 16 bytes after the prefix). Without `secret` the server generates one and returns it, this once, in the answer.',
      tags,
      request: { body: jsonBody(createWebhookSchema, { url: EXAMPLE_WEBHOOK.url, events: EXAMPLE_WEBHOOK.events, secret: 'a-long-shared-secret-0123' }) },
      responses: {
        201: json('The subscription.', createdWebhook, EXAMPLE_WEBHOOK, { Location: { description: 'The new subscription.', schema: { type: 'string' } } }),
      },
      extraErrors: [413, 415],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      summary: 'Webhook subscriptions',
      tags,
      responses: { 200: json('All subscriptions of the tenant.', z.strictObject({ data: z.array(webhook) })) },
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/v1/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'One subscription',
      tags,
      request: { params: id },
      responses: { 200: json('The subscription.', webhook) },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'patch',
      path: '/v1/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Change a subscription, rotate its secret, or enable it again',
      description: 'A new `secret` signs at once; the previous one keeps signing beside it (a second `webhook-signature` entry) for `WEBHOOK_SECRET_OVERLAP`.',
      tags,
      request: { params: id, body: jsonBody(updateWebhookSchema, { status: 'active' }) },
      responses: { 200: json('The subscription after the change.', webhook) },
      extraErrors: [404, 413, 415],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'delete',
      path: '/v1/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Remove a subscription',
      tags,
      request: { params: id },
      responses: { 204: { description: 'Removed.' } },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/v1/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'Deliveries of a subscription with their attempts',
      tags,
      request: { params: id, query: z.object({ status: z.enum(['pending', 'succeeded', 'failed', 'cancelled']).optional(), ...pagingQuery }) },
      responses: { 200: json('A page of deliveries.', z.strictObject({ data: z.array(delivery), pagination })) },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: '/v1/webhooks/{id}/test',
      operationId: 'sendWebhookTestEvent',
      summary: 'Send a test event now',
      tags,
      request: { params: id, body: { ...jsonBody(testEventSchema, { type: 'message.delivered' }), required: false } },
      responses: { 200: json('The first attempt of the test delivery.', testResult) },
      extraErrors: [404, 413, 415],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: '/v1/webhooks/{id}/recover',
      operationId: 'recoverWebhook',
      summary: 'Re-send what the subscription missed in a window',
      description:
        "Re-sends, with their original event ids, every event of the subscription's types created in [`since`, `until`] (default now) whose delivery never succeeded, those raised while it was disabled included; `all: true` re-sends every event of the window. Worked as a job: follow `Location`. `since` must lie within `WEBHOOK_RETENTION_DAYS`.",
      tags,
      request: { params: id, body: jsonBody(recoverWebhookSchema, { since: '2026-11-23T08:00:00Z' }) },
      responses: {
        202: json('The recovery, running.', recovery, undefined, { Location: { description: 'The recovery, to follow.', schema: { type: 'string' } } }),
      },
      extraErrors: [404, 409, 413, 415],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/v1/webhooks/{id}/recoveries/{recoveryId}',
      operationId: 'getWebhookRecovery',
      summary: 'A recovery and its progress',
      tags,
      request: { params: z.object({ id: pathId('id', EXAMPLE_WEBHOOK.id), recoveryId: pathId('recoveryId', 'rcv_0f1e2d3c4b5a69788796a5b4c3d2e1f0') }) },
      responses: { 200: json('The recovery: `running`, then `done` with `events` re-sent.', recovery) },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: '/v1/alerts',
      operationId: 'listAlerts',
      summary: 'Alerts (webhooks disabled after failing)',
      tags,
      request: { query: z.object({ limit: pagingQuery.limit }) },
      responses: { 200: json('The latest alerts.', z.strictObject({ data: z.array(alert) })) },
    }),
  );

  const signed = (name: string, description: string) => ({ [name]: z.string().meta({ description }) });
  const headers = z.object({
    ...signed('X-Webhook-Id', 'The event id.'),
    ...signed('X-Webhook-Event', 'The event type.'),
    ...signed('X-Webhook-Timestamp', 'Unix seconds.'),
    ...signed('X-Webhook-Signature', "Lower-case hex HMAC-SHA256 of the exact body bytes, keyed with the current secret's UTF-8 bytes."),
    ...signed('webhook-id', 'Standard Webhooks: the event id (the same as `X-Webhook-Id`).'),
    ...signed('webhook-timestamp', 'Standard Webhooks: unix seconds of this attempt (the same as `X-Webhook-Timestamp`).'),
    ...signed(
      'webhook-signature',
      'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, one per secret in force, the current first. The key is the base64 decoding of what follows `whsec_`, else the secret\'s UTF-8 bytes.',
    ),
  });
  for (const [type, entry] of Object.entries(EVENT_CATALOGUE) as [WebhookEventType, (typeof EVENT_CATALOGUE)[WebhookEventType]][]) {
    const body = z
      .strictObject({
        id: z.string().meta({ description: 'The event id; also `webhook-id`. Receivers deduplicate by it.' }),
        type: z.literal(type),
        timestamp: dateTime,
        data: entry.data,
      })
      .meta({ id: `WebhookEvent_${type.replace('.', '_')}` });
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `webhook_${type.replace('.', '_')}`,
      summary: entry.summary,
      description:
        'POSTed to every active subscription to this type: at least once, durable, retried on the `WEBHOOK_RETRY_SCHEDULE`; only a 2xx within `WEBHOOK_TIMEOUT_MS` succeeds (docs/webhooks.md).',
      tags,
      security: [],
      request: {
        headers,
        body: jsonBody(body, { id: 'evt_c1d2e3f4-0000-4000-8000-000000000001', type, timestamp: '2026-11-23T09:00:01.000Z', data: entry.example }),
      },
      responses: {
        200: { description: 'Any 2xx acknowledges the delivery.' },
        410: { description: 'Gone: disables the subscription at once.' },
        429: { description: 'With Retry-After: the next attempt waits at least that long.' },
        503: { description: 'With Retry-After: the next attempt waits at least that long.' },
      },
    });
  }
}
