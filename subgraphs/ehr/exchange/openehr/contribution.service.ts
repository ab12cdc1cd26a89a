import { randomUUID } from 'node:crypto';
import { AppError, notFound, validationError, type ErrorDetail } from '../../../../common/errors';
import type { CompositionService, PreparedChange } from '../../compositions/composition.service';
import type { TenantStore } from '../../db/store';
import type { EhrService } from '../../records/ehr.service';
import type { OpenEhrResult, OpenEhrService } from './openehr.service';
import { auditDetails, commitAuditOf, type CommitAudit } from './versioning';
import { writeContribution, type ContributionVersion } from '../../records/contributions';

/** openEHR change type codes a CONTRIBUTION version may carry. */
const CHANGE_TYPES: Record<string, PreparedChange['changeType']> = {
  '249': 'creation',
  creation: 'creation',
  '250': 'modification',
  amendment: 'modification',
  '251': 'modification',
  modification: 'modification',
  '523': 'deleted',
  deleted: 'deleted',
};

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * CONTRIBUTION: several versions committed together. Reads name every
 * contribution of an EHR: those committed here, and the one each EHR_STATUS
 * and directory change is committed in. Every version is checked
 * first (policy, template validation, preceding version), then all are written
 * in one transaction with the contribution record, so either all commit or none.
 * Versions hold COMPOSITIONs (creation, modification, deletion).
 */
export class ContributionService {
  constructor(
    private readonly store: TenantStore,
    private readonly ehrs: EhrService,
    private readonly compositions: CompositionService,
    private readonly openehr: OpenEhrService,
    private readonly systemId: string,
  ) {}

  async commit(ehrId: string, body: unknown, reason: string | null): Promise<OpenEhrResult> {
    await this.ehrs.get(ehrId);
    if (!isObject(body) || !Array.isArray(body.versions) || body.versions.length === 0)
      throw validationError('A CONTRIBUTION needs versions (a non-empty array) and an audit', [{ path: 'versions', message: 'non-empty array required' }]);
    if (body.versions.length > 100) throw validationError('At most 100 versions per CONTRIBUTION', [{ path: 'versions', message: 'too many' }]);
    const audit: CommitAudit = commitAuditOf(body.audit);
    const changes: PreparedChange[] = [];
    for (const [index, version] of (body.versions as unknown[]).entries()) {
      changes.push(await this.prepare(ehrId, version, index, audit));
    }
    const uids = new Set(changes.map((c) => c.uid));
    if (uids.size !== changes.length)
      throw validationError('Two versions of the CONTRIBUTION change the same composition version', [{ path: 'versions', message: 'duplicate' }]);
    const id = randomUUID();
    const versions: ContributionVersion[] = changes.map((c) => ({ uid: c.uid, type: 'COMPOSITION', changeType: c.changeType }));
    const row = await this.store.change(reason ?? audit.description, async (tx, auditWriter) => {
      for (const change of changes) await change.write(tx, auditWriter, id);
      const created = await writeContribution(tx, { tenantId: this.store.tenantId, id, ehrId, versions, audit, committer: this.store.identity.sub });
      await auditWriter.record({ action: 'create', entityType: 'Contribution', entityId: id, after: { ehrId, versions } });
      return created;
    });
    return this.result(row);
  }

  async get(ehrId: string, contributionUid: string): Promise<OpenEhrResult> {
    await this.ehrs.get(ehrId);
    const row = await this.store.read((tx) => tx.contribution.findFirst({ where: { id: contributionUid, ehrId } }));
    if (!row) throw notFound('Contribution', contributionUid);
    // Reading a contribution names its versions only; each version's content stays behind its own read policy.
    return this.result(row);
  }

  private result(row: { id: string; versions: unknown; commitAudit: unknown; committer: string; committedAt: Date }): OpenEhrResult {
    const audit = (row.commitAudit ?? {}) as CommitAudit;
    return {
      body: {
        uid: { _type: 'HIER_OBJECT_ID', value: row.id },
        versions: (row.versions as ContributionVersion[]).map((v) => ({
          id: { _type: 'OBJECT_VERSION_ID', value: v.uid },
          namespace: 'local',
          type: v.type,
        })),
        audit: auditDetails(this.systemId, {
          at: row.committedAt,
          changeType: 'creation',
          committer: row.committer,
          claimedCommitter: audit.committer,
          description: audit.description,
        }),
      },
      uid: row.id,
      lastModified: row.committedAt,
    };
  }

  /** One version of the request, checked and ready to write; 400 naming the version on bad input. */
  private async prepare(ehrId: string, version: unknown, index: number, audit: CommitAudit): Promise<PreparedChange> {
    const at = (path: string, message: string): ErrorDetail => ({ path: `versions[${index}]${path}`, message });
    if (!isObject(version)) throw validationError(`versions[${index}] must be a VERSION object`, [at('', 'object expected')]);
    const code = version.commit_audit?.change_type?.defining_code?.code_string ?? version.commit_audit?.change_type?.value;
    const changeType = typeof code === 'string' ? CHANGE_TYPES[code] : undefined;
    if (!changeType)
      throw validationError(`versions[${index}]: commit_audit.change_type must be creation (249), modification (251), amendment (250) or deleted (523)`, [
        at('.commit_audit.change_type', 'unsupported change type'),
      ]);
    const data = version.data;
    if (changeType !== 'deleted' && (!isObject(data) || (data._type !== undefined && data._type !== 'COMPOSITION')))
      throw validationError(`versions[${index}]: data must be a COMPOSITION`, [at('.data', 'COMPOSITION expected')]);
    const preceding = version.preceding_version_uid?.value;
    const commit: CommitAudit = { ...audit, ...commitAuditOf(version.commit_audit) };
    const prepared = await this.prepareChange(ehrId, changeType, data, preceding, commit, index).catch((err) => {
      // Name the version that failed. Invalid content is a 400 here (openEHR's answer for a bad CONTRIBUTION); other codes stay (404, 409, 412…).
      if (err instanceof AppError) {
        const code = err.code === 'COMPOSITION_INVALID' ? 'VALIDATION_ERROR' : err.code;
        throw new AppError(
          code,
          `versions[${index}]: ${err.message}`,
          err.details?.map((d) => ({ ...d, path: `versions[${index}].${d.path ?? ''}` })),
        );
      }
      throw err;
    });
    if (prepared.ehrId !== ehrId) throw notFound('Composition', String(preceding));
    return prepared;
  }

  private async prepareChange(
    ehrId: string,
    changeType: PreparedChange['changeType'],
    data: Record<string, any> | undefined,
    preceding: unknown,
    commit: CommitAudit,
    index: number,
  ): Promise<PreparedChange> {
    if (changeType === 'creation') {
      if (preceding !== undefined)
        throw validationError('A creation has no preceding_version_uid', [{ path: 'preceding_version_uid', message: 'not allowed for creation' }]);
      const input = await this.openehr.inbound(data, null);
      return this.compositions.prepareCreate({ templateId: input.templateId, ehrId, content: input.content }, commit);
    }
    if (typeof preceding !== 'string')
      throw validationError(`versions[${index}]: preceding_version_uid.value is required for a ${changeType}`, [
        { path: 'preceding_version_uid', message: 'required' },
      ]);
    if (changeType === 'deleted') return this.compositions.prepareDelete(preceding, preceding, commit);
    const input = await this.openehr.inbound(data, null);
    return this.compositions.prepareUpdate(preceding, preceding, input.content, commit);
  }
}
