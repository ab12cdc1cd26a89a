import { createHmac, randomUUID } from 'node:crypto';
import { isUniqueViolation } from '../../../common/db/unique-violation';
import DataLoader from 'dataloader';
import type PgBoss from 'pg-boss';
import type { Identity } from '../../../common/auth/principal';
import type { Deadline } from '../../../common/deadline';
import type { FieldCipher } from '../../../common/crypto';
import { AppError, notFound, validationError } from '../../../common/errors';
import { wallClockMs } from '../../../common/dates';
import { howFarAhead } from '../reminders/when';
import type { EventBus } from '../../../common/events/bus';
import type { MessagingPrisma } from '../db/client';
import type { Message as MessageRow, MessageStatusChange, Prisma, MessageTemplate as TemplateRow } from '../db/generated/client';
import type { ClinicalPatient, ClinicalRecord } from '../clinical-record/client';
import { DELIVER_QUEUE, enqueueInTransaction, enqueueManyInTransaction, type DeliverJob } from '../delivery/jobs';
import { advanceStatus, statusEvent } from '../delivery/transitions';
import { isCancellable, isMessageStatus, MESSAGE_STATUSES } from '../delivery/status';
import { publishCommitted } from '../events/outbox';
import { toPreferencesView, type PreferencesView } from '../preferences/preference.service';
import { releaseTime } from '../preferences/quiet-hours';
import { systemClock, type Clock } from '../../../common/clock';
import { renderTemplate, validateVariables, type TemplateVariableDef } from '../templates/render';
import { phoneHash } from './recipient';
import { assertMessagingConsent } from '../consent';
import { openMessage, sealJson, type MessageView } from '../sealed';
import { assertAllowed, assertMayRemind, readScope } from '../policy/rules';
import type { MessagingMetrics } from '../metrics';

export interface PageRequest {
  patientId?: string | null;
  status?: string | null;
  limit?: number | null;
  offset?: number | null;
}

/** docs/api.md §5: limit 1..100 (default 20), offset ≥ 0 (default 0). */
export function validatePage(limit: number | null | undefined, offset: number | null | undefined): { limit: number; offset: number } {
  const details = [];
  const l = limit ?? 20;
  const o = offset ?? 0;
  if (!Number.isInteger(l) || l < 1 || l > 100) details.push({ path: 'limit', message: 'limit must be an integer from 1 to 100' });
  if (!Number.isInteger(o) || o < 0) details.push({ path: 'offset', message: 'offset must be an integer ≥ 0' });
  if (details.length > 0) throw validationError('Invalid paging parameters', details);
  return { limit: l, offset: o };
}

const CHANNELS = ['sms', 'email'] as const;
type Channel = (typeof CHANNELS)[number];
const MAX_BATCH = 1000;

export interface SendInput {
  patientId: string;
  templateId: string;
  channel: string;
  variables?: Record<string, unknown> | null;
  /** ISO 8601 with an offset, SCHEDULE_MIN_MS to SCHEDULE_MAX_MS ahead: the message is `scheduled` until then. */
  sendAt?: string | null;
}

/** How far ahead a send may be scheduled (as Twilio's Message Scheduling allows). */
const SCHEDULE_MIN_MS = 60_000;
const SCHEDULE_MAX_MS = 35 * 86_400_000;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The instant of a send's `sendAt`, or the reason it is refused. */
function scheduledFor(sendAt: unknown, now: Date): Date | string {
  if (typeof sendAt !== 'string' || !ISO_WITH_OFFSET.test(sendAt) || Number.isNaN(Date.parse(sendAt))) return 'must be ISO 8601 with an offset';
  const at = new Date(sendAt);
  if (at.getTime() < now.getTime() + SCHEDULE_MIN_MS) return 'must be at least one minute ahead';
  if (at.getTime() > now.getTime() + SCHEDULE_MAX_MS) return 'must be at most 35 days ahead';
  return at;
}

export type BatchItemResult = { index: number; id: string; status: string; createdAt: Date } | { index: number; error: { code: string; message: string } };

