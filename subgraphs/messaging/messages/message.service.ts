import type { Identity } from '../../../common/auth/principal';
import { hasRole } from '../../../common/auth/principal';
import { notFound, validationError } from '../../../common/errors';
import type { MessagingPrisma } from '../db/client';
import type { Message as MessageRow } from '../db/generated/client';

export interface PageRequest {
  patientId?: string | null;
  limit?: number | null;
  offset?: number | null;
}

/** CONTRACT §5: limit 1..100 (default 20), offset ≥ 0 (default 0). */
export function validatePage(limit: number | null | undefined, offset: number | null | undefined): { limit: number; offset: number } {
  const details = [];
  const l = limit ?? 20;
  const o = offset ?? 0;
  if (!Number.isInteger(l) || l < 1 || l > 100) details.push({ path: 'limit', message: 'limit must be an integer from 1 to 100' });
  if (!Number.isInteger(o) || o < 0) details.push({ path: 'offset', message: 'offset must be an integer ≥ 0' });
  if (details.length > 0) throw validationError('Invalid paging parameters', details);
  return { limit: l, offset: o };
}

export class MessageService {
  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly identity: Identity,
  ) {}

  /** A patient token sees only its own messages; others of the tenant look absent. */
  private visiblePatient(): string | undefined {
    return hasRole(this.identity, 'admin', 'clinician', 'nurse', 'receptionist', 'integration') ? undefined : (this.identity.patientId ?? '');
  }

  async get(id: string): Promise<MessageRow> {
    const own = this.visiblePatient();
    const row = await this.prisma.message.findFirst({
      where: { tenantId: this.identity.tenantId, id, ...(own !== undefined ? { patientId: own } : {}) },
    });
    if (!row) throw notFound('Message', id);
    return row;
  }

  /** Newest first, with the total for paging. */
  async list(request: PageRequest): Promise<{ data: MessageRow[]; pagination: { limit: number; offset: number; total: number } }> {
    const { limit, offset } = validatePage(request.limit, request.offset);
    const own = this.visiblePatient();
    if (own !== undefined && request.patientId && request.patientId !== own) {
      return { data: [], pagination: { limit, offset, total: 0 } };
    }
    const patientId = own ?? request.patientId ?? undefined;
    const where = { tenantId: this.identity.tenantId, ...(patientId ? { patientId } : {}) };
    const [data, total] = await Promise.all([
      this.prisma.message.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit, skip: offset }),
      this.prisma.message.count({ where }),
    ]);
    return { data, pagination: { limit, offset, total } };
  }
}
