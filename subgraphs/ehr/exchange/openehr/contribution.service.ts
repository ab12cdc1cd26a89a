import { randomUUID } from 'node:crypto';
import { AppError, notFound, validationError, type ErrorDetail } from '../../../../common/errors';
import type { CompositionService, PreparedChange } from '../../compositions/composition.service';
import type { TenantStore } from '../../db/store';
import type { EhrService } from '../../records/ehr.service';
import type { OpenEhrResult, OpenEhrService } from './openehr.service';
import { auditDetails, commitAuditOf, type CommitAudit } from './versioning';
import { writeContribution, type ContributionVersion, type PreparedVersion } from '../../records/contributions';
import type { DirectoryService } from './directory.service';

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

/**
 * An error of one version, named by its index. Invalid content is a 400 (openEHR's answer for a bad
 * CONTRIBUTION), and a preceding version that is not the latest a 409: the published CONTRIBUTION
 * API answers 201, 400, 404 or 409. Other codes stay.
 */
function versionError(index: number, err: unknown): Error {
  if (!(err instanceof AppError)) return err instanceof Error ? err : new Error(String(err));
  const code = err.code === 'COMPOSITION_INVALID' ? 'VALIDATION_ERROR' : err.code === 'PRECONDITION_FAILED' ? 'CONFLICT' : err.code;
  return new AppError(
    code,
    `versions[${index}]: ${err.message}`,
    err.details?.map((d) => ({ ...d, path: `versions[${index}].${d.path ?? ''}` })),
  );
}

/** The RM types a CONTRIBUTION version may hold. */
const VERSIONED_TYPES = ['COMPOSITION', 'FOLDER', 'EHR_STATUS'];

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * CONTRIBUTION: several versions committed together. Reads name every
 * contribution of an EHR: those committed here, and the one each EHR_STATUS
 * and directory change is committed in. Every version is checked
 * first (policy, template validation, preceding version), then all are written
 * in one transaction with the contribution record, so either all commit or none.
 * Versions hold COMPOSITIONs (creation, modification, deletion), the EHR's
 * directory FOLDER (creation, modification, deletion) or its EHR_STATUS
 * (modification: an EHR has one from its creation to the end).
 */
export class ContributionService {
  constructor(
    private readonly store: TenantStore,
    private readonly ehrs: EhrService,
    private readonly compositions: CompositionService,
    private readonly openehr: OpenEhrService,
    private readonly directories: DirectoryService,
    private readonly systemId: string,
  ) {}

