import type { ConcurrencyGate } from '../../../../common/concurrency-gate';
import { AppError, notFound, validationError } from '../../../../common/errors';
import type { ConstraintNode } from '../../clinical/constraints';
import { parseUid, type CompositionService, type CompositionView, type ScanFilter } from '../../compositions/composition.service';
import {
  commitAuditIn,
  isRegisteredPatients,
  subjectOf,
  type EhrService,
  type EhrView,
  type LatestStatus,
  type NewEhr,
  type StatusChange,
  type Subject,
} from '../../records/ehr.service';
import { canonicalRm } from '../../clinical/opt/rm-shape';
import type { ClinicalTemplateService } from '../../templates/clinical-template.service';
import type { ClinicalTemplate as TemplateRow } from '../../db/generated/client';
import type { AuditVersion } from '../../audit/versions';
import { clinicalTime } from '../content';
import { parseAql, type AqlQuery } from './aql/parser';
import { Evaluator, type Parameters, type ResultColumn } from './aql/evaluate';
import {
  archetypeIdsOf,
  asksEveryVersion,
  leafConditions,
  namedEhr,
  readsCompositions,
  readsEhrStatus,
  readsFiledCompositionsOnly,
  readsFolders,
  requiresComposition,
  requiresFolder,
  templateCanMatch,
  templateInWhere,
} from './aql/narrow';
import type { DirectoryService } from './directory.service';
import { buildUniverse, filedCompositionIds, type QueriedComposition } from './aql/universe';
import { compileToSql, POPULATION_MIN_PATIENTS, type SqlRow } from './aql/compile-sql';
import type { WebNode } from '../../clinical/opt/web-template';
import { webTemplate } from './web-template';
import { compositionFromXml, compositionToXml } from '../../clinical/opt/rm-xml';
import { compositionFormat, fromCanonical, toCanonical, withoutStaticTypes, type CompositionFormat } from '../../clinical/opt/formats';
import { exampleFlat } from '../../clinical/opt/example';
import { flatToCanonical, flatToStructured } from '../../clinical/opt/flat';
import { auditDetails, LIFECYCLE, objectId, parseTime, nameUuid, type CommitAudit, type CompositionCommit, type TagWriter } from './versioning';
import type { AuditWriter } from '../../db/store';
import type { TenantTx } from '../../db/tenant';
import { statusVersionUid } from '../../records/contributions';

/** What one openEHR interaction answers: the body, its version uid and time (the REST adapter's ETag, Last-Modified and Location). */
export interface OpenEhrResult {
  body?: unknown;
  /** Version uid of the answered resource (the EHR id for an EHR). */
  uid?: string;
  lastModified?: Date;
  /** The resource exists but is logically deleted (openEHR answers 204). */
  deleted?: boolean;
  /** A version's item tags, read when asked for. */
  itemTags?: () => Promise<{ versionedObject: unknown[]; version: unknown[] }>;
}

/** Most compositions one AQL query evaluates after narrowing; beyond it the query must be narrowed. */
const AQL_CAP = 10_000;
const GENERATOR = 'CareGraph/0.1.0';
/** `<uuid>::<system>::<version>` naming a system other than this one: no version of it can be stored here. */
const FOREIGN_VERSION_UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}::[^:]+::[1-9]\d{0,8}$/i;
const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * openEHR REST (Release 1.0.3 shapes) over the clinical record. Compositions
 * travel in the platform's flat content JSON inside a COMPOSITION envelope
 * (docs/exchange.md); every write goes through the record's own services.
 */
export class OpenEhrService {
  constructor(
    private readonly ehrs: EhrService,
    private readonly compositions: CompositionService,
    private readonly templates: ClinicalTemplateService,
    private readonly directories: DirectoryService,
    private readonly systemId: string,
    /** AQL runs in turns shared by the process; a query waiting for one leaves at the request's deadline. */
    private readonly aqlTurns: { gate: ConcurrencyGate; signal?: AbortSignal },
  ) {}

  // ---- EHR, EHR_STATUS ----------------------------------------------------

  /** The versioned EHR_STATUS object's id: a UUID named after the EHR and this system. */
  private statusObjectId(ehrId: string) {
    return this.statusUid(ehrId, 1).split('::')[0];
  }

  private statusUid(ehrId: string, version: number) {
    return statusVersionUid(this.systemId, ehrId, version);
  }

  private ehrBody(ehr: EhrView, statusVersion: number) {
    return {
      system_id: { value: nameUuid(this.systemId) },
      ehr_id: { value: ehr.id },
      ehr_status: { id: { _type: 'OBJECT_VERSION_ID', value: this.statusUid(ehr.id, statusVersion) }, namespace: 'local', type: 'EHR_STATUS' },
      time_created: { value: ehr.createdAt.toISOString() },
    };
  }

  /**
   * The EHR_STATUS of a version: as its writer sent it (other_details, the subject's reference as written…)
   * with this version's uid and flags; an EHR_STATUS nobody wrote is made from the EHR.
   */
  private statusBody(ehr: EhrView, version: number, state: { isQueryable: boolean; isModifiable: boolean }, written?: Record<string, unknown>) {
    return {
      _type: 'EHR_STATUS',
      archetype_node_id: 'openEHR-EHR-EHR_STATUS.generic.v1',
      name: { _type: 'DV_TEXT', value: 'EHR Status' },
      ...written,
      uid: { _type: 'OBJECT_VERSION_ID', value: this.statusUid(ehr.id, version) },
      subject: written?.subject ?? this.partySelf(ehr),
      is_queryable: state.isQueryable,
      is_modifiable: state.isModifiable,
    };
  }