export interface MessageServiceDeps {
  prisma: MessagingPrisma;
  cipher: FieldCipher;
  clinical: ClinicalRecord;
  boss: PgBoss;
  events: EventBus;
  /** Key of the recipient hash (see recipient.ts). */
  hashKey: Buffer;
  metrics: MessagingMetrics;
  /** When messages are created and come due (default: the system clock). */
  clock?: Clock;
}

interface SendContext {
  patients: Map<string, ClinicalPatient>;
  preferences: Map<string, PreferencesView>;
  /** Every language variant of each template named. */
  templates: Map<string, TemplateRow[]>;
}

/** The patient's language when the template has it, else English, else the first variant. */
function pickTemplate(variants: TemplateRow[] | undefined, language: string): TemplateRow | undefined {
  if (!variants || variants.length === 0) return undefined;
  return variants.find((t) => t.language === language) ?? variants.find((t) => t.language === 'en') ?? variants[0];
}

/** Fingerprint of a request for Idempotency-Key checks; keyed, so the stored hash reveals nothing of the variables. */
function requestHash(key: Buffer, value: unknown): string {
  const canonical = JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
  return createHmac('sha256', key).update(canonical).digest('hex');
}

/** Date and time of an instant on the wall clock of a time zone. */
function wallClock(iso: string, zone: string): { date: string; time: string } {
  const wall = new Date(wallClockMs(Date.parse(iso), zone)).toISOString();
  return { date: wall.slice(0, 10), time: wall.slice(11, 16) };
}

/** A validated, rendered send: the row to store, its id chosen here so a batch can tell its written rows apart. */
export type PreparedMessage = Pick<
  MessageRow,
  | 'id'
  | 'tenantId'
  | 'patientId'
  | 'templateId'
  | 'templateVersion'
  | 'language'
  | 'channel'
  | 'variablesEnc'
  | 'subjectEnc'
  | 'bodyEnc'
  | 'status'
  | 'recipientEnc'
  | 'recipientHash'
  | 'appointmentId'
  | 'idempotencyKey'
  | 'requestHash'
  | 'dueAt'
  | 'sendAt'
  | 'createdAt'
>;

const STATUS_ORDER: readonly string[] = MESSAGE_STATUSES;

export class MessageService {
  /** Status histories of every message in one response, in one query. */
  private readonly historyLoader: DataLoader<string, MessageStatusChange[]>;
  /** Messages by id (entity references of one response batch into one query). */
  private readonly messageLoader: DataLoader<string, MessageView | null>;

