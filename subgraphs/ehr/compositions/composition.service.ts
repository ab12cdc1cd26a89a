import { createHash, randomUUID } from 'node:crypto';
import type { FieldCipher } from '../../../common/crypto';
import { AppError, notFound, validationError } from '../../../common/errors';
import { Prisma, type Composition as CompositionRow, type CompositionVersion as VersionRow } from '../db/generated/client';
import type { AuditWriter, PopulationQuery, TenantStore } from '../db/store';
import type { TenantTx } from '../db/tenant';
import { DATA_AREAS, recordScope, type DataArea } from '../policy/rules';
import type { ConstraintNode } from '../clinical/constraints';
import { validateContent } from '../clinical/validate';
import { validateComposition } from '../clinical/opt/validate';
import { toCanonical } from '../clinical/opt/formats';
import { canonicalToFlat } from '../clinical/opt/flat';
import { simpleView } from '../clinical/simple-forms';
import type { AccessPolicyService } from '../policy/access-policy.service';
import type { ConsentService } from '../consents/consent.service';
import type { ClinicalTemplateService } from '../templates/clinical-template.service';
import { parsePaging, type Page } from '../common/paging';
import { parseBound } from '../common/dates';
import { commitAlone, type AlsoWrite } from '../records/contributions';
import {
  leafSql,
  leafWhere,
  reindex,
  type Candidates,
  type EntryCondition,
  type EntryLeaf,
  type EntryOrder,
  type IndexedComposition,
  type LeafCondition,
} from './clinical-index';
import type { EhrMetrics } from '../metrics';

/**
 * What a caller said about a commit (openEHR-AUDIT_DETAILS and openEHR-VERSION
 * headers, or a CONTRIBUTION's audit), stored with the version it describes.
 */
export interface CommitAudit {
  committer?: string;
  description?: string;
  lifecycleState?: 'complete' | 'incomplete' | 'deleted';
}

/** A checked, encrypted composition change, committed by `write` inside the caller's transaction. */
export interface PreparedChange {
  /** The version uid the change will commit. */
  uid: string;
  /** The EHR the composition belongs to. */
  ehrId: string;
  changeType: 'creation' | 'modification' | 'deleted';
  write(tx: TenantTx, audit: AuditWriter, contributionId: string): Promise<CompositionView>;
}

export interface CompositionView {
  uid: string;
  id: string;
  ehrId: string;
  patientId: string;
  templateId: string;
  area: DataArea;
  version: number;
  changeType: string;
  lifecycleState: 'complete' | 'deleted';
  committedAt: Date;
  committer: string;
  commitAudit: CommitAudit | null;
  contributionId: string | null;
  content: Record<string, unknown> | null;
}

export interface CompositionFilter {
  patientId?: string | null;
  ehrId?: string | null;
  area?: string | null;
  templateId?: string | null;
  /** ISO 8601 bounds on when the composition was first committed. */
  from?: string | null;
  to?: string | null;
  includeDeleted?: boolean | null;
}