  /** The EHR's subject as a PARTY_SELF; an EHR without one keeps the bare PARTY_SELF (the RM's anonymous subject). */
  private partySelf(ehr: EhrView) {
    const subject = subjectOf(ehr);
    return subject
      ? { _type: 'PARTY_SELF', external_ref: { id: objectId(subject.id), namespace: subject.namespace, type: 'PERSON' } }
      : { _type: 'PARTY_SELF' };
  }

  private async ehrResult(ehr: EhrView): Promise<OpenEhrResult> {
    await this.ehrs.logRead(ehr);
    const versions = await this.ehrs.statusVersions(ehr.id);
    return { body: this.ehrBody(ehr, Math.max(1, versions.length)), uid: ehr.id, lastModified: ehr.createdAt };
  }

  async getEhr(ehrId: string | null, subjectId: string | null, subjectNamespace: string | null): Promise<OpenEhrResult> {
    if (ehrId) return this.ehrResult(await this.ehrs.get(ehrId));
    if (!subjectId || !subjectNamespace) throw validationError('Give subject_id and subject_namespace', [{ path: 'subject_id', message: 'required' }]);
    return this.ehrResult(await this.ehrs.bySubject(subjectId, subjectNamespace));
  }

  /**
   * POST /ehr (ehrId null) or PUT /ehr/{ehrId}, with an optional EHR_STATUS, kept as written. A given one must
   * carry both flags, which the RM makes mandatory; without a body the EHR gets a bare status, queryable and modifiable.
   */
  async createEhr(ehrId: string | null, status: unknown, reason: string | null, commit?: CommitAudit): Promise<OpenEhrResult> {
    const written = status == null ? this.writtenStatus({ _type: 'EHR_STATUS' }, false) : this.writtenStatus(status, true);
    const isQueryable = typeof written.status.is_queryable === 'boolean' ? written.status.is_queryable : true;
    const isModifiable = typeof written.status.is_modifiable === 'boolean' ? written.status.is_modifiable : true;
    const input: NewEhr = {
      ...(ehrId ? { ehrId } : {}),
      ...(written.subject ? { subject: written.subject } : {}),
      isQueryable,
      isModifiable,
      written: { subject: { _type: 'PARTY_SELF' }, ...written.status, is_queryable: isQueryable, is_modifiable: isModifiable },
    };
    return this.ehrResult(await this.ehrs.create(input, reason, commit));
  }

  /**
   * An EHR_STATUS body checked as the RM defines it (attributes and their types by the published schema,
   * other_details included; a subject's external_ref with an id and namespace), without its `uid` (each
   * version gets its own), and the subject it names: null for a bare PARTY_SELF, undefined when it names none.
   */
  private writtenStatus(status: unknown, flagsRequired: boolean): { status: Record<string, unknown>; subject: Subject | null | undefined } {
    if (!isObject(status) || status._type !== 'EHR_STATUS')
      throw validationError('The body must be an EHR_STATUS', [{ path: '_type', message: 'EHR_STATUS expected' }]);
    const flags = ['is_queryable', 'is_modifiable'].filter((k) => (flagsRequired || status[k] !== undefined) && typeof status[k] !== 'boolean');
    if (flags.length)
      throw validationError(
        flagsRequired ? 'The body must be an EHR_STATUS with boolean is_queryable and is_modifiable' : 'is_queryable and is_modifiable are booleans',
        flags.map((k) => ({ path: k, message: 'boolean expected' })),
      );
    const { uid: _uid, ...given }: Record<string, unknown> = {
      archetype_node_id: 'openEHR-EHR-EHR_STATUS.generic.v1',
      name: { _type: 'DV_TEXT', value: 'EHR Status' },
      ...status,
    };
    const { value, errors } = canonicalRm(given, 'EHR_STATUS');
    if (errors.length) throw validationError(`The EHR_STATUS is not valid: ${errors[0].path} ${errors[0].message}`, errors);
    const kept = value as Record<string, any>;
    if (kept.subject === undefined) return { status: kept, subject: undefined };
    const ref = kept.subject.external_ref;
    if (ref === undefined) return { status: kept, subject: null };
    if (typeof ref.id?.value !== 'string' || !ref.id.value || !ref.namespace)
      throw validationError('subject.external_ref needs id.value and namespace', [
        { path: 'subject.external_ref', message: 'id.value and namespace required' },
      ]);
    return { status: kept, subject: { id: ref.id.value, namespace: ref.namespace } };
  }

  /** Every EHR_STATUS version of a readable EHR, oldest first (the creation counts as version 1). */
  private async statusHistory(ehrId: string) {
    const ehr = await this.ehrs.read(ehrId);
    const versions = await this.ehrs.statusVersions(ehrId);
    const states = statusStates(versions);
    if (!states.length)
      states.push({
        version: 1,
        at: ehr.createdAt,
        isQueryable: ehr.status.isQueryable,
        isModifiable: ehr.status.isModifiable,
        actor: 'system',
        reason: null,
        contributionId: null,
      });
    return { ehr, states };
  }

  /** A readable EHR with the uids that name its EHR_STATUS: the versioned object's and each version's. */
  async statusUids(ehrId: string): Promise<{ ehr: EhrView; uids: string[] }> {
    const { ehr, states } = await this.statusHistory(ehrId);
    return { ehr, uids: [this.statusObjectId(ehrId), ...states.map((s) => this.statusUid(ehrId, s.version))] };
  }

