import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  batchSchema,
  inboundSchema,
  preferencesSchema,
  remindSchema,
  replySchema,
  sendSchema,
  TWILIO_STATUS_ROUTE,
  twilioStatusSchema,
  VONAGE_STATUS_ROUTE,
  vonageReceiptSchema,
} from '../rest/messaging';
import { authenticated, dateTime, errors, json, jsonBody, pagination, pagingQuery, pathId } from './common';

/** `/v1/…` messaging paths (docs/api.md §5): request shapes are the adapter's own zod schemas. */

const channel = z.enum(['sms', 'email']);
// The lifecycle of subgraphs/messaging/delivery/status.ts (document.test.ts holds the two equal).
export const MESSAGE_STATUSES = ['scheduled', 'queued', 'sending', 'sent', 'delivered', 'failed', 'cancelled'] as const;
const messageStatus = z.enum(MESSAGE_STATUSES);
const messageFields = {
  id: z.string(),
  patientId: z.string(),
  templateId: z.string(),
  templateVersion: z.int(),
  language: z.string(),
  channel,
  variables: z.record(z.string(), z.string()),
  subject: z.string().nullable(),
  body: z.string().meta({ description: 'The rendered text.' }),
  status: messageStatus,
  error: z
    .string()
    .optional()
    .meta({ description: 'Why delivery failed; only when `failed`: a CareGraph error code (`RECIPIENT_INVALID`, …), a colon, what the provider said.' }),
  provider: z
    .string()
    .optional()
    .meta({ description: 'The provider that took the message (`twilio`, `vonage`, `simulator`, `smtp`, `smtp2`, …); absent until one has.' }),
  appointmentId: z.string().nullable(),
  dueAt: dateTime.meta({ description: 'Earliest send time: sendAt when scheduled, later than createdAt when quiet hours hold the message.' }),
  sendAt: dateTime.optional().meta({ description: 'Only on a scheduled send: the time asked for.' }),
  createdAt: dateTime,
  updatedAt: dateTime,
};
const message = z.strictObject(messageFields).meta({ id: 'Message' });
const statusChange = z.strictObject({ status: messageStatus, at: dateTime, error: z.string().nullable() });
const messageDetail = z.strictObject({ ...messageFields, statusHistory: z.array(statusChange) }).meta({ id: 'MessageDetail' });
const messagePage = z.strictObject({ data: z.array(message), pagination }).meta({ id: 'MessagePage' });
const batchResult = z
  .strictObject({
    results: z.array(
      z.union([
        z.strictObject({ index: z.int(), id: z.string(), status: messageStatus, createdAt: dateTime }),
        z.strictObject({ index: z.int(), error: z.strictObject({ code: z.string(), message: z.string() }) }),
      ]),
    ),
    accepted: z.int(),
    rejected: z.int(),
  })
  .meta({ id: 'BatchResult' });
const preferences = z
  .strictObject({
    channels: z.strictObject({ sms: z.boolean(), email: z.boolean() }),
    language: z.string(),
    quietHours: z.strictObject({ start: z.string(), end: z.string(), timezone: z.string() }).nullable(),
  })
  .meta({ id: 'Preferences' });
export const patient = z
  .strictObject({
    id: z.string(),
    ehrId: z.string(),
    name: z.strictObject({ given: z.array(z.string()), family: z.string().nullable() }),
    birthDate: z.string().nullable(),
    gender: z.string().nullable(),
    contact: z.strictObject({ phone: z.string().nullable(), email: z.string().nullable() }),
  })
  .meta({ id: 'Patient' });
const patientWithPreferences = patient.extend({ preferences }).meta({ id: 'PatientWithPreferences' });
const template = z
  .strictObject({
    id: z.string(),
    version: z.int(),
    name: z.string(),
    channel,
    language: z.string(),
    subject: z.string().nullable(),
    body: z.string(),
    variables: z.array(z.strictObject({ name: z.string(), type: z.enum(['string', 'date', 'time']), required: z.boolean() })),
  })
  .meta({ id: 'Template' });
export const appointment = z
  .strictObject({
    id: z.string(),
    patientId: z.string(),
    start: dateTime,
    end: dateTime,
    status: z.enum(['booked', 'confirmed', 'cancelled', 'fulfilled', 'noshow']),
    location: z.string().nullable(),
  })
  .meta({ id: 'Appointment' });
const reply = z
  .strictObject({
    id: z.string(),
    messageId: z.string(),
    patientId: z.string(),
    keyword: z.string().nullable(),
    action: z.enum(['none', 'confirmed', 'cancelled', 'opted_out', 'opted_in', 'help', 'ignored', 'pending']),
    receivedAt: dateTime,
  })
  .meta({ id: 'Reply' });