/** What the clinical index keeps of a composition and the version being committed. */
function indexed(composition: CompositionRow, version: VersionRow): IndexedComposition {
  const { id: compositionId, ehrId, patientId, templateId, area } = composition;
  return { compositionId, ehrId, patientId, templateId, area, committedAt: version.committedAt };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `<uuid>` or `<uuid>::<system-id>::<version>`; anything else is a 404 (never a 400: uids are opaque). */
export function parseUid(uid: string, systemId: string): { id: string; version?: number } | null {
  if (UUID.test(uid)) return { id: uid };
  const parts = uid.split('::');
  if (parts.length !== 3 || !UUID.test(parts[0]) || parts[1] !== systemId || !/^[1-9]\d{0,8}$/.test(parts[2])) return null;
  return { id: parts[0], version: Number(parts[2]) };
}

/**
 * Compositions as openEHR versions them: a versioned object (uuid) whose every
 * commit is a new immutable version `<uuid>::<system>::<n>`; updates name the
 * version they replace (If-Match), deletion is a final version with no content.
 * Content is validated against the template and stored encrypted.
 */
export class CompositionService {
  constructor(
    private readonly store: TenantStore,
    private readonly cipher: FieldCipher,
    private readonly systemId: string,
    private readonly policy: AccessPolicyService,
    private readonly consents: ConsentService,
    private readonly templates: ClinicalTemplateService,
    private readonly metrics: Pick<EhrMetrics, 'compositionsDecrypted'>,
  ) {}

  private uidOf(id: string, version: number): string {
    return `${id}::${this.systemId}::${version}`;
  }

  private async template(templateId: string) {
    const template = await this.templates.find(templateId);
    if (!template)
      throw new AppError('UNKNOWN_TEMPLATE', `Template '${templateId}' is not known in this tenant`, [
        { path: 'templateId', message: `unknown template ${templateId}` },
      ]);
    return template;
  }

  /**
   * The content to validate and store: for an operational template the
   * canonical COMPOSITION, given as such, as FLAT or STRUCTURED, or in the
   * template's simple form (demo templates), without a client's `uid`
   * (versions are the server's); other templates' content as given.
   */
  private async storedContent(templateId: string, content: unknown): Promise<unknown> {
    const template = await this.template(templateId);
    const operational = this.templates.operational(template);
    if (!operational || typeof content !== 'object' || content === null || Array.isArray(content)) return content;
    const wt = operational.webTemplate;
    const root = wt.tree.id;
    if ('_type' in content) return toCanonical(content, 'JSON', wt);
    if (Object.keys(content).some((key) => key.startsWith(`${root}/`))) return toCanonical(content, 'FLAT', wt);
    const form = this.templates.simpleForm(template);
    // encounter.v1's simple body and its STRUCTURED form share the root key `encounter`: STRUCTURED names template nodes below it.
    const value = (content as Record<string, unknown>)[root];
    const structured = typeof value === 'object' && value !== null && Object.keys(value).some((k) => wt.tree.children?.some((c) => c.id === k));
    if (form && !structured) {
      const details = validateContent(form.definition, content, templateId);
      if (details.length > 0) throw new AppError('COMPOSITION_INVALID', `The content does not conform to template ${templateId}`, details);
      return toCanonical(form.toFlat(content, this.store.identity.sub), 'FLAT', wt);
    }
    return toCanonical(content, 'STRUCTURED', wt);
  }

  /**
   * A composition's content as the CareGraph API shows it: a demo template's
   * simple form when that form holds all of the composition, else as stored
   * (canonical for operational templates).
   */
  async presentedContent(composition: CompositionView): Promise<Record<string, unknown> | null> {
    if (!composition.content) return null;
    const template = await this.templates.find(composition.templateId);
    const form = template ? this.templates.simpleForm(template) : undefined;
    if (!template || !form) return composition.content;
    const flat = canonicalToFlat(composition.content, this.templates.operational(template)!.webTemplate);
    return simpleView(form, flat) ?? composition.content;
  }

  private async validate(templateId: string, content: unknown): Promise<void> {
    const template = await this.template(templateId);
    // An operational template's compositions are canonical RM COMPOSITIONs; CareGraph JSON templates keep their content form.
    const operational = this.templates.operational(template);
    const details = operational
      ? validateComposition(content, operational.webTemplate)
      : validateContent(template.definition as unknown as ConstraintNode, content, templateId);
    if (details.length > 0) throw new AppError('COMPOSITION_INVALID', `The content does not conform to template ${templateId}`, details);
  }

  private async assertRead(area: string, patientId: string, notFoundWhat: string, id: string): Promise<void> {
    const target = { patientId, consents: await this.consents.effective(patientId) };
    const decision = await this.policy.decide('read', area as DataArea, target);
    if (decision.allowed) return;
    if (decision.hide) throw notFound(notFoundWhat, id);
    throw new AppError('FORBIDDEN', `Not allowed: ${decision.reason}`);
  }

  async create(
    input: { templateId: string; ehrId: string; content: unknown },
    reason?: string | null,
    commit?: CommitAudit,
    also?: AlsoWrite<CompositionView>,
  ): Promise<CompositionView> {
    return this.commitInOwnContribution(await this.prepareCreate(input, commit), reason, commit, also);
  }

  async update(
    idOrUid: string,
    ifMatch: string,
    content: unknown,
    reason?: string | null,
    commit?: CommitAudit,
    also?: AlsoWrite<CompositionView>,
  ): Promise<CompositionView> {
    return this.commitInOwnContribution(await this.prepareUpdate(idOrUid, ifMatch, content, commit), reason, commit, also);
  }

  async delete(idOrUid: string, ifMatch: string | null | undefined, reason?: string | null, commit?: CommitAudit): Promise<CompositionView> {
    return this.commitInOwnContribution(await this.prepareDelete(idOrUid, ifMatch, commit), reason, commit);
  }

  /** A change committed in a CONTRIBUTION of its own, as openEHR commits every version. */
  private commitInOwnContribution(
    change: PreparedChange,
    reason: string | null | undefined,
    commit: CommitAudit | undefined,
    also?: AlsoWrite<CompositionView>,
  ): Promise<CompositionView> {
    return commitAlone(this.store, { ...change, type: 'COMPOSITION' }, reason, commit ?? (reason ? { description: reason.slice(0, 1000) } : {}), also);
  }

  /**
   * The checks of a change (policy, template validation, preconditions) and its
   * encryption, done before any transaction; `write` then commits it inside the
   * caller's transaction, so a CONTRIBUTION can commit several changes as one.
   */
  async prepareCreate(input: { templateId: string; ehrId: string; content: unknown }, commit?: CommitAudit): Promise<PreparedChange> {
    const ehr = await this.store.read((tx) => tx.ehr.findFirst({ where: { id: input.ehrId } }));
    if (!ehr) throw notFound('EHR', input.ehrId);
    const hidden = await this.policy.decide('read', 'demographics', { patientId: ehr.patientId });
    if (!hidden.allowed && hidden.hide) throw notFound('EHR', input.ehrId);
    const template = await this.template(input.templateId);
    await this.policy.assert('write', template.area as DataArea, { patientId: ehr.patientId });
    input = { ...input, content: await this.storedContent(template.id, input.content) };
    await this.validate(template.id, input.content);
    if (!ehr.isModifiable) throw new AppError('CONFLICT', `EHR '${ehr.id}' is not modifiable (EHR_STATUS)`);
    const id = randomUUID();
    const contentEnc = this.cipher.encrypt(JSON.stringify(input.content));
    return {
      uid: this.uidOf(id, 1),
      ehrId: ehr.id,
      changeType: 'creation',
      write: async (tx, audit, contributionId) => {
        const composition = await tx.composition.create({
          data: { tenantId: this.store.tenantId, id, ehrId: ehr.id, patientId: ehr.patientId, templateId: template.id, area: template.area, latestVersion: 1 },
        });
        const version = await tx.compositionVersion.create({
          data: {
            tenantId: this.store.tenantId,
            compositionId: id,
            version: 1,
            uid: this.uidOf(id, 1),
            changeType: 'creation',
            contentEnc,
            committer: this.store.identity.sub,
            ...this.commitColumns(commit, contributionId),
          },
        });
        await reindex(tx, indexed(composition, version), input.content);
        await audit.record({ action: 'create', entityType: 'Composition', entityId: id, after: this.snapshot(composition, version) });
        return this.view(composition, version, input.content as Record<string, unknown>);
      },
    };
  }

  async prepareUpdate(idOrUid: string, ifMatch: string, content: unknown, commit?: CommitAudit): Promise<PreparedChange> {
    const { ref, current } = await this.forWrite(idOrUid);
    if (current.deletedAt) throw new AppError('CONFLICT', `Composition '${ref.id}' was deleted`);
    this.checkPrecondition(current, ifMatch);
    content = await this.storedContent(current.templateId, content);
    await this.validate(current.templateId, content);
    const contentEnc = this.cipher.encrypt(JSON.stringify(content));
    return {
      uid: this.uidOf(current.id, current.latestVersion + 1),
      ehrId: current.ehrId,
      changeType: 'modification',
      write: async (tx, audit, contributionId) => {
        const { composition, version } = await this.commit(tx, audit, current, {
          changeType: 'modification',
          contentEnc,
          content,
          deleted: false,
          ...this.commitColumns(commit, contributionId),
        });
        return this.view(composition, version, content as Record<string, unknown>);
      },
    };
  }

  async prepareDelete(idOrUid: string, ifMatch: string | null | undefined, commit?: CommitAudit): Promise<PreparedChange> {
    const { ref, current } = await this.forWrite(idOrUid);
    if (current.deletedAt) throw notFound('Composition', idOrUid);
    // A versioned uid in the path is itself the precondition, as in openEHR's DELETE of a preceding version.
    const precondition = ifMatch ?? (ref.version !== undefined ? idOrUid : undefined);
    if (precondition) this.checkPrecondition(current, precondition);
    return {
      uid: this.uidOf(current.id, current.latestVersion + 1),
      ehrId: current.ehrId,
      changeType: 'deleted',
      write: async (tx, audit, contributionId) => {
        const { composition, version } = await this.commit(tx, audit, current, {
          changeType: 'deleted',
          contentEnc: null,
          content: null,
          deleted: true,
          ...this.commitColumns(commit, contributionId),
        });
        return this.view(composition, version, null);
      },
    };
  }

  /** The composition a uid (versioned or not) names, once the caller may read and write it. */
  private async forWrite(idOrUid: string) {
    const ref = parseUid(idOrUid, this.systemId);
    if (!ref) throw notFound('Composition', idOrUid);
    const current = await this.store.read((tx) => tx.composition.findFirst({ where: { id: ref.id } }));
    if (!current) throw notFound('Composition', idOrUid);
    await this.assertRead(current.area, current.patientId, 'Composition', idOrUid);
    await this.policy.assert('write', current.area as DataArea, { patientId: current.patientId });
    return { ref, current };
  }

  private commitColumns(commit: CommitAudit | undefined, contributionId: string) {
    return {
      ...(commit && Object.keys(commit).length ? { commitAudit: commit as Prisma.InputJsonObject } : {}),
      contributionId,
    };
  }

  private checkPrecondition(current: CompositionRow, ifMatch: string) {
    const expected = this.uidOf(current.id, current.latestVersion);
    if (ifMatch.replace(/^"|"$/g, '') !== expected) {
      throw new AppError('PRECONDITION_FAILED', `'${ifMatch}' is not the latest version of composition ${current.id}; the latest is ${expected}`, [
        { path: 'ifMatch', message: `latest version is ${expected}`, latestVersionUid: expected },
      ]);
    }
  }

  private async commit(
    tx: TenantTx,
    audit: { record: (e: { action: string; entityType: string; entityId: string; before?: unknown; after?: unknown }) => Promise<void> },
    current: CompositionRow,
    change: {
      changeType: string;
      contentEnc: string | null;
      /** The plaintext of contentEnc, for the clinical index. */
      content: unknown;
      deleted: boolean;
      commitAudit?: Prisma.InputJsonObject;
      contributionId?: string;
    },
  ) {
    const next = current.latestVersion + 1;
    // Optimistic lock: only one writer moves the composition from the version it read.
    const moved = await tx.composition.updateManyAndReturn({
      where: { id: current.id, latestVersion: current.latestVersion, deletedAt: null },
      data: { latestVersion: next, ...(change.deleted ? { deletedAt: new Date() } : {}) },
    });
    if (moved.length === 0) {
      throw new AppError('PRECONDITION_FAILED', `Composition ${current.id} changed meanwhile; read the latest version and retry`);
    }
    const previous = await tx.compositionVersion.findFirst({ where: { compositionId: current.id, version: current.latestVersion } });
    const version = await tx.compositionVersion.create({
      data: {
        tenantId: this.store.tenantId,
        compositionId: current.id,
        version: next,
        uid: this.uidOf(current.id, next),
        changeType: change.changeType,
        contentEnc: change.contentEnc,
        committer: this.store.identity.sub,
        ...(change.commitAudit ? { commitAudit: change.commitAudit } : {}),
        ...(change.contributionId ? { contributionId: change.contributionId } : {}),
      },
    });
    await reindex(tx, indexed(moved[0], version), change.deleted ? null : change.content);
    await audit.record({
      action: change.deleted ? 'delete' : 'update',
      entityType: 'Composition',
      entityId: current.id,
      before: previous ? this.snapshot(current, previous) : null,
      after: this.snapshot(moved[0], version),
    });
    return { composition: moved[0], version };
  }

  /** One version by uid; a bare uuid names the latest (404 once deleted), a versioned uid any version. */
  async get(uid: string): Promise<CompositionView> {
    const ref = parseUid(uid, this.systemId);
    if (!ref) throw notFound('Composition', uid);
    const found = await this.store.read(async (tx) => {
      const composition = await tx.composition.findFirst({ where: { id: ref.id } });
      if (!composition || (ref.version === undefined && composition.deletedAt)) return null;
      const version = await tx.compositionVersion.findFirst({ where: { compositionId: ref.id, version: ref.version ?? composition.latestVersion } });
      return version ? { composition, version } : null;
    });
    if (!found) throw notFound('Composition', uid);
    await this.assertRead(found.composition.area, found.composition.patientId, 'Composition', uid);
    await this.store.read((tx) =>
      this.store.logAccess(tx, [
        { entityType: 'Composition', entityId: found.version.uid, patientId: found.composition.patientId, category: found.composition.area },
      ]),
    );
    return this.view(found.composition, found.version);
  }

  /** Which of these data areas of a patient's record the caller may read. */
  async readableAreas(patientId: string, areas: string[]): Promise<Set<string>> {
    const target = { patientId, consents: await this.consents.effective(patientId) };
    const allowed = await Promise.all(areas.map(async (area) => (await this.policy.decide('read', area as DataArea, target)).allowed));
    return new Set(areas.filter((_, i) => allowed[i]));
  }

  /**
   * A composition of an EHR named by its versioned object uid or one version
   * uid, for what is said about it rather than in it (item tags): its content
   * is neither read nor logged; reading needs the right to read it, writing
   * also the right to write it.
   */
  async describedTarget(ehrId: string, uid: string, action: 'read' | 'write'): Promise<{ id: string; patientId: string; area: string }> {
    const ref = parseUid(uid, this.systemId);
    const row = ref && (await this.store.read((tx) => tx.composition.findFirst({ where: { id: ref.id, ehrId } })));
    if (!row || (ref.version !== undefined && ref.version > row.latestVersion)) throw notFound('Composition', uid);
    await this.assertRead(row.area, row.patientId, 'Composition', uid);
    if (action === 'write') await this.policy.assert('write', row.area as DataArea, { patientId: row.patientId });
    return row;
  }

  /** Every version of a composition, oldest first (VERSIONED_COMPOSITION revision history). */
  async history(idOrUid: string): Promise<CompositionView[]> {
    const ref = parseUid(idOrUid, this.systemId);
    if (!ref) throw notFound('Composition', idOrUid);
    const composition = await this.store.read((tx) => tx.composition.findFirst({ where: { id: ref.id } }));
    if (!composition) throw notFound('Composition', idOrUid);
    await this.assertRead(composition.area, composition.patientId, 'Composition', idOrUid);
    const versions = await this.store.read(async (tx) => {
      const rows = await tx.compositionVersion.findMany({ where: { compositionId: ref.id }, orderBy: { version: 'asc' } });
      await this.store.logAccess(tx, [{ entityType: 'VersionedComposition', entityId: ref.id, patientId: composition.patientId, category: composition.area }]);
      return rows;
    });
    return versions.map((v) => this.view(composition, v));
  }

  /** Latest versions of matching compositions, newest first, limited to what the caller may read. */
  async list(filter: CompositionFilter, limit?: number | null, offset?: number | null): Promise<Page<CompositionView>> {
    const paging = parsePaging(limit, offset);
    const scope = await this.readableScope(filter);
    return this.store.read(async (tx) => {
      const where = await scope(tx);
      const [rows, total] = await Promise.all([
        tx.composition.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], take: paging.limit, skip: paging.offset }),
        tx.composition.count({ where }),
      ]);
      return { data: await this.latestViews(tx, rows, 'list'), pagination: { ...paging, total } };
    });
  }

  /**
   * Every readable latest version matching the filter, newest first, for the
   * exchange APIs (FHIR search, AQL) that filter on decrypted content; more
   * than `cap` candidates is refused, so a query must be narrowed. With
   * `logAccess: false` the caller logs what it returns itself (logQueryAccess).
   */
  async scan(filter: ScanFilter, cap: number, options: { logAccess?: boolean; allVersions?: boolean } = {}): Promise<CompositionView[]> {
    if ((filter.templateIds && filter.templateIds.length === 0) || (filter.ids && filter.ids.length === 0)) return [];
    if (filter.ids && filter.ids.length > cap) throw validationError(`More than ${cap} compositions match; narrow the query (patient, EHR or template)`);
    const scope = await this.readableScope(filter);
    const indexed = filter.indexed?.leaves.length ? filter.indexed : undefined;
    return this.store.read(async (tx) => {
      const where: Prisma.CompositionWhereInput = {
        ...(await scope(tx)),
        ...(filter.templateIds ? { templateId: { in: filter.templateIds } } : {}),
        ...(filter.ids ? { id: { in: filter.ids } } : {}),
        ...(indexed
          ? {
              OR: [{ templateId: { notIn: indexed.templateIds } }, { AND: indexed.leaves.map((leaf) => ({ clinicalIndex: { some: leafWhere(leaf) } })) }],
            }
          : {}),
      };
      const rows = await tx.composition.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], take: cap + 1 });
      if (rows.length > cap) throw validationError(`More than ${cap} compositions match; narrow the query (patient, EHR or template)`);
      if (options.allVersions) return this.allViews(tx, rows, cap);
      return this.latestViews(tx, rows, options.logAccess === false ? null : 'list');
    });
  }

  /**
   * Every version of the rows that holds content (a deletion holds none), oldest first per composition, at most
   * `cap` in all; not access-logged (AQL logs what its answer came from).
   */
  private async allViews(tx: TenantTx, rows: CompositionRow[], cap: number): Promise<CompositionView[]> {
    if (rows.length === 0) return [];
    const versions = await tx.compositionVersion.findMany({
      where: { compositionId: { in: rows.map((r) => r.id) }, contentEnc: { not: null } },
      orderBy: [{ compositionId: 'asc' }, { version: 'asc' }],
      take: cap + 1,
    });
    if (versions.length > cap) throw validationError(`More than ${cap} composition versions match; narrow the query (patient, EHR or template)`);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return versions.map((v) => this.view(byId.get(v.compositionId)!, v));
  }

  /**
   * One statement of the caller's over the candidates `scan` would read for
   * the same filter (tenant, policy and consent, non-queryable EHRs,
   * templates, leaves), nothing decrypted: `build` gets the condition that
   * selects them (Candidates).
   */
  async queryCandidates<T>(filter: ScanFilter, build: (candidates: Candidates) => Prisma.Sql): Promise<T[]> {
    if (filter.templateIds && filter.templateIds.length === 0) return [];
    const scope = await this.readableScope(filter);
    const indexed = filter.indexed?.leaves.length ? filter.indexed : undefined;
    return this.store.read(async (tx) => {
      const where = await scope(tx);
      const on = (alias: string) => {
        const conditions = [Prisma.sql`${Prisma.raw(alias)}."tenantId" = ${this.store.tenantId}`, ...scopeSql(where, alias)];
        if (filter.templateIds) conditions.push(Prisma.sql`${Prisma.raw(alias)}."templateId" = ANY(${filter.templateIds}::text[])`);
        return conditions;
      };
      const compositions = on('c');
      if (indexed)
        compositions.push(Prisma.sql`(NOT (c."templateId" = ANY(${indexed.templateIds}::text[])) OR (${Prisma.join(indexed.leaves.map(leafSql), ' AND ')}))`);
      // A composition has index rows exactly while it is live (a deletion removes them), so the scope holds on its rows
      // but for the bounds of its creation time, which they do not carry.
      const onRows = !indexed && where.deletedAt === null && !('createdAt' in where);
      return tx.$queryRaw<T[]>(
        build({
          compositions: Prisma.join(compositions, ' AND '),
          indexRows: onRows ? (alias) => Prisma.join(on(alias), ' AND ') : undefined,
          counts: onRows ? countsScope(this.store.tenantId, where, filter.templateIds) : undefined,
        }),
      );
    });
  }

  /**
   * A page of the top-level entries the clinical index finds (each the first
   * entry of its archetype in a readable latest version), in `order` (ties by
   * id), and how many there are in all. Only the page's compositions are
   * read, decrypted and access-logged.
   */
  async indexedEntries(query: IndexedEntriesQuery): Promise<{ page: Array<{ composition: CompositionView; archetypeId: string }>; total: number }> {
    const { keys, total } = await this.indexedEntryKeys(query);
    const views = new Map((await this.listed([...new Set(keys.map((k) => k.compositionId))])).map((v) => [v.id, v]));
    return { page: keys.map((k) => ({ composition: views.get(k.compositionId)!, archetypeId: k.archetypeId })), total };
  }

  /** The entries indexedEntries finds, as their index keys: nothing is read, decrypted or access-logged. */
  async indexedEntryKeys(query: IndexedEntriesQuery): Promise<{ keys: IndexedEntryKey[]; total: number }> {
    if (query.entries.length === 0) return { keys: [], total: 0 };
    // An unknown (or hidden, or other tenant's) patient matches nothing, as a search should.
    const unknownPatient = (filter: CompositionFilter) => (err: unknown) => {
      if (filter.patientId && err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    };
    const scopes = await Promise.all(query.filters.map((filter) => this.readableScope(filter).catch(unknownPatient(filter))));
    const readable = query.filters.flatMap((filter, i) => {
      const scope = scopes[i];
      return scope ? [(tx: TenantTx) => scope(tx).catch(unknownPatient(filter))] : [];
    });
    return this.store.read(async (tx) => {
      const scoped = (await Promise.all(readable.map((scope) => scope(tx)))).filter((where) => where !== null);
      if (scoped.length === 0) return { keys: [], total: 0 };
      const entryPath = (archetypeId: string) => `/content[${archetypeId}]`;
      const has = (archetypeId: string, leaf: EntryLeaf): Prisma.ClinicalIndexEntryWhereInput => ({
        composition: {
          is: {
            clinicalIndex: {
              some: leaf.ofComposition
                ? { entryArchetypeId: null, path: leaf.path, ...leaf.where }
                : { entryArchetypeId: archetypeId, entryOrdinal: 1, path: entryPath(archetypeId) + leaf.path, ...leaf.where },
            },
          },
        },
      });
      const where: Prisma.ClinicalIndexEntryWhereInput = {
        composition: { is: scoped.length === 1 ? scoped[0] : { OR: scoped } },
        entryOrdinal: 1,
        OR: query.entries.map((e) => ({
          entryArchetypeId: e.archetypeId,
          path: entryPath(e.archetypeId),
          AND: [
            ...(e.requires ?? []).map((l) => has(e.archetypeId, l)),
            ...(e.excludes ?? []).map((l) => ({ NOT: has(e.archetypeId, l) })),
            ...(e.anyOf ?? []).map((tests) => ({ OR: tests.map((t) => (t.absent ? { NOT: has(e.archetypeId, t.leaf) } : has(e.archetypeId, t.leaf))) })),
          ],
        })),
        AND: query.where,
      };
      const orderBy = [...query.order, { key: 'id' as const, descending: false }].flatMap(
        ({ key, descending }): Prisma.ClinicalIndexEntryOrderByWithRelationInput[] => {
          const direction = descending ? 'desc' : 'asc';
          return key === 'id' ? [{ compositionId: direction }, { entryArchetypeId: direction }] : [{ [key]: direction }];
        },
      );
      const [rows, total] = await Promise.all([
        tx.clinicalIndexEntry.findMany({
          where,
          orderBy,
          skip: query.offset,
          take: query.limit,
          select: { compositionId: true, templateId: true, entryArchetypeId: true, effectiveAt: true, committedAt: true },
        }),
        tx.clinicalIndexEntry.count({ where }),
      ]);
      return { keys: rows.map(({ entryArchetypeId, ...key }) => ({ ...key, archetypeId: entryArchetypeId! })), total };
    });
  }

  /** The latest versions of compositions a search found (by indexedEntryKeys): decrypted and access-logged as listed. */
  async listed(ids: string[]): Promise<CompositionView[]> {
    if (ids.length === 0) return [];
    return this.store.read(async (tx) => this.latestViews(tx, await tx.composition.findMany({ where: { id: { in: ids } } }), 'list'));
  }

  /**
   * A population statistic's one access-log entry: the query, with a digest of its text and parameters as the
   * entity id (the same statistic asked again has the same id), and no patient.
   */
  async logPopulationQuery(query: PopulationQuery): Promise<void> {
    const digest = createHash('sha256')
      .update(JSON.stringify([query.language, query.query, query.parameters]))
      .digest('hex');
    await this.store.read((tx) => this.store.logAccess(tx, [{ action: 'query', entityType: 'AqlQuery', entityId: digest, patientId: null, detail: query }]));
  }

  /** Access-log entries (`list`) for the records a query answer was computed from. */
  async logQueryAccess(entries: Array<{ entityType: string; entityId: string; patientId: string }>): Promise<void> {
    if (entries.length === 0) return;
    await this.store.read((tx) =>
      this.store.logAccess(
        tx,
        entries.map((e) => ({ ...e, action: 'list' as const })),
      ),
    );
  }

  /** The `where` of the compositions the caller may read under `filter` (policy decided before the transaction). */
  private async readableScope(filter: CompositionFilter): Promise<(tx: TenantTx) => Promise<Record<string, unknown>>> {
    if (filter.area && !(DATA_AREAS as readonly string[]).includes(filter.area)) throw validationError(`Unknown area '${filter.area}'`);
    const from = parseBound('from', filter.from);
    const to = parseBound('to', filter.to, true);
    let patientId = filter.patientId ?? undefined;
    const identity = this.store.identity;
    if (!patientId && !filter.ehrId) patientId = recordScope(identity);
    if (filter.ehrId) {
      const ehr = await this.store.read((tx) => tx.ehr.findFirst({ where: { id: filter.ehrId! } }));
      if (!ehr || (patientId && ehr.patientId !== patientId)) throw notFound('EHR', filter.ehrId);
      patientId = ehr.patientId;
    }
    const target = patientId ? { patientId, consents: await this.consents.effective(patientId) } : {};
    const candidates = filter.area ? [filter.area as DataArea] : [...DATA_AREAS];
    const decisions = await Promise.all(candidates.map(async (area) => ({ area, decision: await this.policy.decide('read', area, target) })));
    const areas = decisions.filter((d) => d.decision.allowed).map((d) => d.area);
    if (areas.length === 0) {
      const denied = decisions[0].decision;
      if (denied.hide) throw notFound(patientId ? 'Patient' : 'Record', patientId ?? '');
      throw new AppError('FORBIDDEN', `Not allowed: ${denied.reason}`);
    }
    const restricted = patientId ? [] : await this.policy.restrictedPatientIds();
    return async (tx) => {
      if (patientId && !(await tx.patient.findFirst({ where: { id: patientId }, select: { id: true } }))) throw notFound('Patient', patientId);
      const hiddenEhrs = (await tx.ehr.findMany({ where: { isQueryable: false }, select: { id: true } })).map((e) => e.id);
      return {
        area: { in: areas },
        ...(patientId ? { patientId } : { patientId: { notIn: restricted } }),
        ...(filter.templateId ? { templateId: filter.templateId } : {}),
        ...(filter.includeDeleted ? {} : { deletedAt: null }),
        ...(from || to ? { createdAt: { ...(from ? { gte: from } : {}), ...(to ? { lte: to } : {}) } } : {}),
        ...(hiddenEhrs.length > 0 ? { ehrId: { notIn: hiddenEhrs } } : {}),
      };
    };
  }

  /** Views of the rows' latest versions, access-logged. */
  private async latestViews(tx: TenantTx, rows: CompositionRow[], action: 'read' | 'list' | null): Promise<CompositionView[]> {
    const versions = rows.length
      ? await tx.compositionVersion.findMany({ where: { OR: rows.map((r) => ({ compositionId: r.id, version: r.latestVersion })) } })
      : [];
    const byId = new Map(versions.map((v) => [v.compositionId, v]));
    const data = rows.map((row) => this.view(row, byId.get(row.id)!));
    if (action === null) return data;
    await this.store.logAccess(
      tx,
      data.map((c) => ({ entityType: 'Composition', entityId: c.uid, patientId: c.patientId, action, category: c.area })),
    );
    return data;
  }

  /** The audit trail's view of a version: content stays ciphertext. */
  private snapshot(composition: CompositionRow, version: VersionRow) {
    return {
      uid: version.uid,
      ehrId: composition.ehrId,
      templateId: composition.templateId,
      version: version.version,
      changeType: version.changeType,
      contentEnc: version.contentEnc,
    };
  }

  private view(composition: CompositionRow, version: VersionRow, content?: Record<string, unknown> | null): CompositionView {
    return {
      uid: version.uid,
      id: composition.id,
      ehrId: composition.ehrId,
      patientId: composition.patientId,
      templateId: composition.templateId,
      area: composition.area as DataArea,
      version: version.version,
      changeType: version.changeType,
      lifecycleState: version.changeType === 'deleted' ? 'deleted' : 'complete',
      committedAt: version.committedAt,
      committer: version.committer,
      commitAudit: (version.commitAudit as CommitAudit | null) ?? null,
      contributionId: version.contributionId,
      content: content !== undefined ? content : this.decrypt(version.contentEnc),
    };
  }

  private decrypt(contentEnc: string | null): Record<string, unknown> | null {
    if (!contentEnc) return null;
    this.metrics.compositionsDecrypted(1);
    return JSON.parse(this.cipher.decrypt(contentEnc)) as Record<string, unknown>;
  }
}