  /** The EHR_STATUS version a request names: by version uid, at a time, or the latest. */
  private async statusVersion(ehrId: string, versionUid: string | null, versionAtTime: string | null) {
    const { ehr, states } = await this.statusHistory(ehrId);
    let chosen = states[states.length - 1];
    if (versionUid) {
      chosen = states.find((s) => this.statusUid(ehrId, s.version) === versionUid)!;
      if (!chosen) throw notFound('EHR_STATUS version', versionUid);
    } else if (versionAtTime) {
      const at = parseTime(versionAtTime);
      chosen = [...states].reverse().find((s) => s.at.getTime() <= at)!;
      if (!chosen) throw notFound('EHR_STATUS at', versionAtTime);
    }
    return { ehr, chosen, states };
  }

  async getEhrStatus(ehrId: string, versionUid: string | null, versionAtTime: string | null): Promise<OpenEhrResult> {
    const { ehr, chosen } = await this.statusVersion(ehrId, versionUid, versionAtTime);
    const uid = this.statusUid(ehrId, chosen.version);
    return { body: this.statusBody(ehr, chosen.version, chosen, chosen.written), uid, lastModified: chosen.at };
  }

  // ---- VERSIONED_EHR_STATUS ----------------------------------------------------

  async versionedEhrStatus(ehrId: string): Promise<OpenEhrResult> {
    const { ehr, states } = await this.statusHistory(ehrId);
    return {
      body: {
        _type: 'VERSIONED_EHR_STATUS',
        uid: { _type: 'HIER_OBJECT_ID', value: this.statusObjectId(ehrId) },
        owner_id: { id: { _type: 'HIER_OBJECT_ID', value: ehrId }, namespace: 'local', type: 'EHR' },
        time_created: { value: ehr.createdAt.toISOString() },
      },
      lastModified: states[states.length - 1].at,
    };
  }

  async ehrStatusRevisionHistory(ehrId: string): Promise<OpenEhrResult> {
    const { states } = await this.statusHistory(ehrId);
    const items = states.map((s) => ({
      version_id: { value: this.statusUid(ehrId, s.version) },
      audits: [this.statusAudit(s)],
    }));
    return { body: { _type: 'REVISION_HISTORY', items } };
  }

  async ehrStatusVersion(ehrId: string, versionUid: string | null, versionAtTime: string | null): Promise<OpenEhrResult> {
    const { ehr, chosen } = await this.statusVersion(ehrId, versionUid, versionAtTime);
    return { body: this.statusVersionBody(ehr, chosen), uid: this.statusUid(ehrId, chosen.version), lastModified: chosen.at };
  }

  /** An EHR_STATUS version as an ORIGINAL_VERSION, as `…/versioned_ehr_status/version` answers it and AQL's `VERSION` finds it. */
  private statusVersionBody(ehr: EhrView, chosen: LatestStatus & { isQueryable: boolean; isModifiable: boolean }) {
    const uid = this.statusUid(ehr.id, chosen.version);
    return {
      _type: 'ORIGINAL_VERSION',
      uid: { _type: 'OBJECT_VERSION_ID', value: uid },
      ...(chosen.version > 1 ? { preceding_version_uid: { _type: 'OBJECT_VERSION_ID', value: this.statusUid(ehr.id, chosen.version - 1) } } : {}),
      // Versions committed before EHR_STATUS changes were contributions name themselves.
      contribution: { id: { _type: 'HIER_OBJECT_ID', value: chosen.contributionId ?? uid }, namespace: 'local', type: 'CONTRIBUTION' },
      commit_audit: this.statusAudit(chosen),
      lifecycle_state: LIFECYCLE[chosen.commitAudit?.lifecycleState ?? 'complete'],
      data: this.statusBody(ehr, chosen.version, chosen, chosen.written),
    };
  }

  /** An EHR_STATUS version's AUDIT_DETAILS: the committer and description the commit named, else its subject and reason. */
  private statusAudit(s: Pick<LatestStatus, 'version' | 'at' | 'actor' | 'reason' | 'commitAudit'>) {
    return auditDetails(this.systemId, {
      at: s.at,
      changeType: s.version === 1 ? 'creation' : 'modification',
      committer: s.actor,
      claimedCommitter: s.commitAudit?.committer,
      description: s.commitAudit?.description ?? s.reason,
    });
  }

  async updateEhrStatus(
    ehrId: string,
    ifMatch: string,
    status: unknown,
    reason: string | null,
    commit?: CommitAudit,
    tags?: TagWriter,
  ): Promise<OpenEhrResult> {
    const change = await this.statusChange(ehrId, status);
    const version = await this.statusVersionNamed(ehrId, ifMatch);
    try {
      await this.ehrs.updateStatus(
        ehrId,
        change,
        reason,
        version,
        commit,
        tags &&
          ((tx, audit, { row, version: written }) =>
            tags(tx, audit, {
              ehrId,
              patientId: row.patientId,
              area: null,
              versionedObjectUid: this.statusObjectId(ehrId),
              versionUid: this.statusUid(ehrId, written),
            })),
      );
    } catch (err) {
      if (err instanceof AppError && err.code === 'PRECONDITION_FAILED') {
        const current = await this.getEhrStatus(ehrId, null, null);
        throw new AppError('PRECONDITION_FAILED', `'${ifMatch}' is not the latest EHR_STATUS version; the latest is ${current.uid}`, [
          { path: 'If-Match', message: 'stale', latestVersionUid: current.uid },
        ]);
      }
      throw err;
    }
    return this.getEhrStatus(ehrId, null, null);
  }