  async commit(ehrId: string, body: unknown, reason: string | null): Promise<OpenEhrResult> {
    await this.ehrs.get(ehrId);
    if (!isObject(body) || !Array.isArray(body.versions) || body.versions.length === 0)
      throw validationError('A CONTRIBUTION needs versions (a non-empty array) and an audit', [{ path: 'versions', message: 'non-empty array required' }]);
    if (body.versions.length > 100) throw validationError('At most 100 versions per CONTRIBUTION', [{ path: 'versions', message: 'too many' }]);
    const audit: CommitAudit = commitAuditOf(body.audit);
    const changes: PreparedVersion[] = [];
    for (const [index, version] of (body.versions as unknown[]).entries()) {
      changes.push(await this.prepare(ehrId, version, index, audit));
    }
    // One version per versioned object: a second change of the same object would need the first as its preceding version.
    const objects = new Set(changes.map((c) => c.uid.split('::')[0]));
    if (objects.size !== changes.length)
      throw validationError('Two versions of the CONTRIBUTION change the same versioned object', [{ path: 'versions', message: 'duplicate' }]);
    const id = randomUUID();
    const versions: ContributionVersion[] = changes.map((c) => ({ uid: c.uid, type: c.type, changeType: c.changeType }));
    const row = await this.store.change(reason ?? audit.description, async (tx, auditWriter) => {
      for (const [index, change] of changes.entries()) await change.write(tx, auditWriter, id).catch((err) => Promise.reject(versionError(index, err)));
      const created = await writeContribution(tx, { tenantId: this.store.tenantId, id, ehrId, versions, audit, committer: this.store.identity.sub });
      await auditWriter.record({ action: 'create', entityType: 'Contribution', entityId: id, after: { ehrId, versions } });
      return created;
    });
    for (const change of changes) change.committed?.();
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
  private async prepare(ehrId: string, version: unknown, index: number, audit: CommitAudit): Promise<PreparedVersion> {
    const at = (path: string, message: string): ErrorDetail => ({ path: `versions[${index}]${path}`, message });
    if (!isObject(version)) throw validationError(`versions[${index}] must be a VERSION object`, [at('', 'object expected')]);
    const code = version.commit_audit?.change_type?.defining_code?.code_string ?? version.commit_audit?.change_type?.value;
    const changeType = typeof code === 'string' ? CHANGE_TYPES[code] : undefined;
    if (!changeType)
      throw validationError(`versions[${index}]: commit_audit.change_type must be creation (249), modification (251), amendment (250) or deleted (523)`, [
        at('.commit_audit.change_type', 'unsupported change type'),
      ]);
    const data = version.data;
    if (changeType !== 'deleted' && (!isObject(data) || (data._type !== undefined && !VERSIONED_TYPES.includes(data._type))))
      throw validationError(`versions[${index}]: data must be a COMPOSITION, FOLDER or EHR_STATUS`, [
        at('.data', 'COMPOSITION, FOLDER or EHR_STATUS expected'),
      ]);
    const preceding = version.preceding_version_uid?.value;
    if (changeType !== 'creation' && typeof preceding !== 'string')
      throw validationError(`versions[${index}]: preceding_version_uid.value is required for a ${changeType}`, [at('.preceding_version_uid', 'required')]);
    if (changeType === 'creation' && preceding !== undefined)
      throw validationError(`versions[${index}]: a creation has no preceding_version_uid`, [at('.preceding_version_uid', 'not allowed for creation')]);
    const commit: CommitAudit = { ...audit, ...commitAuditOf(version.commit_audit) };
    const prepared = await this.prepareChange(ehrId, changeType, data, preceding, commit).catch((err) => {
      throw versionError(index, err);
    });
    return prepared;
  }

  private async prepareChange(
    ehrId: string,
    changeType: PreparedVersion['changeType'],
    data: Record<string, any> | undefined,
    preceding: string | undefined,
    commit: CommitAudit,
  ): Promise<PreparedVersion> {
    const type = data?._type ?? (changeType === 'deleted' && (await this.directories.isDirectoryVersion(ehrId, preceding!)) ? 'FOLDER' : 'COMPOSITION');
    if (type === 'FOLDER') return this.directories.prepare(ehrId, changeType, data, preceding, commit);
    if (type === 'EHR_STATUS') {
      if (changeType !== 'modification')
        throw validationError('An EHR_STATUS is only modified: the EHR creates it and it lasts as long as the EHR', [
          { path: 'commit_audit.change_type', message: 'modification (251) or amendment (250) expected' },
        ]);
      const change = await this.openehr.statusChange(ehrId, data);
      return this.ehrs.prepareStatusChange(ehrId, change, await this.openehr.statusVersionNamed(ehrId, preceding!), commit);
    }
    const composition = await this.compositionChange(ehrId, changeType, data, preceding, commit);
    if (composition.ehrId !== ehrId) throw notFound('Composition', String(preceding));
    return { ...composition, type: 'COMPOSITION' };
  }

  private async compositionChange(
    ehrId: string,
    changeType: PreparedChange['changeType'],
    data: Record<string, any> | undefined,
    preceding: string | undefined,
    commit: CommitAudit,
  ): Promise<PreparedChange> {
    if (changeType === 'creation') {
      const input = await this.openehr.inbound(data, null);
      return this.compositions.prepareCreate({ templateId: input.templateId, ehrId, content: input.content }, commit);
    }
    if (changeType === 'deleted') return this.compositions.prepareDelete(preceding!, preceding, commit);
    const input = await this.openehr.inbound(data, null);
    return this.compositions.prepareUpdate(preceding!, preceding!, input.content, commit);
  }
}