/** A search of the clinical index's top-level entries (CompositionService.indexedEntries). */
export interface IndexedEntriesQuery {
  /** The compositions searched: those any of these filters selects (one per patient, each with its own access decision). */
  filters: CompositionFilter[];
  entries: EntryCondition[];
  /** Conditions on the entry rows (clinical time, commit time, ids), AND-ed. */
  where: Prisma.ClinicalIndexEntryWhereInput[];
  order: EntryOrder[];
  limit: number;
  offset: number;
}

/** A top-level entry the clinical index found: its composition, template and archetype, clinical and commit times. */
export interface IndexedEntryKey {
  compositionId: string;
  templateId: string;
  archetypeId: string;
  effectiveAt: Date;
  committedAt: Date;
}

export type ScanFilter = CompositionFilter & {
  templateIds?: string[];
  /** Only these compositions (versioned object ids). */
  ids?: string[];
  /** Leaves the compositions of `templateIds` must have in the clinical index (their content is indexed leaf by leaf). */
  indexed?: { templateIds: string[]; leaves: LeafCondition[] };
};

/**
 * A readable scope as kept counts of values apply it (Candidates.counts): tenant, data areas and templates on the
 * counts; restricted patients and non-queryable EHRs as the index rows whose values are subtracted (found by
 * patient, the index's key: a hidden EHR by its patient). Undefined for any other form of scope.
 */