  /**
   * The change a written EHR_STATUS makes: its flags, and the status as written with the subject it names. No
   * subject, or a bare PARTY_SELF on a registered patient's EHR, keeps the EHR's own (which the version then shows).
   */
  async statusChange(ehrId: string, status: unknown): Promise<StatusChange> {
    const written = this.writtenStatus(status, true);
    const ehr = await this.ehrs.get(ehrId);
    const keep = written.subject === undefined || (written.subject === null && isRegisteredPatients(ehr));
    return {
      isQueryable: written.status.is_queryable as boolean,
      isModifiable: written.status.is_modifiable as boolean,
      written: keep
        ? { status: { ...written.status, subject: this.partySelf(ehr) }, subject: subjectOf(ehr) }
        : { status: written.status, subject: written.subject! },
    };
  }

  /** The version number an EHR_STATUS version uid names; 412 naming the latest when it is no version of this EHR's status. */
  async statusVersionNamed(ehrId: string, versionUid: string): Promise<number> {
    const match = /^(.+)::([^:]+)::([1-9]\d{0,8})$/.exec(versionUid);
    if (!match || match[1] !== this.statusObjectId(ehrId) || match[2] !== this.systemId) {
      const current = await this.getEhrStatus(ehrId, null, null);
      throw new AppError('PRECONDITION_FAILED', `If-Match '${versionUid}' is not a version of this EHR_STATUS; the latest is ${current.uid}`, [
        { path: 'If-Match', message: 'not this EHR_STATUS', latestVersionUid: current.uid },
      ]);
    }
    return Number(match[3]);
  }

  // ---- COMPOSITION ---------------------------------------------------------

  private async template(templateId: string): Promise<TemplateRow> {
    const template = await this.templates.find(templateId);
    if (!template)
      throw new AppError('UNKNOWN_TEMPLATE', `Template '${templateId}' is not known in this tenant`, [{ path: 'templateId', message: 'unknown template' }]);
    return template;
  }

  /** The composition in the requested format: canonical RM for an operational template, the legacy envelope otherwise. */
  compositionBody(c: CompositionView, template: TemplateRow, format: CompositionFormat = 'JSON') {
    const operational = this.templates.operational(template);
    if (operational) return fromCanonical(c.content!, c.uid, format, operational.webTemplate);
    if (format !== 'JSON')
      throw validationError(`${format} needs an operational template; ${template.id} is a CareGraph JSON template`, [
        { path: 'format', message: 'not available' },
      ]);
    return {
      _type: 'COMPOSITION',
      name: { value: template.name },
      uid: { _type: 'OBJECT_VERSION_ID', value: c.uid },
      archetype_details: { template_id: { value: c.templateId }, rm_version: '1.0.4' },
      language: { terminology_id: { value: 'ISO_639-1' }, code_string: 'en' },
      territory: { terminology_id: { value: 'ISO_3166-1' }, code_string: 'NL' },
      category: { value: 'event', defining_code: { terminology_id: { value: 'openehr' }, code_string: '433' } },
      composer: { _type: 'PARTY_IDENTIFIED', name: c.committer },
      context: { start_time: { value: clinicalTime(template.definition as unknown as ConstraintNode, c.content) ?? c.committedAt.toISOString() } },
      content: c.content,
    };
  }

  private async compositionResult(ehrId: string, c: CompositionView, format: CompositionFormat = 'JSON'): Promise<OpenEhrResult> {
    const template = await this.template(c.templateId);
    return {
      body: c.content ? this.compositionBody(c, template, format) : undefined,
      uid: c.uid,
      lastModified: c.committedAt,
      deleted: c.changeType === 'deleted',
    };
  }

  /**
   * The template id and content of a request. Operational templates: a
   * canonical COMPOSITION, or FLAT / STRUCTURED with ?templateId, stored as
   * canonical RM. CareGraph JSON templates: a COMPOSITION envelope, or flat
   * content with ?templateId.
   */
  async inbound(
    body: unknown,
    templateId: string | null,
    format: CompositionFormat = 'JSON',
  ): Promise<{ templateId: string; content: Record<string, unknown> }> {
    // Canonical XML names its template like canonical JSON does.
    if (format === 'XML') {
      if (typeof body !== 'string') throw validationError('An XML composition is the XML document, sent as application/xml');
      return this.inbound(compositionFromXml(body), templateId);
    }
    if (!isObject(body)) throw validationError('The body must be a JSON object');
    if (format !== 'JSON') {
      if (!templateId) throw validationError(`${format} compositions need the templateId query parameter`, [{ path: 'templateId', message: 'required' }]);
      const operational = this.templates.operational(await this.template(templateId));
      if (!operational)
        throw validationError(`${format} needs an operational template; ${templateId} is a CareGraph JSON template`, [
          { path: 'format', message: 'not available' },
        ]);
      return { templateId, content: toCanonical(body, format, operational.webTemplate) };
    }
    const declared = body._type === 'COMPOSITION' ? body.archetype_details?.template_id?.value : undefined;
    const operational = typeof declared === 'string' ? this.templates.operational(await this.template(declared)) : undefined;
    if (operational) {
      if (templateId && templateId !== declared)
        throw validationError("templateId differs from the composition's template_id", [{ path: 'templateId', message: 'mismatch' }]);
      // CareGraph's envelope around a demo template's simple form (its content an object, not RM content items).
      if (isObject(body.content) && this.templates.simpleForm(await this.template(declared))) return { templateId: declared, content: body.content };
      return { templateId: declared, content: toCanonical(body, 'JSON', operational.webTemplate) };
    }
    if (body._type === 'COMPOSITION') {
      const fromBody = body.archetype_details?.template_id?.value;
      if (typeof fromBody !== 'string')
        throw validationError('COMPOSITION.archetype_details.template_id.value is required', [
          { path: 'archetype_details.template_id.value', message: 'required' },
        ]);
      if (templateId && templateId !== fromBody)
        throw validationError("templateId differs from the composition's template_id", [{ path: 'templateId', message: 'mismatch' }]);
      if (!isObject(body.content))
        throw validationError('COMPOSITION.content must be the flat content object', [{ path: 'content', message: 'required object' }]);
      return { templateId: fromBody, content: body.content };
    }
    if (!templateId)
      throw validationError('Send a COMPOSITION envelope, or flat content with the templateId query parameter', [{ path: 'templateId', message: 'required' }]);
    return { templateId, content: body };
  }