  constructor(
    private readonly deps: MessageServiceDeps,
    private readonly identity: Identity,
    /** The client request's deadline: no message is stored once it has passed. */
    private readonly deadline?: Deadline,
  ) {
    this.historyLoader = new DataLoader(async (messageIds) => {
      const rows = await this.prisma.messageStatusChange.findMany({ where: { tenantId: this.identity.tenantId, messageId: { in: [...messageIds] } } });
      const byMessage = new Map<string, MessageStatusChange[]>(messageIds.map((id) => [id, []]));
      for (const row of rows) byMessage.get(row.messageId)?.push(row);
      for (const list of byMessage.values())
        list.sort((a, b) => a.at.getTime() - b.at.getTime() || STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status));
      return messageIds.map((id) => byMessage.get(id)!);
    });
    this.messageLoader = new DataLoader(async (ids) => {
      const own = this.visiblePatient();
      const rows = await this.prisma.message.findMany({
        where: { tenantId: this.identity.tenantId, id: { in: [...ids] }, ...(own !== undefined ? { patientId: own } : {}) },
      });
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => {
        const row = byId.get(id);
        return row ? openMessage(this.deps.cipher, row) : null;
      });
    });
  }

  private get prisma() {
    return this.deps.prisma;
  }

  private get clock(): Clock {
    return this.deps.clock ?? systemClock;
  }

  /** A patient token sees only its own messages; others of the tenant look absent. */
  private visiblePatient(): string | undefined {
    return readScope(this.identity, 'message');
  }

  private assertCanSend(): void {
    assertAllowed(this.identity, 'write', 'message');
  }

  async get(id: string): Promise<MessageView> {
    const row = await this.messageLoader.load(id);
    if (!row) throw notFound('Message', id);
    return row;
  }

  history(messageId: string): Promise<MessageStatusChange[]> {
    return this.historyLoader.load(messageId);
  }

  /**
   * Newest first. The paging block (with its total) only when `withPagination`:
   * counting grows with the table, a page does not, so a query that asks for
   * no total pays for none.
   */
  async list(request: PageRequest, withPagination = true): Promise<{ data: MessageView[]; pagination?: { limit: number; offset: number; total: number } }> {
    const { limit, offset } = validatePage(request.limit, request.offset);
    const own = this.visiblePatient();
    if (own !== undefined && request.patientId && request.patientId !== own) {
      return { data: [], pagination: { limit, offset, total: 0 } };
    }
    const patientId = own ?? request.patientId ?? undefined;
    if (request.status != null && !isMessageStatus(request.status)) {
      throw validationError('Unknown message status', [{ path: 'status', message: `must be one of ${MESSAGE_STATUSES.join(', ')}` }]);
    }
    const where = { tenantId: this.identity.tenantId, ...(patientId ? { patientId } : {}), ...(request.status ? { status: request.status } : {}) };
    const [data, total] = await Promise.all([
      this.prisma.message.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit, skip: offset }),
      withPagination ? this.prisma.message.count({ where }) : undefined,
    ]);
    return { data: data.map((row) => openMessage(this.deps.cipher, row)), pagination: total === undefined ? undefined : { limit, offset, total } };
  }

  /**
   * Takes back a message that no worker has claimed (`scheduled` or `queued`): it becomes `cancelled`, with its
   * history row and `message.cancelled`, and its delivery job finds nothing to send. CONFLICT from any later
   * status, `cancelled` included.
   */
  async cancel(id: string): Promise<MessageView> {
    this.assertCanSend();
    const before = await this.get(id);
    if (!isCancellable(before.status)) {
      throw new AppError('CONFLICT', `Message '${id}' is ${before.status}; only a scheduled or queued message can be cancelled`);
    }
    const { message, recorded } = await advanceStatus({ ...this.deps, clock: this.clock }, { id }, 'cancelled');
    // A worker claimed it (or another cancel won) between the read and the change.
    if (recorded.length === 0) throw new AppError('CONFLICT', `Message '${id}' is ${message?.status ?? 'gone'}; it can no longer be cancelled`);
    this.messageLoader.clear(id);
    this.historyLoader.clear(id);
    return this.get(id);
  }

  /** Send one message: validate, render, store `queued` (or `scheduled`, with sendAt) with its delivery job. */
  async send(input: SendInput, idempotencyKey?: string | null): Promise<MessageView> {
    this.assertCanSend();
    const context = await this.loadContext([input]);
    return this.sendOne(input, context, { idempotencyKey: idempotencyKey ?? undefined });
  }

  /**
   * The batch: every item is judged on its own (idempotency, validation,
   * consent, preferences) exactly as a single send, from reads made once for
   * the whole batch; then every accepted item is written in one transaction
   * (messages, their `queued` history rows and delivery jobs, each kind in one
   * statement), so the batch's accepted messages are stored whole or not at all.
   */
  async sendBatch(
    inputs: SendInput[],
    idempotencyKey?: string | null,
    itemKeys?: string[] | null,
  ): Promise<{ results: BatchItemResult[]; accepted: number; rejected: number }> {
    this.assertCanSend();
    if (inputs.length < 1 || inputs.length > MAX_BATCH) {
      throw validationError(`A batch holds 1 to ${MAX_BATCH} messages`, [{ path: 'messages', message: `got ${inputs.length}` }]);
    }
    if (itemKeys && (itemKeys.length !== inputs.length || itemKeys.some((key) => !key))) {
      throw validationError('itemKeys holds one non-empty key per message', [
        { path: 'itemKeys', message: `got ${itemKeys.length} for ${inputs.length} messages` },
      ]);
    }
    const keys = itemKeys ?? inputs.map((_, index) => (idempotencyKey ? `${idempotencyKey}#${index}` : undefined));
    const [context, earlier] = await Promise.all([this.loadContext(inputs), this.findIdempotentMany(keys)]);
    const results: BatchItemResult[] = new Array(inputs.length);
    const refuse = (index: number, err: unknown) => {
      if (!(err instanceof AppError)) throw err;
      // A batch item's error has no details list: the fields it names go into its message.
      const fields = err.details?.map((d) => `${d.path}: ${d.message}`).join('; ');
      results[index] = { index, error: { code: err.code, message: fields ? `${err.message}: ${fields}` : err.message } };
    };
    const answer = (index: number, message: Pick<MessageRow, 'id' | 'status' | 'createdAt'>) => {
      results[index] = { index, id: message.id, status: message.status, createdAt: message.createdAt };
    };
    const now = this.clock.now();
    const pending: { index: number; row: PreparedMessage }[] = [];
    inputs.forEach((input, index) => {
      try {
        const hash = this.sendHash(input);
        const key = keys[index];
        const repeat = key ? earlier.get(key) : undefined;
        if (repeat) answer(index, sameRequest(repeat, hash));
        else pending.push({ index, row: this.prepare(input, context, { idempotencyKey: key, hash }, now) });
      } catch (err) {
        refuse(index, err);
      }
    });
    if (pending.length > 0) {
      const stored = await this.storeBatch(pending.map((p) => p.row));
      // An item whose key a concurrent request stored first answers with that request's message.
      const raced = pending.filter((p) => !stored.has(p.row.id));
      const winners = await this.findIdempotentMany(raced.map((p) => p.row.idempotencyKey ?? undefined));
      for (const { index, row } of pending) {
        try {
          if (stored.has(row.id)) answer(index, { id: row.id, status: row.status, createdAt: row.createdAt });
          else answer(index, sameRequest(winners.get(row.idempotencyKey!), row.requestHash!));
        } catch (err) {
          refuse(index, err);
        }
      }
      await this.announceQueued(
        pending.filter((p) => stored.has(p.row.id)).map((p) => p.row),
        now,
      );
    }
    const accepted = results.filter((r) => 'id' in r).length;
    return { results, accepted, rejected: results.length - accepted };
  }

  /** A reminder for an appointment: the reminder template filled from the appointment (by hand, or by the reminder scheduler). */
  async remind(
    appointmentId: string,
    templateId: string | null | undefined,
    channel: string | null | undefined,
    idempotencyKey?: string | null,
  ): Promise<MessageView> {
    assertMayRemind(this.identity);
    const template = templateId ?? 'appointment-reminder';
    const hash = requestHash(this.deps.hashKey, { remind: appointmentId, templateId: template, channel: channel ?? null });
    if (idempotencyKey) {
      const earlier = await this.findIdempotent(idempotencyKey, hash);
      if (earlier) return openMessage(this.deps.cipher, earlier);
    }
    const appointment = await this.deps.clinical.appointment(this.identity.tenantId, appointmentId, this.deadline?.signal);
    if (!appointment) throw notFound('Appointment', appointmentId);
    if (appointment.status === 'cancelled') throw new AppError('CONFLICT', `Appointment '${appointmentId}' is cancelled`);
    const context = await this.loadContext([{ patientId: appointment.patientId, templateId: template }]);
    const preferences = context.preferences.get(appointment.patientId)!;
    const chosen = channel ?? (preferences.channels.sms ? 'sms' : preferences.channels.email ? 'email' : 'sms');
    // The appointment's own zone (where it takes place), else the patient's, else UTC.
    const zone = appointment.timeZone ?? preferences.quietHours?.timezone ?? 'UTC';
    const { date, time } = wallClock(appointment.start, zone);
    const when = howFarAhead(new Date(appointment.start), this.clock.now(), zone, preferences.language);
    const filled: Record<string, string> = { date, time, when, ...(appointment.location ? { location: appointment.location } : {}) };
    const defs = (pickTemplate(context.templates.get(template), preferences.language)?.variables ?? []) as unknown as TemplateVariableDef[];
    const variables = Object.fromEntries(Object.entries(filled).filter(([name]) => defs.some((d) => d.name === name)));
    return this.sendOne({ patientId: appointment.patientId, templateId: template, channel: chosen, variables }, context, {
      idempotencyKey: idempotencyKey ?? undefined,
      hash,
      appointmentId,
    });
  }

  /** Patients, preferences and templates of a whole batch in a few queries. */
  private async loadContext(inputs: Pick<SendInput, 'patientId' | 'templateId'>[]): Promise<SendContext> {
    const tenantId = this.identity.tenantId;
    const patientIds = [...new Set(inputs.map((i) => i.patientId).filter((id) => typeof id === 'string' && id.length > 0))];
    const templateIds = [...new Set(inputs.map((i) => i.templateId).filter((id) => typeof id === 'string' && id.length > 0))];
    const [patients, preferenceRows, templateRows] = await Promise.all([
      patientIds.length > 0 ? this.deps.clinical.patients(tenantId, patientIds, this.deadline?.signal) : new Map<string, ClinicalPatient>(),
      this.prisma.communicationPreference.findMany({ where: { tenantId, patientId: { in: patientIds } } }),
      this.prisma.messageTemplate.findMany({ where: { tenantId, id: { in: templateIds } } }),
    ]);
    const preferences = new Map(patientIds.map((id) => [id, toPreferencesView(preferenceRows.find((r) => r.patientId === id) ?? null)]));
    const templates = new Map(templateIds.map((id) => [id, templateRows.filter((t) => t.id === id)]));
    return { patients, preferences, templates };
  }

  private async findIdempotent(key: string, hash: string): Promise<MessageRow | null> {
    const earlier = await this.prisma.message.findUnique({ where: { tenantId_idempotencyKey: { tenantId: this.identity.tenantId, idempotencyKey: key } } });
    return earlier ? sameRequest(earlier, hash) : null;
  }

  /** The messages already stored under any of `keys`, by key, in one query. */
  private async findIdempotentMany(keys: (string | undefined)[]): Promise<Map<string, MessageRow>> {
    const wanted = keys.filter((key): key is string => key !== undefined);
    if (wanted.length === 0) return new Map();
    const rows = await this.prisma.message.findMany({ where: { tenantId: this.identity.tenantId, idempotencyKey: { in: wanted } } });
    return new Map(rows.map((row) => [row.idempotencyKey!, row]));
  }

  private sendHash(input: SendInput): string {
    return requestHash(this.deps.hashKey, {
      patientId: input.patientId,
      templateId: input.templateId,
      channel: input.channel,
      variables: input.variables ?? {},
      // Only when given, so the key of a send now hashes as it always has.
      ...(input.sendAt != null ? { sendAt: input.sendAt } : {}),
    });
  }

  /** Validates and renders one send into the row to store; refuses (AppError) what a send refuses. */
  private prepare(
    input: SendInput,
    context: SendContext,
    options: { idempotencyKey?: string; hash: string; appointmentId?: string },
    now: Date,
  ): PreparedMessage {
    const { cipher } = this.deps;
    const details = [];
    if (typeof input.patientId !== 'string' || input.patientId.length === 0) details.push({ path: 'patientId', message: 'required' });
    if (typeof input.templateId !== 'string' || input.templateId.length === 0) details.push({ path: 'templateId', message: 'required' });
    if (!(CHANNELS as readonly string[]).includes(input.channel)) details.push({ path: 'channel', message: `must be one of ${CHANNELS.join(', ')}` });
    const given = input.variables ?? {};
    if (typeof given !== 'object' || Array.isArray(given)) details.push({ path: 'variables', message: 'must be an object of strings' });
    const scheduled = input.sendAt == null ? null : scheduledFor(input.sendAt, now);
    if (typeof scheduled === 'string') details.push({ path: 'sendAt', message: scheduled });
    if (details.length > 0) throw validationError('Invalid message', details);
    const sendAt = scheduled as Date | null;
    const channel = input.channel as Channel;

    const patient = context.patients.get(input.patientId);
    if (!patient) throw notFound('Patient', input.patientId);
    const preferences = context.preferences.get(input.patientId)!;
    const template = pickTemplate(context.templates.get(input.templateId), preferences.language);
    if (!template) throw notFound('Template', input.templateId);
    assertMessagingConsent(patient);
    if (!preferences.channels[channel]) throw new AppError('PATIENT_OPTED_OUT', `Patient '${input.patientId}' has opted out of ${channel}`);
    const values = validateVariables(template.variables as unknown as TemplateVariableDef[], given);

    const recipient = channel === 'sms' ? patient.contact.phone : patient.contact.email;
    return {
      id: randomUUID(),
      tenantId: this.identity.tenantId,
      patientId: input.patientId,
      templateId: template.id,
      templateVersion: template.version,
      language: template.language,
      channel,
      variablesEnc: sealJson(cipher, values),
      subjectEnc: cipher.encryptOptional(template.subject ? renderTemplate(template.subject, values) : channel === 'email' ? template.name : null),
      bodyEnc: cipher.encrypt(renderTemplate(template.body, values)),
      status: sendAt ? 'scheduled' : 'queued',
      recipientEnc: recipient ? cipher.encrypt(recipient) : null,
      recipientHash: recipient && channel === 'sms' ? phoneHash(this.deps.hashKey, recipient) : null,
      appointmentId: options.appointmentId ?? null,
      idempotencyKey: options.idempotencyKey ?? null,
      requestHash: options.hash,
      // A scheduled message's quiet hours are judged at its time, by the delivery worker.
      dueAt: sendAt ?? releaseTime(preferences.quietHours, now),
      sendAt,
      createdAt: now,
    };
  }

  /**
   * Writes a batch's prepared messages in one transaction: the messages with
   * their `queued` history rows in one statement, then their delivery jobs in
   * one more, so the batch is stored whole or not at all and no message is
   * queued without its job. Arrays bound as parameters and unnested keep it one
   * statement whatever the batch size (Prisma's createMany costs far more per
   * row). A message whose idempotency key another request stored first is
   * skipped, with no history row or job. Returns the ids written. Past the
   * deadline nothing is stored (a retry is safe); once begun, the write
   * completes and is answered.
   */
  private async storeBatch(rows: PreparedMessage[]): Promise<Set<string>> {
    const column = <K extends keyof PreparedMessage>(key: K) => rows.map((row) => row[key]);
    const instants = (key: 'dueAt' | 'createdAt') => rows.map((row) => row[key].toISOString());
    this.deadline?.beginWrite();
    return this.prisma.$transaction(async (tx) => {
      // The timestamp columns hold UTC without a zone, as Prisma writes them: an ISO string cast to timestamp keeps its UTC digits.
      const written = await tx.$queryRaw<{ id: string }[]>`
        WITH written AS (
          INSERT INTO messaging."Message" ("id", "tenantId", "patientId", "templateId", "templateVersion", "language", "channel",
            "variablesEnc", "subjectEnc", "bodyEnc", "status", "recipientEnc", "recipientHash", "appointmentId", "idempotencyKey",
            "requestHash", "dueAt", "sendAt", "createdAt", "updatedAt")
          SELECT m.*, m."createdAt" FROM unnest(
            ${column('id')}::text[], ${column('tenantId')}::text[], ${column('patientId')}::text[], ${column('templateId')}::text[],
            ${column('templateVersion')}::int[], ${column('language')}::text[], ${column('channel')}::text[], ${column('variablesEnc')}::text[],
            ${column('subjectEnc')}::text[], ${column('bodyEnc')}::text[], ${column('status')}::text[], ${column('recipientEnc')}::text[],
            ${column('recipientHash')}::text[], ${column('appointmentId')}::text[], ${column('idempotencyKey')}::text[],
            ${column('requestHash')}::text[], ${instants('dueAt')}::timestamp(3)[], ${rows.map((row) => row.sendAt?.toISOString() ?? null)}::timestamp(3)[],
            ${instants('createdAt')}::timestamp(3)[]
          ) AS m ("id", "tenantId", "patientId", "templateId", "templateVersion", "language", "channel", "variablesEnc", "subjectEnc",
            "bodyEnc", "status", "recipientEnc", "recipientHash", "appointmentId", "idempotencyKey", "requestHash", "dueAt", "sendAt", "createdAt")
          ON CONFLICT DO NOTHING
          RETURNING "id", "tenantId", "status", "createdAt"
        ), history AS (
          INSERT INTO messaging."MessageStatusChange" ("tenantId", "messageId", "status", "at")
          SELECT "tenantId", "id", "status", "createdAt" FROM written
        )
        SELECT "id" FROM written`;
      const ids = new Set(written.map((row) => row.id));
      const queued = rows.filter((row) => ids.has(row.id));
      await enqueueManyInTransaction(
        this.deps.boss,
        tx,
        DELIVER_QUEUE,
        queued.map((row) => ({ data: { tenantId: row.tenantId, messageId: row.id } satisfies DeliverJob, startAfter: row.dueAt })),
        this.clock,
      );
      return ids;
    });
  }

  private announceQueued(rows: Pick<MessageRow, 'id' | 'tenantId' | 'patientId' | 'channel' | 'status'>[], at: Date): Promise<void> {
    return announceQueued(this.deps, rows, at);
  }

  private async sendOne(
    input: SendInput,
    context: SendContext,
    options: { idempotencyKey?: string; hash?: string; appointmentId?: string },
  ): Promise<MessageView> {
    const hash = options.hash ?? this.sendHash(input);
    if (options.idempotencyKey) {
      const earlier = await this.findIdempotent(options.idempotencyKey, hash);
      if (earlier) return openMessage(this.deps.cipher, earlier);
    }
    const now = this.clock.now();
    const data = this.prepare(input, context, { ...options, hash }, now);
    let created: MessageRow;
    // Past the deadline nothing is stored (a retry is safe); once begun, the write completes and is answered.
    this.deadline?.beginWrite();
    try {
      created = await this.prisma.$transaction((tx) => queueMessage(tx, this.deps.boss, data, this.clock));
    } catch (err) {
      // Two concurrent requests with one key: the loser answers with the winner's message.
      if (options.idempotencyKey && isUniqueViolation(err)) {
        const earlier = await this.findIdempotent(options.idempotencyKey, hash);
        if (earlier) return openMessage(this.deps.cipher, earlier);
      }
      throw err;
    }
    await this.announceQueued([created], now);
    return openMessage(this.deps.cipher, created);
  }
}