function countsScope(tenantId: string, where: Record<string, any>, templateIds: string[] | undefined): Candidates['counts'] {
  const { area, patientId, templateId, deletedAt, ehrId, ...other } = where;
  if (Object.keys(other).length > 0 || deletedAt !== null || !Array.isArray(area?.in) || !Array.isArray(patientId?.notIn)) return undefined;
  if (templateId !== undefined && typeof templateId !== 'string') return undefined;
  if (ehrId !== undefined && !Array.isArray(ehrId.notIn)) return undefined;
  const restricted: string[] = patientId.notIn;
  const hidden: string[] = ehrId?.notIn ?? [];
  return {
    on: (alias) => {
      const a = Prisma.raw(alias);
      return Prisma.join(
        [
          Prisma.sql`${a}."tenantId" = ${tenantId}`,
          Prisma.sql`${a}."area" = ANY(${area.in}::text[])`,
          ...(templateId !== undefined ? [Prisma.sql`${a}."templateId" = ${templateId}`] : []),
          ...(templateIds ? [Prisma.sql`${a}."templateId" = ANY(${templateIds}::text[])`] : []),
        ],
        ' AND ',
      );
    },
    excluded:
      restricted.length || hidden.length
        ? (alias) => {
            const a = Prisma.raw(alias);
            return Prisma.sql`${a}."patientId" = ANY(ARRAY(SELECT h."patientId" FROM "ehr"."Ehr" h WHERE h."tenantId" = ${tenantId} AND h."id" = ANY(${hidden}::text[])) || ${restricted}::text[])
              AND (${a}."patientId" = ANY(${restricted}::text[]) OR ${a}."ehrId" = ANY(${hidden}::text[]))`;
          }
        : undefined,
  };
}

/**
 * readableScope's `where` as SQL conditions on `alias`: a composition (`c`), or one of its index rows, which carry
 * the same tenant, patient, EHR, template and area columns and exist only while it is live (deletedAt is not
 * tested there). The same keys, or an error (a key added there must be added here).
 */
function scopeSql(where: Record<string, any>, alias: string): Prisma.Sql[] {
  return Object.entries(where).flatMap(([key, value]) => {
    const column = Prisma.raw(`${alias}."${key}"`);
    if (key === 'deletedAt' && value === null) return alias === 'c' ? [Prisma.sql`${column} IS NULL`] : [];
    if (typeof value === 'string') return Prisma.sql`${column} = ${value}`;
    if (key === 'createdAt')
      return Prisma.join(
        [...(value.gte ? [Prisma.sql`${column} >= ${value.gte}`] : []), ...(value.lte ? [Prisma.sql`${column} <= ${value.lte}`] : [])],
        ' AND ',
      );
    if (Array.isArray(value.in)) return Prisma.sql`${column} = ANY(${value.in}::text[])`;
    if (Array.isArray(value.notIn)) return Prisma.sql`NOT (${column} = ANY(${value.notIn}::text[]))`;
    throw new Error(`readable scope: no SQL for ${key}`);
  });
}
