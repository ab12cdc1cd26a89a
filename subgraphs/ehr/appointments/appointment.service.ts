import DataLoader from 'dataloader';
import { AppError, notFound, validationError } from '../../../common/errors';
import { Prisma, type Appointment as AppointmentRow } from '../db/generated/client';
import type { AuditWriter, TenantStore } from '../db/store';
import type { TenantTx } from '../db/tenant';
import { deniedError, recordScope } from '../policy/rules';
import type { AccessPolicyService } from '../policy/access-policy.service';
import { parsePaging, type Page } from '../common/paging';
import { parseDateRange } from './date-range';
import { parseBound } from '../common/dates';
import { assertVersion, auditVersions, currentVersions } from '../audit/versions';
import { recordClinicalEvent } from '../outbox/outbox';
import { parseSlot, type Slot } from './slot';
import { z } from 'zod';
import { randomUUID } from 'node:crypto';
import { zodDetails } from '../../../common/errors';

/** Thrown inside a change to leave it (nothing written): the same request key already made this change. */
class AlreadyApplied extends Error {}

const APPOINTMENT_ENTITY = ['Appointment'];

const APPOINTMENT_STATUSES = ['booked', 'confirmed', 'cancelled', 'fulfilled', 'noshow'] as const;

/** Rolls back a change that changes nothing, e.g. a status a concurrent request already set (a change must write an audit record). */
class Unchanged extends Error {
  constructor(readonly row: AppointmentRow) {
    super('unchanged');
  }
}

/** Statuses of an appointment that is still going to happen. */
const UPCOMING = ['booked', 'confirmed'];

const reference = z.string().min(1).max(128);
const slotFields = {
  start: z.string().min(1).max(64),
  end: z.string().min(1).max(64),
  timeZone: z.string().min(1).max(64).nullish(),
  practitionerId: reference.nullish(),
  location: z.string().min(1).max(200).nullish(),
};
/** A booking (GraphQL input, REST body, FHIR mapping): times with offsets, or wall-clock times in `timeZone`. */
const bookSchema = z.strictObject({ patientId: reference, ...slotFields });
/** A reschedule: the new slot; practitioner, location and zone stay unless given (null clears them). */
const rescheduleSchema = z.strictObject(slotFields);

function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw validationError('Invalid appointment', zodDetails(parsed.error.issues));
  return parsed.data;
}

/** The data of every `appointment.*` event; a booking or a move also says when it ends. */
function eventData(row: AppointmentRow, withEnd = false): Record<string, unknown> {
  return {
    appointmentId: row.id,
    patientId: row.patientId,
    status: row.status,
    start: row.start.toISOString(),
    ...(withEnd ? { end: row.end.toISOString() } : {}),
  };
}

/** An appointment as its audit record keeps it (times as ISO text). */
function snapshot(row: AppointmentRow): Record<string, unknown> {
  const { tenantId: _tenant, createdAt: _created, updatedAt: _updated, ...rest } = row;
  return rest;
}

export class AppointmentService {
  private readonly loader: DataLoader<string, AppointmentRow | null>;
  private readonly nextLoader: DataLoader<string, AppointmentRow | null>;
  /** The appointments a request was shown, access-logged in one statement per tick (and once per request each). */
  private readonly readLog: DataLoader<AppointmentRow, true, string>;

  constructor(
    private readonly store: TenantStore,
    private readonly policy: AccessPolicyService,
  ) {
    this.loader = new DataLoader((ids) =>
      store.read(async (tx) => {
        const rows = await tx.appointment.findMany({ where: { id: { in: [...ids] } } });
        const byId = new Map(rows.map((row) => [row.id, row]));
        return ids.map((id) => byId.get(id) ?? null);
      }),
    );
    this.readLog = new DataLoader(
      async (rows) => {
        await store.read((tx) => this.logReads(tx, [...rows], 'read'));
        return rows.map(() => true as const);
      },
      { cacheKeyFn: (row) => row.id },
    );
    // Every patient of one response in one query, whatever their number (no N+1 on Patient.nextAppointment).
    this.nextLoader = new DataLoader((patientIds) =>
      store.read(async (tx) => {
        const now = new Date().toISOString();
        // DISTINCT ON takes the soonest per patient straight off the (tenantId, patientId, start) index.
        const rows = await tx.$queryRaw<AppointmentRow[]>`
          SELECT DISTINCT ON ("patientId") "tenantId", "id", "patientId", "start", "end", "status", "location", "practitionerId", "timeZone", "createdAt", "updatedAt"
          FROM "ehr"."Appointment"
          WHERE "tenantId" = ${store.tenantId} AND "patientId" IN (${Prisma.join([...patientIds])})
            AND "start" >= ${now}::timestamp AND "status" IN (${Prisma.join(UPCOMING)})
          ORDER BY "patientId", "start", "id"`;
        await this.logReads(tx, rows, 'read');
        const byPatient = new Map(rows.map((row) => [row.patientId, row]));
        return patientIds.map((id) => byPatient.get(id) ?? null);
      }),
    );
  }

