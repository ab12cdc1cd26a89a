import { createHash } from 'node:crypto';
import { AppError, notFound, validationError } from '../../../common/errors';
import type { ClinicalTemplate as TemplateRow } from '../db/generated/client';
import type { TenantStore } from '../db/store';
import { assertCan, DATA_AREAS } from '../policy/rules';
import { canonicalJson } from '../audit/chain';
import type { ConstraintNode } from '../clinical/constraints';
import { validateDefinition } from '../clinical/validate';
import { conflictOnDuplicate } from '../../../common/db/unique-violation';
import { areaOf, operational, type Operational } from '../clinical/opt/operational';
import { simpleFormOf, type SimpleForm } from '../clinical/simple-forms';

/** openEHR template ids are free text (`IDCR - Problem List.v1`); CareGraph bounds their length and characters. */
const OPT_TEMPLATE_ID = /^[^\p{Cc}/\\?#%]{1,250}$/u;
/** What marks a row's `definition` when the template is an OPT. */
export const OPT_DEFINITION = { type: 'opt' } as const;

/** `<concept>.v<n>`: the version is part of the id, so a new version never replaces an old one. */
const TEMPLATE_ID = /^[a-z][a-z0-9_]{0,63}\.v[1-9][0-9]{0,3}$/;

export interface TemplateUpload {
  id: string;
  name: string;
  area: string;
  definition: unknown;
}

/** Operational templates of the caller's tenant; immutable once uploaded. */
export class ClinicalTemplateService {
  private readonly cache = new Map<string, Promise<TemplateRow | null>>();

  constructor(private readonly store: TenantStore) {}

  find(id: string): Promise<TemplateRow | null> {
    let hit = this.cache.get(id);
    if (!hit) {
      hit = this.store.read((tx) => tx.clinicalTemplate.findFirst({ where: { id } }));
      this.cache.set(id, hit);
    }
    return hit;
  }

  async get(id: string): Promise<TemplateRow> {
    const row = await this.find(id);
    if (!row) throw notFound('Template', id);
    return row;
  }

  list(area?: string | null): Promise<TemplateRow[]> {
    return this.store.read((tx) => tx.clinicalTemplate.findMany({ where: area ? { area } : {}, orderBy: { id: 'asc' } }));
  }

  /** The parsed OPT and web template of an operational template row; undefined for a CareGraph JSON template. */
  operational(row: TemplateRow): Operational | undefined {
    return row.opt ? operational(row.opt) : undefined;
  }

  /** The simple content form of a demo operational template (docs/clinical-record.md), if the row is one. */
  simpleForm(row: TemplateRow): SimpleForm | undefined {
    const operational = this.operational(row);
    return operational ? simpleFormOf(row.id, operational.webTemplate.tree.id) : undefined;
  }

  /**
   * Upload of an operational template (OPT 1.4 XML). Its id is the OPT's
   * template_id; an existing id is 409 (templates are immutable: a change is a
   * new template id), as the openEHR REST API answers.
   */
  async uploadOpt(xml: string, reason?: string | null): Promise<TemplateRow> {
    assertCan(this.store.identity, 'manageTemplates');
    const { opt } = operational(xml);
    if (!OPT_TEMPLATE_ID.test(opt.templateId))
      throw validationError('Invalid template_id', [{ path: 'template_id', message: '1..250 characters, no control characters, /, \\, ?, # or %' }]);
    if (await this.find(opt.templateId))
      throw new AppError('CONFLICT', `Template '${opt.templateId}' exists and templates are immutable: upload it under a new template_id`);
    const area = areaOf(opt);
    const row = await this.store
      .change(reason, async (tx, audit) => {
        const created = await tx.clinicalTemplate.create({
          data: {
            tenantId: this.store.tenantId,
            id: opt.templateId,
            name: opt.concept,
            area,
            definition: OPT_DEFINITION,
            opt: xml,
            createdBy: this.store.identity.sub,
          },
        });
        const digest = createHash('sha256').update(xml).digest('hex');
        await audit.record({
          action: 'create',
          entityType: 'ClinicalTemplate',
          entityId: opt.templateId,
          after: { name: opt.concept, area, format: 'OPT 1.4', sha256: digest },
        });
        return created;
      })
      .catch((err) => conflictOnDuplicate(err, `Template '${opt.templateId}' already exists`));
    this.cache.set(opt.templateId, Promise.resolve(row));
    return row;
  }

  async upload(input: TemplateUpload, reason?: string | null): Promise<TemplateRow> {
    assertCan(this.store.identity, 'manageTemplates');
    const details = [];
    if (!TEMPLATE_ID.test(input.id)) details.push({ path: 'id', message: 'must be <name>.v<version>, e.g. vital_signs.v2' });
    if (!input.name.trim() || input.name.length > 200) details.push({ path: 'name', message: 'must be 1..200 characters' });
    if (!(DATA_AREAS as readonly string[]).includes(input.area)) details.push({ path: 'area', message: `must be one of ${DATA_AREAS.join(', ')}` });
    const checked = validateDefinition(input.definition);
    details.push(...checked.details);
    if (details.length > 0) throw validationError('Invalid template', details);
    const definition = checked.definition as ConstraintNode;

    const existing = await this.find(input.id);
    if (existing) {
      // Re-uploading the identical template is a no-op; anything else must be a new version.
      if (existing.name === input.name && existing.area === input.area && canonicalJson(existing.definition) === canonicalJson(definition)) return existing;
      throw new AppError('CONFLICT', `Template '${input.id}' exists and templates are immutable: upload a new version (e.g. ${nextVersion(input.id)})`);
    }
    const row = await this.store
      .change(reason, async (tx, audit) => {
        const created = await tx.clinicalTemplate.create({
          data: {
            tenantId: this.store.tenantId,
            id: input.id,
            name: input.name,
            area: input.area,
            // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc rejects the recursive ConstraintNode as Prisma JSON input without it
            definition: definition as object,
            createdBy: this.store.identity.sub,
          },
        });
        await audit.record({ action: 'create', entityType: 'ClinicalTemplate', entityId: input.id, after: { name: input.name, area: input.area, definition } });
        return created;
      })
      .catch((err) => conflictOnDuplicate(err, `Template '${input.id}' already exists`));
    this.cache.set(input.id, Promise.resolve(row));
    return row;
  }
}

function nextVersion(id: string): string {
  const [name, version] = id.split(/\.v(?=\d+$)/);
  return version ? `${name}.v${Number(version) + 1}` : `${id}.v1`;
}