const idempotencyKey = z
  .string()
  .regex(/^[\x21-\x7E]{1,255}$/)
  .optional()
  .meta({
    description: 'A repeat with the same key (and body) answers the first result; the same key with another body is 409.',
    example: 'reminder-appt-1001-2026-11-24',
  });

const EXAMPLE_MESSAGE = {
  id: '0b9d7a52-3c4e-4f0a-9a31-6d1f2c8e5b10',
  patientId: 'p-1001',
  templateId: 'appointment-reminder',
  templateVersion: 1,
  language: 'en',
  channel: 'sms',
  variables: { date: '2026-11-24', time: '09:30' },
  subject: 'Your appointment on 2026-11-24',
  body: 'Reminder: your appointment is on 2026-11-24 at 09:30. Reply C to confirm or X to cancel.',
  status: 'queued',
  appointmentId: null,
  dueAt: '2026-11-23T09:00:00.000Z',
  createdAt: '2026-11-23T09:00:00.000Z',
  updatedAt: '2026-11-23T09:00:00.000Z',
};
export const EXAMPLE_PATIENT = {
  id: 'p-1001',
  ehrId: 'ehr-p-1001',
  name: { given: ['Anna'], family: 'de Vries' },
  birthDate: '1984-03-12',
  gender: 'female',
  contact: { phone: '+31612345671', email: 'anna.devries@example.org' },
};
const EXAMPLE_PREFERENCES = {
  channels: { sms: true, email: false },
  language: 'en',
  quietHours: { start: '22:00', end: '07:00', timezone: 'Europe/Amsterdam' },
};
const EXAMPLE_SEND = { patientId: 'p-1001', templateId: 'appointment-reminder', channel: 'sms', variables: { date: '2026-11-24', time: '09:30' } };

// The adapter's own schema under a component name (zod's meta: adapter schemas may predate the .openapi() extension).
const sendRequest = sendSchema.meta({ id: 'SendMessageRequest' });

