import type { Identity } from '../../../common/auth/principal';
import { notFound } from '../../../common/errors';
import type { MessagingPrisma } from '../db/client';
import type { MessageTemplate as TemplateRow } from '../db/generated/client';

export type VariableType = 'string' | 'date' | 'time';
export interface TemplateVariableDef {
  name: string;
  type: VariableType;
  required: boolean;
}

export interface TemplateView extends Omit<TemplateRow, 'variables' | 'tenantId'> {
  variables: TemplateVariableDef[];
}

function toView(row: TemplateRow): TemplateView {
  const { tenantId: _tenant, variables, ...rest } = row;
  return { ...rest, variables: variables as unknown as TemplateVariableDef[] };
}

export class TemplateService {
  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly identity: Identity,
  ) {}

  async list(): Promise<TemplateView[]> {
    const rows = await this.prisma.messageTemplate.findMany({ where: { tenantId: this.identity.tenantId }, orderBy: { id: 'asc' } });
    return rows.map(toView);
  }

  async get(id: string): Promise<TemplateView> {
    const row = await this.prisma.messageTemplate.findUnique({ where: { tenantId_id: { tenantId: this.identity.tenantId, id } } });
    if (!row) throw notFound('Template', id);
    return toView(row);
  }
}
