import { AppError, notFound, validationError } from '../../../../common/errors';
import type { ConstraintNode } from '../../clinical/constraints';
import { parseUid, type CompositionService, type CompositionView } from '../../compositions/composition.service';
import type { EhrService, EhrView } from '../../records/ehr.service';
import type { ClinicalTemplateService } from '../../templates/clinical-template.service';
import type { ClinicalTemplate as TemplateRow } from '../../db/generated/client';
import type { AuditVersion } from '../../audit/versions';
import { clinicalTime } from '../content';
import { parseAql } from './aql/parser';
import { candidateTemplates, evaluate, parameterValue, type Parameters, type TemplateInfo } from './aql/evaluate';
import { webTemplate } from './web-template';

/** What one openEHR REST interaction answers: the body plus what goes into ETag, Last-Modified and Location. */
export interface OpenEhrResult {
  body?: unknown;
  /** Version uid of the answered resource (ETag). */
  uid?: string;
  lastModified?: Date;
  /** Path below /openehr/v1. */
  location?: string;
  /** The resource exists but is logically deleted (openEHR answers 204). */
  deleted?: boolean;
}

const SUBJECT_NAMESPACE = 'caregraph';
/** Most compositions one AQL query evaluates after narrowing; beyond it the query must be narrowed. */
const AQL_CAP = 10_000;
const CHANGE_CODES: Record<string, string> = { creation: '249', amendment: '250', modification: '251', deleted: '523' };
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
    private readonly systemId: string,
  ) {}

  // ---- EHR, EHR_STATUS ----------------------------------------------------

  private statusUid(ehrId: string, version: number) {
    return `${ehrId}-status::${this.systemId}::${version}`;
  }

  private ehrBody(ehr: EhrView, statusVersion: number) {
    return {
      system_id: { value: this.systemId },
      ehr_id: { value: ehr.id },
      ehr_status: { id: { _type: 'OBJECT_VERSION_ID', value: this.statusUid(ehr.id, statusVersion) }, namespace: 'local', type: 'EHR_STATUS' },
      time_created: { value: ehr.createdAt.toISOString() },
    };
  }

  private statusBody(ehr: EhrView, version: number, state: { isQueryable: boolean; isModifiable: boolean }) {
    return {
      _type: 'EHR_STATUS',
      archetype_node_id: 'openEHR-EHR-EHR_STATUS.generic.v1',
      name: { value: 'EHR Status' },
      uid: { _type: 'OBJECT_VERSION_ID', value: this.statusUid(ehr.id, version) },
      subject: { external_ref: { id: { _type: 'GENERIC_ID', value: ehr.patientId, scheme: 'id' }, namespace: SUBJECT_NAMESPACE, type: 'PERSON' } },
      is_queryable: state.isQueryable,
      is_modifiable: state.isModifiable,
    };
  }

  private async ehrResult(ehr: EhrView): Promise<OpenEhrResult> {
    const versions = await this.ehrs.statusVersions(ehr.id);
    return { body: this.ehrBody(ehr, Math.max(1, versions.length)), uid: ehr.id, lastModified: ehr.createdAt, location: `/ehr/${ehr.id}` };
  }

  async getEhr(ehrId: string | null, subjectId: string | null, subjectNamespace: string | null): Promise<OpenEhrResult> {
    if (ehrId) return this.ehrResult(await this.ehrs.get(ehrId));
    if (!subjectId || !subjectNamespace) throw validationError('Give subject_id and subject_namespace', [{ path: 'subject_id', message: 'required' }]);
    if (subjectNamespace !== SUBJECT_NAMESPACE) throw notFound('EHR of subject', `${subjectNamespace}:${subjectId}`);
    return this.ehrResult(await this.ehrs.bySubject(subjectId));
  }

  async getEhrStatus(ehrId: string, versionUid: string | null, versionAtTime: string | null): Promise<OpenEhrResult> {
    const ehr = await this.ehrs.get(ehrId);
    const versions = await this.ehrs.statusVersions(ehrId);
    const states = statusStates(versions);
    let chosen = states[states.length - 1];
    if (versionUid) {
      chosen = states.find((s) => this.statusUid(ehrId, s.version) === versionUid)!;
      if (!chosen) throw notFound('EHR_STATUS version', versionUid);
    } else if (versionAtTime) {
      const at = Date.parse(versionAtTime);
      if (Number.isNaN(at)) throw validationError('version_at_time must be an ISO 8601 date-time', [{ path: 'version_at_time', message: 'invalid' }]);
      chosen = [...states].reverse().find((s) => s.at.getTime() <= at)!;
      if (!chosen) throw notFound('EHR_STATUS at', versionAtTime);
    }
    if (!chosen) chosen = { version: 1, at: ehr.createdAt, isQueryable: ehr.status.isQueryable, isModifiable: ehr.status.isModifiable };
    const uid = this.statusUid(ehrId, chosen.version);
    return { body: this.statusBody(ehr, chosen.version, chosen), uid, lastModified: chosen.at, location: `/ehr/${ehrId}/ehr_status/${uid}` };
  }

  async updateEhrStatus(ehrId: string, ifMatch: string, status: unknown, reason: string | null): Promise<OpenEhrResult> {
    if (!isObject(status) || status._type !== 'EHR_STATUS' || typeof status.is_queryable !== 'boolean' || typeof status.is_modifiable !== 'boolean') {
      throw validationError('The body must be an EHR_STATUS with boolean is_queryable and is_modifiable', [{ path: 'is_queryable', message: 'required boolean' }]);
    }
    const ehr = await this.ehrs.get(ehrId);
    const subjectId = status.subject?.external_ref?.id?.value;
    if (subjectId !== undefined && subjectId !== ehr.patientId) throw validationError('The subject of an EHR cannot change', [{ path: 'subject', message: 'differs from the EHR\'s subject' }]);
    const match = /^(.+)::([^:]+)::([1-9]\d{0,8})$/.exec(ifMatch);
    if (!match || match[1] !== `${ehrId}-status` || match[2] !== this.systemId) {
      const current = await this.getEhrStatus(ehrId, null, null);
      throw new AppError('PRECONDITION_FAILED', `If-Match '${ifMatch}' is not a version of this EHR_STATUS; the latest is ${current.uid}`, [{ path: 'If-Match', message: 'not this EHR_STATUS', latestVersionUid: current.uid }]);
    }
    try {
      await this.ehrs.updateStatus(ehrId, { isQueryable: status.is_queryable, isModifiable: status.is_modifiable }, reason, Number(match[3]));
    } catch (err) {
      if (err instanceof AppError && err.code === 'PRECONDITION_FAILED') {
        const current = await this.getEhrStatus(ehrId, null, null);
        throw new AppError('PRECONDITION_FAILED', `'${ifMatch}' is not the latest EHR_STATUS version; the latest is ${current.uid}`, [{ path: 'If-Match', message: 'stale', latestVersionUid: current.uid }]);
      }
      throw err;
    }
    return this.getEhrStatus(ehrId, null, null);
  }

  // ---- COMPOSITION ---------------------------------------------------------

  private async template(templateId: string): Promise<TemplateRow> {
    const template = await this.templates.find(templateId);
    if (!template) throw new AppError('UNKNOWN_TEMPLATE', `Template '${templateId}' is not known in this tenant`, [{ path: 'templateId', message: 'unknown template' }]);
    return template;
  }

  compositionBody(c: CompositionView, template: TemplateRow) {
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

  private async compositionResult(ehrId: string, c: CompositionView): Promise<OpenEhrResult> {
    const template = await this.template(c.templateId);
    return {
      body: c.content ? this.compositionBody(c, template) : undefined,
      uid: c.uid,
      lastModified: c.committedAt,
      location: `/ehr/${ehrId}/composition/${c.uid}`,
      deleted: c.changeType === 'deleted',
    };
  }

  /** The template id and content of a request: a COMPOSITION envelope, or flat content with ?templateId. */
  private inbound(body: unknown, templateId: string | null): { templateId: string; content: Record<string, unknown> } {
    if (!isObject(body)) throw validationError('The body must be a JSON object');
    if (body._type === 'COMPOSITION') {
      const fromBody = body.archetype_details?.template_id?.value;
      if (typeof fromBody !== 'string') throw validationError('COMPOSITION.archetype_details.template_id.value is required', [{ path: 'archetype_details.template_id.value', message: 'required' }]);
      if (templateId && templateId !== fromBody) throw validationError('templateId differs from the composition\'s template_id', [{ path: 'templateId', message: 'mismatch' }]);
      if (!isObject(body.content)) throw validationError('COMPOSITION.content must be the flat content object', [{ path: 'content', message: 'required object' }]);
      return { templateId: fromBody, content: body.content };
    }
    if (!templateId) throw validationError('Send a COMPOSITION envelope, or flat content with the templateId query parameter', [{ path: 'templateId', message: 'required' }]);
    return { templateId, content: body };
  }

  private async inEhr(ehrId: string, uid: string): Promise<CompositionView> {
    await this.ehrs.get(ehrId);
    const composition = await this.compositions.get(uid);
    if (composition.ehrId !== ehrId) throw notFound('Composition', uid);
    return composition;
  }

  async createComposition(ehrId: string, templateId: string | null, body: unknown, reason: string | null): Promise<OpenEhrResult> {
    const input = this.inbound(body, templateId);
    await this.template(input.templateId);
    const created = await this.compositions.create({ templateId: input.templateId, ehrId, content: input.content }, reason);
    return this.compositionResult(ehrId, created);
  }

  /** GET by versioned object uid (latest; deleted → `deleted`) or by version uid. */
  async getComposition(ehrId: string, uid: string): Promise<OpenEhrResult> {
    const ref = parseUid(uid, this.systemId);
    if (!ref) throw notFound('Composition', uid);
    if (ref.version === undefined) {
      const history = await this.history(ehrId, uid);
      return this.compositionResult(ehrId, history[history.length - 1]);
    }
    return this.compositionResult(ehrId, await this.inEhr(ehrId, uid));
  }

  async updateComposition(ehrId: string, versionedObjectUid: string, ifMatch: string, templateId: string | null, body: unknown, reason: string | null): Promise<OpenEhrResult> {
    const history = await this.history(ehrId, versionedObjectUid);
    const latest = history[history.length - 1];
    const input = this.inbound(body, templateId ?? latest.templateId);
    if (input.templateId !== latest.templateId) throw validationError(`A composition keeps its template (${latest.templateId})`, [{ path: 'archetype_details.template_id.value', message: 'differs' }]);
    const updated = await this.compositions.update(latest.id, ifMatch, input.content, reason);
    return this.compositionResult(ehrId, updated);
  }

  async deleteComposition(ehrId: string, precedingVersionUid: string, reason: string | null): Promise<OpenEhrResult> {
    const ref = parseUid(precedingVersionUid, this.systemId);
    if (!ref || ref.version === undefined) throw validationError('DELETE takes the preceding version uid (<uuid>::<system>::<version>)', [{ path: 'preceding_version_uid', message: 'not a version uid' }]);
    const history = await this.history(ehrId, ref.id);
    const latest = history[history.length - 1];
    if (latest.changeType === 'deleted') throw new AppError('CONFLICT', `Composition ${ref.id} is already deleted`, [{ path: 'preceding_version_uid', message: 'already deleted', latestVersionUid: latest.uid }]);
    if (latest.uid !== precedingVersionUid) throw new AppError('CONFLICT', `${precedingVersionUid} is not the latest version; the latest is ${latest.uid}`, [{ path: 'preceding_version_uid', message: 'stale', latestVersionUid: latest.uid }]);
    const deleted = await this.compositions.delete(ref.id, precedingVersionUid, reason);
    return { uid: deleted.uid, lastModified: deleted.committedAt, location: `/ehr/${ehrId}/composition/${deleted.uid}`, deleted: true };
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
    return {
      _type: 'AUDIT_DETAILS',
      system_id: this.systemId,
      time_committed: { value: c.committedAt.toISOString() },
      change_type: { value: c.changeType, defining_code: { terminology_id: { value: 'openehr' }, code_string: CHANGE_CODES[c.changeType] ?? '253' } },
      committer: { _type: 'PARTY_IDENTIFIED', name: c.committer },
    };
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
    return { body: history.map((c) => ({ version_id: { value: c.uid }, audits: [this.audit(c)] })) };
  }

  async compositionVersion(ehrId: string, versionedObjectUid: string, versionUid: string | null, versionAtTime: string | null): Promise<OpenEhrResult> {
    const history = await this.history(ehrId, versionedObjectUid);
    let chosen = history[history.length - 1];
    if (versionUid) {
      chosen = history.find((c) => c.uid === versionUid)!;
      if (!chosen) throw notFound('Composition version', versionUid);
    } else if (versionAtTime) {
      const at = Date.parse(versionAtTime);
      if (Number.isNaN(at)) throw validationError('version_at_time must be an ISO 8601 date-time', [{ path: 'version_at_time', message: 'invalid' }]);
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
        commit_audit: this.audit(chosen),
        lifecycle_state: chosen.changeType === 'deleted'
          ? { value: 'deleted', defining_code: { terminology_id: { value: 'openehr' }, code_string: '523' } }
          : { value: 'complete', defining_code: { terminology_id: { value: 'openehr' }, code_string: '532' } },
        ...(chosen.content ? { data: this.compositionBody(chosen, template) } : {}),
      },
      uid: chosen.uid,
      lastModified: chosen.committedAt,
      location: `/ehr/${ehrId}/versioned_composition/${chosen.id}/version/${chosen.uid}`,
    };
  }

  // ---- DEFINITION ----------------------------------------------------------

  private templateSummary(t: TemplateRow) {
    return { template_id: t.id, concept: t.name, archetype_id: `caregraph:${t.id}`, created_timestamp: t.createdAt.toISOString(), area: t.area };
  }

  async listTemplates(): Promise<OpenEhrResult> {
    return { body: (await this.templates.list()).map((t) => this.templateSummary(t)) };
  }

  async getTemplate(templateId: string, format: 'json' | 'web'): Promise<OpenEhrResult> {
    const t = await this.templates.get(templateId);
    const body = format === 'web' ? webTemplate({ id: t.id, name: t.name, definition: t.definition as unknown as ConstraintNode }) : { template_id: t.id, name: t.name, area: t.area, definition: t.definition };
    return { body, lastModified: t.createdAt, location: `/definition/template/adl1.4/${t.id}` };
  }

  /** Template upload: CareGraph's JSON template ({template_id, name, area, definition}); OPT XML is not read. */
  async uploadTemplate(input: unknown, reason: string | null): Promise<OpenEhrResult> {
    if (!isObject(input)) throw validationError('The body must be a JSON template {template_id, name, area, definition}');
    const unknown = Object.keys(input).filter((k) => !['template_id', 'name', 'area', 'definition'].includes(k));
    if (unknown.length) throw validationError(`Unknown template fields: ${unknown.join(', ')}`, unknown.map((k) => ({ path: k, message: 'unknown field' })));
    const details = ['template_id', 'name', 'area'].filter((k) => typeof input[k] !== 'string').map((k) => ({ path: k, message: 'required string' }));
    if (details.length) throw validationError('Invalid template', details);
    const t = await this.templates.upload({ id: input.template_id, name: input.name, area: input.area, definition: input.definition }, reason);
    return { body: this.templateSummary(t), lastModified: t.createdAt, location: `/definition/template/adl1.4/${t.id}` };
  }

  // ---- AQL -------------------------------------------------------------------

  async query(q: string, parameters: Parameters, offset: number | null, fetch: number | null) {
    const query = parseAql(q);
    if ((offset != null && (!Number.isInteger(offset) || offset < 0)) || (fetch != null && (!Number.isInteger(fetch) || fetch < 1))) {
      throw validationError('offset must be ≥ 0 and fetch ≥ 1', [{ path: 'fetch', message: 'invalid paging' }]);
    }
    const ehrId = query.ehr?.ehrId ? String(parameterValue(query.ehr.ehrId, parameters)) : null;
    const templates: TemplateInfo[] = (await this.templates.list()).map((t) => ({ id: t.id, name: t.name, definition: t.definition as unknown as ConstraintNode }));
    const matching = candidateTemplates(query, parameters, templates);
    const compositions = await this.compositions.scan({ ehrId, templateIds: matching.map((t) => t.id) }, AQL_CAP);
    const result = evaluate(query, parameters, compositions, new Map(matching.map((t) => [t.id, t])));
    const start = offset ?? 0;
    const rows = result.rows.slice(start, fetch ? start + fetch : undefined);
    return {
      meta: { _type: 'RESULTSET', _schema_version: '1.0.3', _created: new Date().toISOString(), _executed_aql: q },
      q,
      columns: result.columns,
      rows,
    };
  }
}

/** EHR_STATUS states per version from its audit trail (creation, then each change). */
function statusStates(versions: AuditVersion[]): Array<{ version: number; at: Date; isQueryable: boolean; isModifiable: boolean }> {
  let state = { isQueryable: true, isModifiable: true };
  return versions.map((v) => {
    const after = (v.after ?? {}) as Record<string, unknown>;
    state = {
      isQueryable: typeof after.isQueryable === 'boolean' ? after.isQueryable : state.isQueryable,
      isModifiable: typeof after.isModifiable === 'boolean' ? after.isModifiable : state.isModifiable,
    };
    return { version: v.version, at: v.at, ...state };
  });
}