  private async inEhr(ehrId: string, uid: string): Promise<CompositionView> {
    await this.ehrs.get(ehrId);
    const composition = await this.compositions.get(uid);
    if (composition.ehrId !== ehrId) throw notFound('Composition', uid);
    return composition;
  }

  async createComposition(ehrId: string, commit: CompositionCommit, tags?: TagWriter): Promise<OpenEhrResult> {
    const chosen = compositionFormat(commit.format);
    const input = await this.inbound(commit.body, commit.templateId, chosen);
    await this.template(input.templateId);
    const created = await this.compositions.create(
      { templateId: input.templateId, ehrId, content: input.content },
      commit.reason,
      commit.audit,
      compositionTags(tags),
    );
    return this.compositionResult(ehrId, created, chosen);
  }

  /** GET by versioned object uid (latest; deleted → `deleted`) or by version uid. */
  async getComposition(ehrId: string, uid: string, format: string | null = null): Promise<OpenEhrResult> {
    const chosen = compositionFormat(format);
    const ref = parseUid(uid, this.systemId);
    if (!ref) throw notFound('Composition', uid);
    if (ref.version === undefined) {
      const history = await this.history(ehrId, uid);
      return this.compositionResult(ehrId, history[history.length - 1], chosen);
    }
    return this.compositionResult(ehrId, await this.inEhr(ehrId, uid), chosen);
  }

  async updateComposition(ehrId: string, versionedObjectUid: string, ifMatch: string, commit: CompositionCommit, tags?: TagWriter): Promise<OpenEhrResult> {
    const chosen = compositionFormat(commit.format);
    const history = await this.history(ehrId, versionedObjectUid);
    const latest = history[history.length - 1];
    const input = await this.inbound(commit.body, commit.templateId ?? latest.templateId, chosen);
    if (input.templateId !== latest.templateId)
      throw validationError(`A composition keeps its template (${latest.templateId})`, [{ path: 'archetype_details.template_id.value', message: 'differs' }]);
    const updated = await this.compositions.update(latest.id, ifMatch, input.content, commit.reason, commit.audit, compositionTags(tags));
    return this.compositionResult(ehrId, updated, chosen);
  }

  /**
   * DELETE names the latest version: 404 when no such composition is here (a version uid of another system
   * included), 400 when it is already deleted or the uid is malformed, 409 when another version is the latest.
   */
  async deleteComposition(ehrId: string, precedingVersionUid: string, reason: string | null, commit?: CommitAudit): Promise<OpenEhrResult> {
    const ref = parseUid(precedingVersionUid, this.systemId);
    if (!ref && FOREIGN_VERSION_UID.test(precedingVersionUid)) throw notFound('Versioned composition', precedingVersionUid);
    if (!ref || ref.version === undefined)
      throw validationError('DELETE takes the preceding version uid (<uuid>::<system>::<version>)', [
        { path: 'preceding_version_uid', message: 'not a version uid' },
      ]);
    const history = await this.history(ehrId, ref.id);
    const latest = history[history.length - 1];
    if (latest.changeType === 'deleted')
      throw new AppError('VALIDATION_ERROR', `Composition ${ref.id} is already deleted`, [
        { path: 'preceding_version_uid', message: 'already deleted', latestVersionUid: latest.uid },
      ]);
    if (latest.uid !== precedingVersionUid)
      throw new AppError('CONFLICT', `${precedingVersionUid} is not the latest version; the latest is ${latest.uid}`, [
        { path: 'preceding_version_uid', message: 'stale', latestVersionUid: latest.uid },
      ]);
    const deleted = await this.compositions.delete(ref.id, precedingVersionUid, reason, commit);
    return { uid: deleted.uid, lastModified: deleted.committedAt, deleted: true };
  }

  // ---- VERSIONED_COMPOSITION ------------------------------------------------

  private async history(ehrId: string, versionedObjectUid: string): Promise<CompositionView[]> {
    const ref = parseUid(versionedObjectUid, this.systemId);
    if (!ref) throw notFound('Versioned composition', versionedObjectUid);
    await this.ehrs.get(ehrId);
    const versions = await this.compositions.history(ref.id);
    if (versions[0].ehrId !== ehrId) throw notFound('Versioned composition', versionedObjectUid);
    return versions;
  }

  private audit(c: CompositionView) {
    return auditDetails(this.systemId, {
      at: c.committedAt,
      changeType: c.changeType,
      committer: c.committer,
      claimedCommitter: c.commitAudit?.committer,
      description: c.commitAudit?.description,
    });
  }

  async versionedComposition(ehrId: string, versionedObjectUid: string): Promise<OpenEhrResult> {
    const history = await this.history(ehrId, versionedObjectUid);
    const first = history[0];
    return {
      body: {
        _type: 'VERSIONED_COMPOSITION',
        uid: { _type: 'HIER_OBJECT_ID', value: first.id },
        owner_id: { id: { _type: 'HIER_OBJECT_ID', value: ehrId }, namespace: 'local', type: 'EHR' },
        time_created: { value: first.committedAt.toISOString() },
      },
      lastModified: history[history.length - 1].committedAt,
    };
  }

