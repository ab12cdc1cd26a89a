import type { Identity } from '../../../common/auth/principal';
import { conflictOnDuplicate } from '../../../common/db/unique-violation';
import { notFound, validationError, type ErrorDetail } from '../../../common/errors';
import type { MessagingPrisma } from '../db/client';
import type { MessageTemplate as TemplateRow, Prisma } from '../db/generated/client';
import { VARIABLE_TYPES, variablesUsed, type TemplateVariableDef } from './render';
import { assertAllowed } from '../policy/rules';

export interface TemplateView extends Omit<TemplateRow, 'variables' | 'tenantId'> {
  variables: TemplateVariableDef[];
}

export interface TemplateInput {
  id?: string;
  name: string;
  channel: string;
  language?: string | null;
  subject?: string | null;
  body: string;
  variables: TemplateVariableDef[];
}

const TEMPLATE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const LANGUAGE = /^[a-z]{2,3}(-[A-Z]{2})?$/;
const VARIABLE_NAME = /^[A-Za-z_]\w{0,63}$/;

function toView(row: TemplateRow): TemplateView {
  const { tenantId: _tenant, variables, ...rest } = row;
  return { ...rest, variables: variables as unknown as TemplateVariableDef[] };
}

function validateInput(input: TemplateInput): void {
  const details: ErrorDetail[] = [];
  if (input.id !== undefined && !TEMPLATE_ID.test(input.id)) details.push({ path: 'id', message: '1-64 letters, digits, _ . -' });
  if (!input.name || input.name.length > 200) details.push({ path: 'name', message: 'required, at most 200 characters' });
  if (input.channel !== 'sms' && input.channel !== 'email') details.push({ path: 'channel', message: 'sms or email' });
  if (input.language != null && !LANGUAGE.test(input.language)) details.push({ path: 'language', message: "a language tag such as 'en' or 'nl-BE'" });
  if (!input.body || input.body.length > 5000) details.push({ path: 'body', message: 'required, at most 5000 characters' });
  const names = new Set<string>();
  input.variables.forEach((v, i) => {
    if (!VARIABLE_NAME.test(v.name)) details.push({ path: `variables.${i}.name`, message: 'a letter or _ then letters, digits, _' });
    if (names.has(v.name)) details.push({ path: `variables.${i}.name`, message: `'${v.name}' is declared twice` });
    names.add(v.name);
    if (!VARIABLE_TYPES.includes(v.type)) details.push({ path: `variables.${i}.type`, message: `one of ${VARIABLE_TYPES.join(', ')}` });
  });
  for (const used of variablesUsed(`${input.subject ?? ''} ${input.body}`)) {
    if (!names.has(used)) details.push({ path: 'body', message: `uses '{{${used}}}', which is not declared in variables` });
  }
  if (details.length > 0) throw validationError('Invalid template', details);
}

export class TemplateService {
  constructor(
    private readonly prisma: MessagingPrisma,
    private readonly identity: Identity,
  ) {}

  async list(): Promise<TemplateView[]> {
    assertAllowed(this.identity, 'read', 'template');
    const rows = await this.prisma.messageTemplate.findMany({ where: { tenantId: this.identity.tenantId }, orderBy: [{ id: 'asc' }, { language: 'asc' }] });
    return rows.map(toView);
  }

  /** One template: the requested language, else English, else the first one there is. */
  async get(id: string, language?: string | null): Promise<TemplateView> {
    assertAllowed(this.identity, 'read', 'template');
    const rows = await this.prisma.messageTemplate.findMany({ where: { tenantId: this.identity.tenantId, id }, orderBy: { language: 'asc' } });
    const row = language ? rows.find((r) => r.language === language) : (rows.find((r) => r.language === 'en') ?? rows[0]);
    if (!row) throw notFound('Template', language ? `${id}' in language '${language}` : id);
    return toView(row);
  }

  private assertAdmin(): void {
    assertAllowed(this.identity, 'write', 'template');
  }

  /** A new template (or a new language of an existing id). */
  async create(input: TemplateInput): Promise<TemplateView> {
    this.assertAdmin();
    validateInput(input);
    const language = input.language ?? 'en';
    try {
      const row = await this.prisma.$transaction(async (tx) => {
        const created = await tx.messageTemplate.create({ data: this.rowData(input.id!, language, 1, input) });
        await tx.messageTemplateVersion.create({ data: this.versionData(created) });
        return created;
      });
      return toView(row);
    } catch (err) {
      conflictOnDuplicate(err, `Template '${input.id}' already exists in language '${language}'`);
    }
  }

  /** Publishes a new version; messages already accepted keep the text they were rendered with. */
  async update(id: string, input: TemplateInput): Promise<TemplateView> {
    this.assertAdmin();
    validateInput({ ...input, id });
    const language = input.language ?? 'en';
    const row = await this.prisma.$transaction(async (tx) => {
      const current = await tx.messageTemplate.findUnique({ where: { tenantId_id_language: { tenantId: this.identity.tenantId, id, language } } });
      if (!current) throw notFound('Template', `${id}' in language '${language}`);
      const updated = await tx.messageTemplate.update({
        where: { tenantId_id_language: { tenantId: this.identity.tenantId, id, language } },
        data: this.rowData(id, language, current.version + 1, input),
      });
      await tx.messageTemplateVersion.create({ data: this.versionData(updated) });
      return updated;
    });
    return toView(row);
  }

  private rowData(id: string, language: string, version: number, input: TemplateInput) {
    return {
      tenantId: this.identity.tenantId,
      id,
      language,
      version,
      name: input.name,
      channel: input.channel,
      subject: input.subject ?? null,
      body: input.body,
      variables: input.variables.map((v) => ({ name: v.name, type: v.type, required: v.required })) as unknown as Prisma.InputJsonValue,
    };
  }

  private versionData(row: TemplateRow) {
    return {
      tenantId: row.tenantId,
      templateId: row.id,
      language: row.language,
      version: row.version,
      name: row.name,
      channel: row.channel,
      subject: row.subject,
      body: row.body,
      variables: row.variables as Prisma.InputJsonValue,
      createdBy: this.identity.sub,
    };
  }
}
