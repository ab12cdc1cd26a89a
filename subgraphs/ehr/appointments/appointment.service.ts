import DataLoader from 'dataloader';
import type { Identity } from '../../../common/auth/principal';
import { AppError, forbidden, notFound, validationError } from '../../../common/errors';
import type { EhrPrisma } from '../db/client';
import type { Appointment as AppointmentRow } from '../db/generated/client';
import { canListSchedule, canReadPatient } from '../access';
import { parseDateRange } from './date-range';

export class AppointmentService {
  private readonly loader: DataLoader<string, AppointmentRow | null>;

  constructor(
    private readonly prisma: EhrPrisma,
    private readonly identity: Identity,
  ) {
    this.loader = new DataLoader(async (ids) => {
      const rows = await prisma.appointment.findMany({ where: { tenantId: identity.tenantId, id: { in: [...ids] } } });
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    });
  }

  async find(id: string): Promise<AppointmentRow | null> {
    const row = await this.loader.load(id);
    return row && canReadPatient(this.identity, row.patientId) ? row : null;
  }

  async get(id: string): Promise<AppointmentRow> {
    const row = await this.find(id);
    if (!row) throw notFound('Appointment', id);
    return row;
  }

  /** Appointments starting in the range, soonest first; a patient sees only their own. */
  async list(from?: string | null, to?: string | null): Promise<AppointmentRow[]> {
    const range = parseDateRange(from, to);
    const ownOnly = !canListSchedule(this.identity);
    return this.prisma.appointment.findMany({
      where: {
        tenantId: this.identity.tenantId,
        start: { gte: range.from, lt: range.until },
        ...(ownOnly ? { patientId: this.identity.patientId ?? '' } : {}),
      },
      orderBy: [{ start: 'asc' }, { id: 'asc' }],
      take: 1000,
    });
  }

  /**
   * Confirms or cancels (messaging's reply keywords, staff tools). Setting the
   * current status again changes nothing; a cancelled appointment stays cancelled.
   */
  async updateStatus(id: string, status: string): Promise<AppointmentRow> {
    if (!canListSchedule(this.identity)) throw forbidden('Only staff and integrations may change appointments');
    if (status !== 'confirmed' && status !== 'cancelled') {
      throw validationError("status must be 'confirmed' or 'cancelled'", [{ path: 'status', message: `'${status}' is not allowed` }]);
    }
    const row = await this.get(id);
    if (row.status === status) return row;
    if (row.status === 'cancelled' || row.status === 'fulfilled' || row.status === 'noshow') {
      throw new AppError('CONFLICT', `Appointment '${id}' is ${row.status}`);
    }
    const updated = await this.prisma.appointment.updateMany({
      where: { tenantId: this.identity.tenantId, id, status: row.status },
      data: { status },
    });
    if (updated.count === 0) throw new AppError('CONFLICT', `Appointment '${id}' changed meanwhile; try again`);
    this.loader.clear(id);
    return this.get(id);
  }
}