  async revisionHistory(ehrId: string, versionedObjectUid: string): Promise<OpenEhrResult> {
    const history = await this.history(ehrId, versionedObjectUid);
    return { body: { _type: 'REVISION_HISTORY', items: history.map((c) => ({ version_id: { value: c.uid }, audits: [this.audit(c)] })) } };
  }

  async compositionVersion(ehrId: string, versionedObjectUid: string, versionUid: string | null, versionAtTime: string | null): Promise<OpenEhrResult> {
    const history = await this.history(ehrId, versionedObjectUid);
    let chosen = history[history.length - 1];
    if (versionUid) {
      chosen = history.find((c) => c.uid === versionUid)!;
      if (!chosen) throw notFound('Composition version', versionUid);
    } else if (versionAtTime) {
      const at = parseTime(versionAtTime);
      chosen = [...history].reverse().find((c) => c.committedAt.getTime() <= at)!;
      if (!chosen) throw notFound('Composition version at', versionAtTime);
    }
    const template = await this.template(chosen.templateId);
    const preceding = history.find((c) => c.version === chosen.version - 1);
    return {
      body: {
        _type: 'ORIGINAL_VERSION',
        uid: { _type: 'OBJECT_VERSION_ID', value: chosen.uid },
        ...(preceding ? { preceding_version_uid: { _type: 'OBJECT_VERSION_ID', value: preceding.uid } } : {}),
        contribution: { id: { _type: 'HIER_OBJECT_ID', value: chosen.contributionId ?? chosen.uid }, namespace: 'local', type: 'CONTRIBUTION' },
        commit_audit: this.audit(chosen),
        lifecycle_state: LIFECYCLE[chosen.changeType === 'deleted' ? 'deleted' : (chosen.commitAudit?.lifecycleState ?? 'complete')],
        ...(chosen.content ? { data: this.compositionBody(chosen, template) } : {}),
      },
      uid: chosen.uid,
      lastModified: chosen.committedAt,
    };
  }

  // ---- DEFINITION ----------------------------------------------------------

  private templateSummary(t: TemplateRow) {
    const operational = this.templates.operational(t);
    return {
      template_id: t.id,
      concept: t.name,
      archetype_id: operational ? operational.opt.definition.nodeId : `caregraph:${t.id}`,
      created_timestamp: t.createdAt.toISOString(),
      area: t.area,
      format: operational ? 'OPT 1.4' : 'CareGraph JSON',
    };
  }

  async listTemplates(): Promise<OpenEhrResult> {
    return { body: (await this.templates.list()).map((t) => this.templateSummary(t)) };
  }

  /** A template: an OPT as its XML (`xml`) or web template (`web`); a CareGraph JSON template as JSON or web template. */
  async getTemplate(templateId: string, format: 'json' | 'web' | 'xml'): Promise<OpenEhrResult> {
    const t = await this.templates.get(templateId);
    const operational = this.templates.operational(t);
    if (operational) return { body: format === 'web' ? operational.webTemplate : t.opt, lastModified: t.createdAt };
    const body =
      format === 'web'
        ? webTemplate({ id: t.id, name: t.name, definition: t.definition as unknown as ConstraintNode })
        : { template_id: t.id, name: t.name, area: t.area, definition: t.definition };
    return { body, lastModified: t.createdAt };
  }

  /** An example composition of an operational template, in the requested format. */
  async templateExample(templateId: string, format: string | null): Promise<OpenEhrResult> {
    const chosen = compositionFormat(format);
    const t = await this.templates.get(templateId);
    const operational = this.templates.operational(t);
    if (!operational) throw validationError(`Examples are generated for operational templates; ${templateId} is a CareGraph JSON template`);
    const flat = exampleFlat(operational.webTemplate, new Date());
    const { uid: _uid, ...composition } = flatToCanonical(flat, operational.webTemplate);
    const body =
      chosen === 'FLAT'
        ? flat
        : chosen === 'STRUCTURED'
          ? flatToStructured(flat)
          : chosen === 'XML'
            ? compositionToXml(composition)
            : withoutStaticTypes(composition);
    return { body };
  }

  /** Template upload: an OPT 1.4 (XML string), or CareGraph's JSON template ({template_id, name, area, definition}). */
  async uploadTemplate(input: unknown, reason: string | null): Promise<OpenEhrResult> {
    if (typeof input === 'string') {
      const t = await this.templates.uploadOpt(input, reason);
      return { body: this.templateSummary(t), uid: t.id, lastModified: t.createdAt };
    }
    if (!isObject(input)) throw validationError('The body must be a JSON template {template_id, name, area, definition}');
    const unknown = Object.keys(input).filter((k) => !['template_id', 'name', 'area', 'definition'].includes(k));
    if (unknown.length)
      throw validationError(
        `Unknown template fields: ${unknown.join(', ')}`,
        unknown.map((k) => ({ path: k, message: 'unknown field' })),
      );
    const details = ['template_id', 'name', 'area'].filter((k) => typeof input[k] !== 'string').map((k) => ({ path: k, message: 'required string' }));
    if (details.length) throw validationError('Invalid template', details);
    const t = await this.templates.upload({ id: input.template_id, name: input.name, area: input.area, definition: input.definition }, reason);
    return { body: this.templateSummary(t), lastModified: t.createdAt };
  }

  // ---- AQL -------------------------------------------------------------------

  /**
   * `context`: the EHR the caller runs the query in (openEHR's `ehr_id`), besides any the query names itself.
   * Candidates are narrowed in SQL (tenant, policy and consent, EHR, templates the FROM clause can match,
   * values WHERE requires of indexed leaves: aql/narrow.ts leafConditions),
   * decrypted and evaluated in memory; the access log records the compositions (or EHRs) the answer was
   * computed from, not every candidate.
   */
  async query(q: string, parameters: Parameters, offset: number | null, fetch: number | null, context: string | null = null) {
    const query = parseAql(q);
    return this.aqlTurns.gate.run(() => this.answer(q, query, parameters, offset, fetch, context), this.aqlTurns.signal);
  }