/**
 * Stores one prepared message `queued` inside `tx`, with its `queued` history row and its delivery job (due at
 * `dueAt`): a single send's write, and the reply service's automatic answers, which go out the same way.
 */
export async function queueMessage(tx: Prisma.TransactionClient, boss: PgBoss, data: PreparedMessage, clock: Clock): Promise<MessageRow> {
  // Changed when created, on the clock: a message due later than that is held (the delivery sweep's test).
  const message = await tx.message.create({ data: { ...data, updatedAt: data.createdAt } });
  await tx.messageStatusChange.create({ data: { tenantId: message.tenantId, messageId: message.id, status: data.status, at: data.createdAt } });
  await enqueueInTransaction(boss, tx, DELIVER_QUEUE, { tenantId: message.tenantId, messageId: message.id } satisfies DeliverJob, message.dueAt, clock);
  return message;
}

/** After the commit: count the new `queued` messages and tell live subscribers. */
export async function announceQueued(
  deps: Pick<MessageServiceDeps, 'metrics' | 'events'>,
  rows: Pick<MessageRow, 'id' | 'tenantId' | 'patientId' | 'channel' | 'status'>[],
  at: Date,
): Promise<void> {
  for (const row of rows) deps.metrics.statusChanged('none', row.status, row.channel);
  // Issued together, not one round trip each (1,000 in a batch): a publish never throws, and Redis keeps the order of one connection's commands.
  await Promise.all(rows.map((row) => publishCommitted(deps.events, [statusEvent(row, row.status as 'queued' | 'scheduled', null, at)])));
}

/** The earlier message of an idempotency key, when it was stored for the same request; CONFLICT otherwise. */
function sameRequest(earlier: MessageRow | undefined, hash: string): MessageRow {
  if (!earlier) throw new Error('a message stored under an idempotency key was not found');
  if (earlier.requestHash !== hash) throw new AppError('CONFLICT', 'This Idempotency-Key was already used with a different request');
  return earlier;
}