  /** The patient's next booked or confirmed appointment; null when none, or when the caller may not see their schedule. */
  async next(patientId: string): Promise<AppointmentRow | null> {
    if (!(await this.policy.decide('read', 'appointment', { patientId })).allowed) return null;
    return this.nextLoader.load(patientId);
  }

  /** An appointment the caller is shown (access-logged); null when unknown or out of the caller's reach. */
  async find(id: string): Promise<AppointmentRow | null> {
    const row = await this.readable(id);
    // The log's cache keeps one entry per appointment and request; the row answered is always the one just read.
    if (row) await this.readLog.load(row);
    return row;
  }

  /** The appointment if the caller may read it, not logged: what a change starts from, or answers with. */
  private async readable(id: string): Promise<AppointmentRow | null> {
    const row = await this.loader.load(id);
    if (!row) return null;
    const decision = await this.policy.decide('read', 'appointment', { patientId: row.patientId });
    // A caller who does not reach the patient learns nothing of the appointment; one who does is told why not.
    if (!decision.allowed) {
      if (decision.hide) return null;
      throw deniedError(decision, row.patientId);
    }
    return row;
  }

  /** The appointment a change applies to (404 when the caller may not read it). */
  private async current(id: string): Promise<AppointmentRow> {
    const row = await this.readable(id);
    if (!row) throw notFound('Appointment', id);
    return row;
  }

  /** A patient's schedule is part of their record: each appointment a caller is shown is access-logged (NEN 7513). */
  private logReads(tx: TenantTx, rows: AppointmentRow[], action: 'read' | 'list'): Promise<void> {
    return this.store.logAccess(
      tx,
      rows.map((row) => ({ entityType: 'Appointment', entityId: row.id, patientId: row.patientId, action })),
    );
  }

  async get(id: string): Promise<AppointmentRow> {
    const row = await this.find(id);
    if (!row) throw notFound('Appointment', id);
    return row;
  }

  /** Appointments starting in the range, soonest first; a patient sees only their own. */
  async list(from?: string | null, to?: string | null): Promise<AppointmentRow[]> {
    const range = parseDateRange(from, to);
    const own = recordScope(this.store.identity);
    await this.policy.assert('read', 'appointment', own === undefined ? {} : { patientId: own });
    const restricted = own === undefined ? await this.policy.restrictedPatientIds() : [];
    return this.store.read(async (tx) => {
      const rows = await tx.appointment.findMany({
        where: {
          start: { gte: range.from, lt: range.until },
          ...(own !== undefined ? { patientId: own } : { patientId: { notIn: restricted } }),
        },
        orderBy: [{ start: 'asc' }, { id: 'asc' }],
        take: 1000,
      });
      await this.logReads(tx, rows, 'list');
      return rows;
    });
  }

