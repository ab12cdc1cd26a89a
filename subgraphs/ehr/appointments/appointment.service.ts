import DataLoader from 'dataloader';
import { AppError, forbidden, notFound, validationError } from '../../../common/errors';
import { Prisma, type Appointment as AppointmentRow } from '../db/generated/client';
import type { TenantStore } from '../db/store';
import { canListSchedule } from '../access';
import type { AccessPolicyService } from '../policy/access-policy.service';
import { parsePaging, type Page } from '../shared/paging';
import { parseDateRange } from './date-range';
import { parseBound } from '../shared/dates';
import { auditVersions, currentVersions } from '../audit/versions';

const APPOINTMENT_ENTITY = ['Appointment'];

export const APPOINTMENT_STATUSES = ['booked', 'confirmed', 'cancelled', 'fulfilled', 'noshow'] as const;

/** Statuses of an appointment that is still going to happen. */
const UPCOMING = ['booked', 'confirmed'];

export class AppointmentService {
  private readonly loader: DataLoader<string, AppointmentRow | null>;
  private readonly nextLoader: DataLoader<string, AppointmentRow | null>;

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
    // Every patient of one response in one query, whatever their number (no N+1 on Patient.nextAppointment).
    this.nextLoader = new DataLoader((patientIds) =>
      store.read(async (tx) => {
        const now = new Date().toISOString();
        // DISTINCT ON takes the soonest per patient straight off the (tenantId, patientId, start) index.
        const rows = await tx.$queryRaw<AppointmentRow[]>`
          SELECT DISTINCT ON ("patientId") "tenantId", "id", "patientId", "start", "end", "status", "location", "createdAt", "updatedAt"
          FROM "ehr"."Appointment"
          WHERE "tenantId" = ${store.tenantId} AND "patientId" IN (${Prisma.join([...patientIds])})
            AND "start" >= ${now}::timestamp AND "status" IN (${Prisma.join(UPCOMING)})
          ORDER BY "patientId", "start", "id"`;
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

  async find(id: string): Promise<AppointmentRow | null> {
    const row = await this.loader.load(id);
    if (!row) return null;
    return (await this.policy.decide('read', 'appointment', { patientId: row.patientId })).allowed ? row : null;
  }

  async get(id: string): Promise<AppointmentRow> {
    const row = await this.find(id);
    if (!row) throw notFound('Appointment', id);
    return row;
  }

  /** Appointments starting in the range, soonest first; a patient sees only their own. */
  async list(from?: string | null, to?: string | null): Promise<AppointmentRow[]> {
    const range = parseDateRange(from, to);
    const ownOnly = !canListSchedule(this.store.identity);
    if (!ownOnly) await this.policy.assert('read', 'appointment');
    return this.store.read((tx) =>
      tx.appointment.findMany({
        where: {
          start: { gte: range.from, lt: range.until },
          ...(ownOnly ? { patientId: this.store.identity.patientId ?? '' } : {}),
        },
        orderBy: [{ start: 'asc' }, { id: 'asc' }],
        take: 1000,
      }),
    );
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
    if (patientId === null && !canListSchedule(this.store.identity)) patientId = this.store.identity.patientId ?? '';
    await this.policy.assert('read', 'appointment', patientId === null ? {} : { patientId });
    const paging = parsePaging(limit, offset);
    if (filter.status && !(APPOINTMENT_STATUSES as readonly string[]).includes(filter.status)) {
      throw validationError(`Unknown status '${filter.status}'`, [{ path: 'status', message: `one of ${APPOINTMENT_STATUSES.join(', ')}` }]);
    }
    const from = parseBound('from', filter.from);
    const to = parseBound('to', filter.to, true);
    const where = {
      ...(patientId === null ? {} : { patientId }),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.statuses ? { status: { in: filter.statuses } } : {}),
      ...(from || to ? { start: { ...(from ? { gte: from } : {}), ...(to ? { lte: to } : {}) } } : {}),
    };
    return this.store.read(async (tx) => {
      const [data, total] = await Promise.all([
        tx.appointment.findMany({ where, orderBy: [{ start: 'asc' }, { id: 'asc' }], take: paging.limit, skip: paging.offset }),
        tx.appointment.count({ where }),
      ]);
      return { data, pagination: { ...paging, total } };
    });
  }

  /**
   * Confirms or cancels (messaging's reply keywords, staff tools). Setting the
   * current status again changes nothing; a cancelled appointment stays cancelled.
   */
  async updateStatus(id: string, status: string, reason?: string | null): Promise<AppointmentRow> {
    if (!canListSchedule(this.store.identity)) throw forbidden('Only staff and integrations may change appointments');
    if (status !== 'confirmed' && status !== 'cancelled') {
      throw validationError("status must be 'confirmed' or 'cancelled'", [{ path: 'status', message: `'${status}' is not allowed` }]);
    }
    const row = await this.store.change(reason, async (tx, audit) => {
      const before = await tx.appointment.findFirst({ where: { id } });
      if (!before) throw notFound('Appointment', id);
      if (before.status === status) return before;
      if (before.status === 'cancelled' || before.status === 'fulfilled' || before.status === 'noshow') {
        throw new AppError('CONFLICT', `Appointment '${id}' is ${before.status}`);
      }
      const [after] = await tx.appointment.updateManyAndReturn({ where: { id, status: before.status }, data: { status } });
      if (!after) throw new AppError('CONFLICT', `Appointment '${id}' changed meanwhile; try again`);
      await audit.record({ action: 'update', entityType: 'Appointment', entityId: id, before: { status: before.status }, after: { status } });
      return after;
    });
    this.loader.clear(id);
    this.nextLoader.clearAll();
    return row;
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
      state = { ...state, ...(v.after as object), id } as AppointmentRow;
      return { version: v.version, at: v.at, appointment: state };
    });
  }
}
