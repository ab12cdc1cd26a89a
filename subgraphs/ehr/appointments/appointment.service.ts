import DataLoader from 'dataloader';
import type { Identity } from '../../../common/auth/principal';
import { notFound } from '../../../common/errors';
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
}