  /**
   * One patient's appointments (or, with patientId null, the tenant's schedule
   * for staff and the caller's own for a patient), soonest first, optionally by
   * statuses and start range (ISO 8601 or YYYY-MM-DD).
   */
  async forPatient(
    patientId: string | null,
    filter: { status?: string | null; statuses?: string[]; from?: string | null; to?: string | null },
    limit?: number | null,
    offset?: number | null,
  ): Promise<Page<AppointmentRow>> {
    if (patientId === null) patientId = recordScope(this.store.identity) ?? null;
    await this.policy.assert('read', 'appointment', patientId === null ? {} : { patientId });
    const paging = parsePaging(limit, offset);
    if (filter.status && !(APPOINTMENT_STATUSES as readonly string[]).includes(filter.status)) {
      throw validationError(`Unknown status '${filter.status}'`, [{ path: 'status', message: `one of ${APPOINTMENT_STATUSES.join(', ')}` }]);
    }
    const from = parseBound('from', filter.from);
    const to = parseBound('to', filter.to, true);
    const where = {
      ...(patientId === null ? { patientId: { notIn: await this.policy.restrictedPatientIds() } } : { patientId }),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.statuses ? { status: { in: filter.statuses } } : {}),
      ...(from || to ? { start: { ...(from ? { gte: from } : {}), ...(to ? { lte: to } : {}) } } : {}),
    };
    return this.store.read(async (tx) => {
      const [data, total] = await Promise.all([
        tx.appointment.findMany({ where, orderBy: [{ start: 'asc' }, { id: 'asc' }], take: paging.limit, skip: paging.offset }),
        tx.appointment.count({ where }),
      ]);
      await this.logReads(tx, data, 'list');
      return { data, pagination: { ...paging, total } };
    });
  }

  /**
   * Confirms or cancels (messaging's reply keywords, staff tools). Setting the
   * current status again changes nothing; a cancelled appointment stays cancelled.
   * The change, its audit record and its `appointment.*` event (outbox) commit
   * in one transaction. With a `requestKey` the call is idempotent: a repeat
   * of a key that made the change returns the appointment without a second
   * change, and a status that is already set (by anyone else) is CONFLICT, so
   * the caller learns whether its own request made the change.
   */
  async updateStatus(id: string, status: string, reason?: string | null, requestKey?: string | null): Promise<AppointmentRow> {
    if (status !== 'confirmed' && status !== 'cancelled') {
      throw validationError("status must be 'confirmed' or 'cancelled'", [{ path: 'status', message: `'${status}' is not allowed` }]);
    }
    if (requestKey !== undefined && requestKey !== null && (requestKey.length === 0 || requestKey.length > 200)) {
      throw validationError('requestKey must be 1..200 characters', [{ path: 'requestKey', message: 'invalid length' }]);
    }
    const current = await this.current(id);
    await this.policy.assert('write', 'appointment', { patientId: current.patientId });
    // Idempotent: the same status again changes nothing, so it writes no audit record and no event.
    if (!requestKey && current.status === status) return current;
    try {
      // A concurrent request that set the same status first (Unchanged) gives this request's outcome too.
      return await this.changeOne(id, reason, async (tx, audit) => {
        if (requestKey) {
          // Two calls with one key (a retry racing the first) run one after the other; the second finds the first's event.
          await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`caregraph-appointment-request:${this.store.tenantId}:${requestKey}`}, 0))::text AS locked`;
          if (await tx.outboxEvent.findFirst({ where: { requestKey }, select: { id: true } })) throw new AlreadyApplied();
        }
        return this.changeStatus(tx, audit, id, status, requestKey ?? null);
      });
    } catch (err) {
      if (!(err instanceof AlreadyApplied)) throw err;
      this.loader.clear(id);
      return this.current(id);
    }
  }

  /**
   * One change of appointment `id` in a transaction with its audit record. A change that finds nothing to change
   * throws Unchanged, rolling back, and answers the row as it is. The cached reads of the appointment are dropped.
   */
  private async changeOne(
    id: string,
    reason: string | null | undefined,
    change: (tx: TenantTx, audit: AuditWriter) => Promise<AppointmentRow>,
  ): Promise<AppointmentRow> {
    const row = await this.store.change(reason, change).catch((err) => {
      if (err instanceof Unchanged) return err.row;
      throw err;
    });
    this.loader.clear(id);
    this.nextLoader.clearAll();
    return row;
  }

  /** The status change, its audit record and its event, in the caller's transaction. */
  private async changeStatus(
    tx: TenantTx,
    audit: AuditWriter,
    id: string,
    status: 'confirmed' | 'cancelled',
    requestKey: string | null,
  ): Promise<AppointmentRow> {
    const before = await tx.appointment.findFirst({ where: { id } });
    if (!before) throw notFound('Appointment', id);
    if (before.status === status) {
      if (requestKey) throw new AppError('CONFLICT', `Appointment '${id}' is already ${status}`);
      throw new Unchanged(before);
    }
    if (before.status === 'cancelled' || before.status === 'fulfilled' || before.status === 'noshow') {
      throw new AppError('CONFLICT', `Appointment '${id}' is ${before.status}`);
    }
    const [after] = await tx.appointment.updateManyAndReturn({ where: { id, status: before.status }, data: { status } });
    if (!after) throw new AppError('CONFLICT', `Appointment '${id}' changed meanwhile; try again`);
    await audit.record({ action: 'update', entityType: 'Appointment', entityId: id, before: { status: before.status }, after: { status } });
    await recordClinicalEvent(
      tx,
      this.store.tenantId,
      status === 'confirmed' ? 'appointment.confirmed' : 'appointment.cancelled',
      eventData(after),
      requestKey,
    );
    return after;
  }

  /**
   * Cancels an appointment (GraphQL, REST PATCH, FHIR): again changes nothing;
   * CONFLICT once fulfilled or a no-show. With `ifVersion` (FHIR If-Match)
   * PRECONDITION_FAILED unless that is the current version.
   */
  async cancel(id: string, reason?: string | null, ifVersion?: number): Promise<AppointmentRow> {
    if (ifVersion === undefined) return this.updateStatus(id, 'cancelled', reason);
    const current = await this.current(id);
    await this.policy.assert('write', 'appointment', { patientId: current.patientId });
    return this.changeOne(id, reason, async (tx, audit) => {
      await assertVersion(tx, () => this.lockRow(tx, id), APPOINTMENT_ENTITY, id, ifVersion);
      return this.changeStatus(tx, audit, id, 'cancelled', null);
    });
  }

  private async lockRow(tx: TenantTx, id: string): Promise<AppointmentRow | undefined> {
    const [row] = await tx.$queryRaw<AppointmentRow[]>`SELECT * FROM ehr."Appointment" WHERE "tenantId" = ${this.store.tenantId} AND id = ${id} FOR UPDATE`;
    return row;
  }

  /**
   * Books an appointment for a patient of the tenant: the slot is checked
   * (time zone, future, length) and must not overlap another upcoming
   * appointment of the same patient or practitioner or at the same location (CONFLICT).
   * The row, its audit record and `appointment.booked` commit together.
   */
  async book(input: unknown, reason?: string | null): Promise<AppointmentRow> {
    const data = parseInput(bookSchema, input);
    await this.policy.assert('write', 'appointment', { patientId: data.patientId });
    const slot = parseSlot(data, new Date());
    const id = `appt-${randomUUID()}`;
    const row = await this.store.change(reason, async (tx, audit) => {
      if (!(await tx.patient.findFirst({ where: { id: data.patientId, deletedAt: null }, select: { id: true } }))) throw notFound('Patient', data.patientId);
      const place = { practitionerId: data.practitionerId ?? null, location: data.location ?? null };
      await this.assertFree(tx, slot, { patientId: data.patientId, ...place }, null);
      const created = await tx.appointment.create({
        data: {
          tenantId: this.store.tenantId,
          id,
          patientId: data.patientId,
          status: 'booked',
          start: slot.start,
          end: slot.end,
          timeZone: slot.timeZone,
          ...place,
        },
      });
      await audit.record({ action: 'create', entityType: 'Appointment', entityId: id, after: snapshot(created) });
      await recordClinicalEvent(tx, this.store.tenantId, 'appointment.booked', eventData(created, true), null);
      return created;
    });
    this.nextLoader.clearAll();
    return row;
  }

  /**
   * Moves an upcoming appointment (and, when given, to another practitioner,
   * location or time zone); the new slot is checked as for a booking. A
   * confirmed appointment whose time moves goes back to booked: the patient
   * confirms the new time. The change, its audit record and `appointment.rescheduled` (with the
   * previous start) commit together.
   */
  async reschedule(id: string, input: unknown, reason?: string | null, ifVersion?: number): Promise<AppointmentRow> {
    const data = parseInput(rescheduleSchema, input);
    const current = await this.current(id);
    await this.policy.assert('write', 'appointment', { patientId: current.patientId });
    const timeZone = data.timeZone === undefined ? current.timeZone : data.timeZone;
    const slot = parseSlot({ start: data.start, end: data.end, timeZone }, new Date());
    return this.changeOne(id, reason, async (tx, audit) => {
      const tenantId = this.store.tenantId;
      const before = await this.lockRow(tx, id);
      if (!before) throw notFound('Appointment', id);
      if (ifVersion !== undefined) await assertVersion(tx, async () => undefined, APPOINTMENT_ENTITY, id, ifVersion);
      if (!UPCOMING.includes(before.status)) throw new AppError('CONFLICT', `Appointment '${id}' is ${before.status}`);
      const place = {
        practitionerId: data.practitionerId === undefined ? before.practitionerId : data.practitionerId,
        location: data.location === undefined ? before.location : data.location,
      };
      await this.assertFree(tx, slot, { patientId: before.patientId, ...place }, id);
      const moved = before.start.getTime() !== slot.start.getTime() || before.end.getTime() !== slot.end.getTime();
      const [after] = await tx.appointment.updateManyAndReturn({
        where: { id },
        data: { start: slot.start, end: slot.end, timeZone: slot.timeZone, status: moved ? 'booked' : before.status, ...place },
      });
      const changed = (['start', 'end', 'timeZone', 'status', 'practitionerId', 'location'] as const).filter(
        (key) =>
          String(before[key] instanceof Date ? (before[key] as Date).toISOString() : before[key]) !==
          String(after[key] instanceof Date ? (after[key] as Date).toISOString() : after[key]),
      );
      // The same slot again: nothing to change, so no audit record and no event.
      if (changed.length === 0) throw new Unchanged(after);
      const pick = (r: AppointmentRow) => Object.fromEntries(changed.map((key) => [key, r[key]]));
      await audit.record({ action: 'update', entityType: 'Appointment', entityId: id, before: pick(before), after: pick(after) });
      await recordClinicalEvent(tx, tenantId, 'appointment.rescheduled', { ...eventData(after, true), previousStart: before.start.toISOString() }, null);
      return after;
    });
  }

  /**
   * CONFLICT when an upcoming appointment other than `except` overlaps the slot
   * for the same patient, practitioner or location. Each of those is a
   * transaction-level lock taken in one fixed (sorted) order before the check,
   * so two bookings that share any of them run one after the other and the
   * second sees the first; bookings that share none do not wait for each other.
   */
  private async assertFree(
    tx: TenantTx,
    slot: Slot,
    who: { patientId: string; practitionerId: string | null; location: string | null },
    except: string | null,
  ): Promise<void> {
    const { patientId, practitionerId, location } = who;
    const resources = [
      { key: `patient:${patientId}`, path: 'patientId', what: `of patient '${patientId}'`, where: { patientId } },
      ...(practitionerId
        ? [{ key: `practitioner:${practitionerId}`, path: 'practitionerId', what: `of practitioner '${practitionerId}'`, where: { practitionerId } }]
        : []),
      ...(location ? [{ key: `location:${location}`, path: 'location', what: `at location '${location}'`, where: { location } }] : []),
    ];
    for (const key of resources.map((r) => r.key).sort()) {
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`caregraph-slot:${this.store.tenantId}:${key}`}, 0))::text AS locked`;
    }
    const clash = await tx.appointment.findFirst({
      where: {
        status: { in: UPCOMING },
        start: { lt: slot.end },
        end: { gt: slot.start },
        ...(except ? { id: { not: except } } : {}),
        OR: resources.map((r) => r.where),
      },
      orderBy: { start: 'asc' },
    });
    if (!clash) return;
    const shared = resources.find((r) => Object.entries(r.where).every(([field, value]) => clash[field as keyof AppointmentRow] === value))!;
    throw new AppError('CONFLICT', `The slot overlaps appointment '${clash.id}' ${shared.what} (${clash.start.toISOString()}–${clash.end.toISOString()})`, [
      { path: shared.path, message: `overlaps ${clash.id}` },
    ]);
  }

  /** The current version number and time of each appointment (from the audit trail). */
  versionsOf(ids: string[]): Promise<Map<string, { version: number; at: Date | null }>> {
    return this.store.read((tx) => currentVersions(tx, APPOINTMENT_ENTITY, ids));
  }

  /** Every recorded state of a readable appointment, oldest first, from the audit snapshots. */
  async history(id: string): Promise<Array<{ version: number; at: Date; appointment: AppointmentRow }>> {
    const current = await this.get(id);
    const versions = await this.store.read((tx) => auditVersions(tx, APPOINTMENT_ENTITY, id));
    if (versions.length === 0) return [{ version: 1, at: current.updatedAt, appointment: current }];
    // Status changes record only what changed: each version is the earlier state with its `after` applied.
    let state = { ...current };
    return versions.map((v) => {
      state = { ...state, ...(v.after as object), id };
      return { version: v.version, at: v.at, appointment: state };
    });
  }
}