  private async answer(q: string, query: AqlQuery, parameters: Parameters, offset: number | null, fetch: number | null, context: string | null) {
    if ((offset != null && (!Number.isInteger(offset) || offset < 0)) || (fetch != null && (!Number.isInteger(fetch) || fetch < 1))) {
      throw validationError('offset must be ≥ 0 and fetch ≥ 1', [{ path: 'fetch', message: 'invalid paging' }]);
    }
    const named = namedEhr(query.from, query.where, parameters);
    const allVersions = asksEveryVersion(query.from);
    const templateRows = await this.templates.list();
    const pinned = templateInWhere(query.from, query.where, parameters);
    const matching = templateRows.filter(
      (t) => (pinned === undefined || t.id === pinned) && templateCanMatch(query.from, parameters, t.id, this.archetypesOf(t)),
    );
    const ehrId = context ?? named;
    const filter: ScanFilter = {
      ehrId,
      templateIds: matching.map((t) => t.id),
      indexed: {
        templateIds: matching.filter((t) => this.templates.operational(t)).map((t) => t.id),
        leaves: leafConditions(query.from, query.where, parameters),
      },
    };
    const trees = matching.map((t) => this.templates.operational(t)?.webTemplate.tree);
    const compiled = matching.length > 0 && !(context && named && context !== named) && trees.every((t) => t !== undefined);
    const sql = compiled ? compileToSql(query, parameters, trees) : undefined;
    if (sql) {
      // The named EHR is policy-checked as the in-memory path checks it.
      if (ehrId) await this.ehrs.get(ehrId);
      // The leaf narrowing only repeats what WHERE requires; an answer that does not depend on order needs none.
      const found = await this.compositions.queryCandidates<SqlRow>(sql.ordered ? filter : { ...filter, indexed: undefined }, sql.statement);
      const sources = new Map(found.flatMap((r) => r.src).map(([uid, patientId]) => [uid, { entityType: 'Composition', entityId: uid, patientId }]));
      // A row of aggregates counts what it covers (its sources are listed only for a few patients).
      const covered = found.find((r) => r.patients !== undefined);
      const patients = covered?.patients ?? new Set([...sources.values()].map((s) => s.patientId)).size;
      await this.logAnswer(query, q, parameters, [...sources.values()], patients, covered?.compositions ?? sources.size, covered?.patientsExact ?? true);
      return this.resultSet(
        q,
        sql.columns,
        found.map((r) => sql.columns.map((_, i) => r[`v${i}`] ?? null)),
        offset,
        fetch,
      );
    }
    // A query naming another EHR than its context matches nothing; one whose FROM names no class below the EHR reads no composition.
    const nowhere = !!(context && named && context !== named);
    // One that reads compositions only inside folders reads the directories it may see first: their compositions are the candidates.
    const filingEhrs =
      !nowhere && readsCompositions(query.from) && readsFiledCompositionsOnly(query.from)
        ? ehrId
          ? [await this.ehrs.get(ehrId)]
          : await this.ehrs.queryable(AQL_CAP, { withDirectory: true })
        : undefined;
    const filing = filingEhrs && (await this.directories.latestTrees(filingEhrs.map((e) => e.id)));
    const candidates = filing ? { ...filter, ids: [...new Set([...filing.values()].flatMap((d) => filedCompositionIds(d.root)))] } : filter;
    // Every version: the clinical index holds the latest ones' leaves only, so it narrows nothing here.
    const scanned =
      nowhere || !readsCompositions(query.from)
        ? []
        : await this.compositions.scan(allVersions ? { ...candidates, indexed: undefined } : candidates, AQL_CAP, { logAccess: false, allVersions });
    const latest = new Map<string, number>();
    for (const c of scanned) latest.set(c.id, Math.max(latest.get(c.id) ?? 0, c.version));
    const byId = new Map(templateRows.map((t) => [t.id, t]));
    const compositions: QueriedComposition[] = await Promise.all(
      scanned.map(async (c) => {
        const template = byId.get(c.templateId)!;
        const form = this.templates.simpleForm(template);
        const simple = form
          ? { definition: form.definition, content: await this.compositions.presentedContent(c) }
          : this.templates.operational(template)
            ? undefined
            : { definition: template.definition as unknown as ConstraintNode, content: c.content };
        return { uid: c.uid, ehrId: c.ehrId, patientId: c.patientId, version: this.versionBody(c, template), simple, prior: c.version < latest.get(c.id)! };
      }),
    );
    // EHRs: the named one (even without compositions; policy-checked); else, where FROM binds EHRs without
    // compositions, every EHR the caller may query (with a directory, where every binding holds a FOLDER); else those
    // of the compositions the caller may read, loaded in one batched statement.
    // (The EHRs read for the directories above serve again where they are the same set.)
    const ehrs = nowhere
      ? []
      : ehrId
        ? (filingEhrs ?? [await this.ehrs.get(ehrId)])
        : !requiresComposition(query.from)
          ? requiresFolder(query.from)
            ? (filingEhrs ?? (await this.ehrs.queryable(AQL_CAP, { withDirectory: true })))
            : await this.ehrs.queryable(AQL_CAP)
          : (await Promise.all([...new Set(scanned.map((c) => c.patientId))].map((id) => this.ehrs.forPatient(id)))).filter((e) => e !== null);
    // The EHR_STATUS as written, and its latest VERSION (`VERSION v CONTAINS EHR_STATUS s`), only for a query that can see them.
    const statuses = readsEhrStatus(query, q) ? await this.ehrs.latestStatuses(ehrs.map((e) => e.id)) : undefined;
    const directories = readsFolders(query.from) ? (filing ?? (await this.directories.latestTrees(ehrs.map((e) => e.id)))) : undefined;
    const universe = buildUniverse(
      ehrs.map((e) => {
        const directory = directories?.get(e.id);
        const latest = statuses && {
          ...e.status,
          ...(statuses.get(e.id) ?? { version: 1, at: e.createdAt, actor: 'system', reason: null, contributionId: null }),
        };
        if (!latest) return { ehrId: e.id, patientId: e.patientId, ehr: this.ehrBody(e, 1), status: this.statusBody(e, 1, e.status), directory };
        const version = this.statusVersionBody(e, latest);
        return { ehrId: e.id, patientId: e.patientId, ehr: this.ehrBody(e, latest.version), status: version.data, statusVersion: version, directory };
      }),
      compositions,
    );
    const result = new Evaluator(query, parameters, universe).run();
    const patients = new Set(result.sources.map((s) => s.patientId)).size;
    await this.logAnswer(query, q, parameters, result.sources, patients, result.sources.filter((s) => s.entityType === 'Composition').length, true);
    return this.resultSet(q, result.columns, result.rows, offset, fetch);
  }