export function registerMessaging(registry: OpenAPIRegistry): void {
  const tags = ['Messaging'];
  const path = (p: string) => `/v1${p}`;

  registry.registerPath(
    authenticated({
      method: 'post',
      path: path('/messages'),
      operationId: 'sendMessage',
      summary: 'Send a message from a template',
      description:
        'Queues one message, or with `sendAt` (1 minute to 35 days ahead) schedules it: `scheduled` until then, when consent, preferences and quiet hours are checked again. Rate-limit category `MESSAGES_SEND`.',
      tags,
      request: { headers: z.object({ 'Idempotency-Key': idempotencyKey }), body: jsonBody(sendRequest, EXAMPLE_SEND) },
      responses: { 201: json('The queued (or scheduled) message.', message, EXAMPLE_MESSAGE) },
      extraErrors: [404, 409, 413, 415, 422],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: path('/messages/batch'),
      operationId: 'sendMessageBatch',
      summary: 'Send up to 1000 messages',
      description: 'Each item is a single send and is accepted or refused on its own; the batch counts once against `MESSAGES_SEND`.',
      tags,
      request: {
        headers: z.object({ 'Idempotency-Key': idempotencyKey }),
        body: jsonBody(batchSchema.extend({ messages: z.array(sendRequest).min(1).max(1000) }), {
          messages: [EXAMPLE_SEND, { ...EXAMPLE_SEND, patientId: 'p-1003', channel: 'email' }],
        }),
      },
      responses: {
        200: json('One result per item, in order.', batchResult, {
          results: [
            { index: 0, id: EXAMPLE_MESSAGE.id, status: 'queued', createdAt: EXAMPLE_MESSAGE.createdAt },
            { index: 1, error: { code: 'PATIENT_OPTED_OUT', message: 'The patient does not accept email' } },
          ],
          accepted: 1,
          rejected: 1,
        }),
      },
      extraErrors: [409, 413, 415],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: path('/messages'),
      operationId: 'listMessages',
      summary: 'List messages, newest first',
      tags,
      request: {
        query: z.object({
          patientId: z.string().optional().meta({ example: 'p-1001' }),
          status: messageStatus.optional().meta({ description: 'Only messages in this status.', example: 'scheduled' }),
          ...pagingQuery,
        }),
      },
      responses: { 200: json('A page of messages.', messagePage, { data: [EXAMPLE_MESSAGE], pagination: { limit: 20, offset: 0, total: 1 } }) },
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: path('/messages/{id}/cancel'),
      operationId: 'cancelMessage',
      summary: 'Take back a scheduled or queued message',
      description:
        'The message becomes `cancelled` (and `message.cancelled` is emitted); it never reaches a provider. 409 from any later status (`sending` on, `cancelled` included). Rate-limit category `MESSAGES_SEND`.',
      tags,
      request: { params: z.object({ id: pathId('id', EXAMPLE_MESSAGE.id) }) },
      responses: { 200: json('The cancelled message.', message, { ...EXAMPLE_MESSAGE, status: 'cancelled' }) },
      extraErrors: [404, 409],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: path('/messages/{id}'),
      operationId: 'getMessage',
      summary: 'One message with its status history',
      tags,
      request: { params: z.object({ id: pathId('id', EXAMPLE_MESSAGE.id) }) },
      responses: {
        200: json('The message.', messageDetail, {
          ...EXAMPLE_MESSAGE,
          status: 'delivered',
          statusHistory: [{ status: 'queued', at: EXAMPLE_MESSAGE.createdAt, error: null }],
        }),
      },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: path('/patients/{id}'),
      operationId: 'getPatientWithPreferences',
      summary: 'Demographics plus messaging preferences',
      tags,
      request: { params: z.object({ id: pathId('id', 'p-1001') }) },
      responses: {
        200: json('The patient.', patientWithPreferences, {
          ...EXAMPLE_PATIENT,
          preferences: EXAMPLE_PREFERENCES,
        }),
      },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'patch',
      path: path('/patients/{id}/preferences'),
      operationId: 'updatePreferences',
      summary: "Change a patient's channels, language or quiet hours",
      tags,
      request: {
        params: z.object({ id: pathId('id', 'p-1001') }),
        body: jsonBody(preferencesSchema, { channels: { email: true }, quietHours: EXAMPLE_PREFERENCES.quietHours }),
      },
      responses: { 200: json('The preferences after the change.', preferences, { ...EXAMPLE_PREFERENCES, channels: { sms: true, email: true } }) },
      extraErrors: [404, 413, 415],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: path('/templates'),
      operationId: 'listTemplates',
      summary: 'Message templates',
      tags,
      responses: { 200: json('All templates of the tenant.', z.strictObject({ data: z.array(template) })) },
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: path('/templates/{id}'),
      operationId: 'getTemplate',
      summary: 'One message template',
      tags,
      request: { params: z.object({ id: pathId('id', 'appointment-reminder') }), query: z.object({ language: z.string().optional().meta({ example: 'en' }) }) },
      responses: {
        200: json('The template.', template, {
          id: 'appointment-reminder',
          version: 1,
          name: 'Appointment reminder',
          channel: 'sms',
          language: 'en',
          subject: 'Your appointment on {{date}}',
          body: 'Reminder: your appointment is on {{date}} at {{time}}{{#location}} at {{location}}{{/location}}. Reply C to confirm or X to cancel.',
          variables: [
            { name: 'date', type: 'date', required: true },
            { name: 'time', type: 'time', required: true },
            { name: 'location', type: 'string', required: false },
          ],
        }),
      },
      extraErrors: [404],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'get',
      path: path('/appointments'),
      operationId: 'listAppointments',
      summary: 'Appointments in a date range (default today to today + 7 days)',
      tags,
      request: {
        query: z.object({
          from: z.string().optional().meta({ description: 'YYYY-MM-DD (inclusive, UTC) or an ISO 8601 timestamp.', example: '2026-11-23' }),
          to: z
            .string()
            .optional()
            .meta({ description: 'YYYY-MM-DD (inclusive, UTC) or an ISO 8601 timestamp; at most 366 days after `from`.', example: '2026-11-30' }),
        }),
      },
      responses: {
        200: json('The appointments.', z.strictObject({ data: z.array(appointment) }), {
          data: [
            {
              id: 'appt-1001',
              patientId: 'p-1001',
              start: '2026-11-24T09:30:00.000Z',
              end: '2026-11-24T10:00:00.000Z',
              status: 'booked',
              location: 'Clinic Amstel, room 2',
            },
          ],
        }),
      },
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: path('/appointments/{id}/remind'),
      operationId: 'remindAppointment',
      summary: 'Queue a reminder for an appointment',
      description: 'Body optional: `templateId` (default `appointment-reminder`) and `channel`.',
      tags,
      request: {
        params: z.object({ id: pathId('id', 'appt-1001') }),
        headers: z.object({ 'Idempotency-Key': idempotencyKey }),
        body: { ...jsonBody(remindSchema, { channel: 'sms' }), required: false },
      },
      responses: { 201: json('The queued reminder.', message, { ...EXAMPLE_MESSAGE, appointmentId: 'appt-1001' }) },
      extraErrors: [404, 409, 413, 415, 422],
    }),
  );
  registry.registerPath(
    authenticated({
      method: 'post',
      path: path('/simulator/replies'),
      operationId: 'simulateReply',
      summary: 'Inject a patient reply (SMS simulator)',
      tags,
      request: { body: jsonBody(replySchema, { messageId: EXAMPLE_MESSAGE.id, body: 'C' }) },
      responses: {
        201: json('The reply and what it did.', reply, {
          id: '5c0f4b8e-7a2d-4e61-8f3a-2b9c6d1e0a47',
          messageId: EXAMPLE_MESSAGE.id,
          patientId: 'p-1001',
          keyword: 'C',
          action: 'confirmed',
          receivedAt: '2026-11-23T09:05:00.000Z',
        }),
      },
      extraErrors: [404, 413, 415],
    }),
  );

  const providerTags = ['SMS provider callbacks'];
  const form = (schema: z.ZodType, example: unknown) => ({ 'application/x-www-form-urlencoded': { schema, example } });
  registry.registerPath(
    authenticated({
      method: 'post',
      path: path('/inbound/sms'),
      operationId: 'inboundSms',
      summary: "The SMS provider's inbound webhook (patient replies)",
      description:
        'With `SMS_PROVIDER=twilio` Twilio posts its form here, authenticated by `X-Twilio-Signature` instead of a token, and gets an empty TwiML answer. With the simulator it takes a bearer token and answers the reply as JSON.',
      tags: providerTags,
      security: [{ bearerAuth: [] }, { twilioSignature: [] }],
      request: {
        body: {
          required: true,
          content: {
            ...form(inboundSchema, { From: '+31612345671', Body: 'C', MessageSid: 'SM0123456789abcdef0123456789abcdef' }),
            'application/json': { schema: inboundSchema, example: { From: '+31612345671', Body: 'C' } },
          },
        },
      },
      responses: {
        200: {
          description: 'Twilio: the reply was taken (or came from an unknown number).',
          content: { 'text/xml': { schema: z.string(), example: '<?xml version="1.0" encoding="UTF-8"?><Response></Response>' } },
        },
        201: json('Simulator: the reply and what it did.', reply),
      },
      extraErrors: [404, 413, 415],
    }),
  );
  registry.registerPath({
    method: 'post',
    path: path(TWILIO_STATUS_ROUTE),
    operationId: 'twilioStatusCallback',
    summary: "Twilio's delivery-status callback",
    description: 'Only with `SMS_PROVIDER=twilio`; the URL is given to Twilio with each message (built from `PUBLIC_URL`).',
    tags: providerTags,
    security: [{ twilioSignature: [] }],
    request: { body: { required: true, content: form(twilioStatusSchema, { MessageSid: 'SM0123456789abcdef0123456789abcdef', MessageStatus: 'delivered' }) } },
    responses: { 204: { description: 'Recorded.' }, ...errors(404, 413, 415) },
  });
  const receipt = {
    messageId: '0B00000123456789',
    status: 'delivered',
    'err-code': '0',
    msisdn: '31612345671',
    timestamp: '1767225600',
    nonce: 'c0a1b2c3-d4e5-4f60-8a9b-0c1d2e3f4a5b',
    sig: '3f1c…',
  };
  registry.registerPath({
    method: 'post',
    path: path(VONAGE_STATUS_ROUTE),
    operationId: 'vonageDeliveryReceipt',
    summary: "Vonage's delivery receipt",
    description:
      'Only when `SMS_PROVIDER` names `vonage`; the URL is given to Vonage with each message (built from `PUBLIC_URL`). JSON or a form, as the account sends it. Authenticated by its signed fields: `sig` over every other field, keyed with `VONAGE_SIGNATURE_SECRET` by `VONAGE_SIGNATURE_METHOD`, and a `timestamp` within five minutes; otherwise 403. Fields besides the ones shown are signed and otherwise ignored.',
    tags: providerTags,
    security: [],
    request: {
      body: {
        required: true,
        content: {
          'application/json': { schema: vonageReceiptSchema.loose(), example: receipt },
          ...form(vonageReceiptSchema.loose(), receipt),
        },
      },
    },
    responses: { 204: { description: 'Recorded.' }, ...errors(404, 413, 415) },
  });
}