  /**
   * The access log of an answer: an entry for each composition, directory or EHR it was computed from; or, for
   * aggregates alone over POPULATION_MIN_PATIENTS patients or more (a population statistic, which shows no
   * patient's data), one entry for the query (docs/security.md "Access log").
   */
  private async logAnswer(
    query: AqlQuery,
    q: string,
    parameters: Parameters,
    sources: Array<{ entityType: string; entityId: string; patientId: string }>,
    patients: number,
    compositions: number,
    patientsExact: boolean,
  ): Promise<void> {
    const population = query.select.every((s) => s.expr.kind === 'aggregate') && patients >= POPULATION_MIN_PATIENTS;
    const bound = patientsExact ? {} : { patientsExact };
    if (population) await this.compositions.logPopulationQuery({ language: 'AQL', query: q, parameters, patients, ...bound, compositions });
    else await this.compositions.logQueryAccess(sources);
  }

  /** The RESULTSET of a query's rows, paged by the request's offset and fetch. */
  private resultSet(q: string, columns: ResultColumn[], all: unknown[][], offset: number | null, fetch: number | null) {
    const start = offset ?? 0;
    const rows = all.slice(start, fetch ? start + fetch : undefined);
    return {
      meta: {
        _type: 'RESULTSET',
        _schema_version: '1.0.3',
        _created: new Date().toISOString(),
        _generator: GENERATOR,
        _executed_aql: q,
        resultsize: rows.length,
        offset: start,
        ...(fetch ? { fetch } : {}),
      },
      q,
      columns,
      rows,
    };
  }

  /** An ORIGINAL_VERSION with its COMPOSITION, as GET …/versioned_composition/{uid}/version answers it. */
  private versionBody(c: CompositionView, template: TemplateRow) {
    return {
      _type: 'ORIGINAL_VERSION',
      uid: { _type: 'OBJECT_VERSION_ID', value: c.uid },
      contribution: { id: { _type: 'HIER_OBJECT_ID', value: c.contributionId ?? c.uid }, namespace: 'local', type: 'CONTRIBUTION' },
      commit_audit: this.audit(c),
      lifecycle_state: LIFECYCLE[c.commitAudit?.lifecycleState ?? 'complete'],
      data: this.compositionBody(c, template),
    };
  }

  /** The archetype ids a template uses (slots of slots included), for narrowing by the FROM clause. */
  private archetypesOf(t: TemplateRow): Set<string> {
    const found = new Set<string>();
    const operational = this.templates.operational(t);
    if (operational) {
      const visit = (node: WebNode) => {
        if (node.nodeId?.startsWith('openEHR-')) found.add(node.nodeId);
        node.children?.forEach(visit);
      };
      visit(operational.webTemplate.tree);
    }
    const form = this.templates.simpleForm(t);
    const definition = (form?.definition ?? t.definition) as unknown as ConstraintNode;
    archetypeIdsOf(definition, found);
    return found;
  }
}

/** A composition commit's tag writer, given the version the commit wrote. */
const compositionTags = (tags: TagWriter | undefined) =>
  tags &&
  ((tx: TenantTx, audit: AuditWriter, c: CompositionView) =>
    tags(tx, audit, { ehrId: c.ehrId, patientId: c.patientId, area: c.area, versionedObjectUid: c.id, versionUid: c.uid }));

/** EHR_STATUS states per version from its audit trail (creation, then each change). */
function statusStates(versions: Array<AuditVersion & { written?: Record<string, unknown> }>): Array<{
  version: number;
  at: Date;
  isQueryable: boolean;
  isModifiable: boolean;
  actor: string;
  reason: string | null;
  contributionId: string | null;
  commitAudit?: CommitAudit;
  written?: Record<string, unknown>;
}> {
  let state = { isQueryable: true, isModifiable: true };
  return versions.map((v) => {
    const after = v.after ?? {};
    state = {
      isQueryable: typeof after.isQueryable === 'boolean' ? after.isQueryable : state.isQueryable,
      isModifiable: typeof after.isModifiable === 'boolean' ? after.isModifiable : state.isModifiable,
    };
    const contributionId = typeof after.contributionId === 'string' ? after.contributionId : null;
    return { version: v.version, at: v.at, actor: v.actor, reason: v.reason, contributionId, ...commitAuditIn(after), written: v.written, ...state };
  });
}
