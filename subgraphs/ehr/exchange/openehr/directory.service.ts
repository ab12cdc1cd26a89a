import { randomUUID } from 'node:crypto';
import type { FieldCipher } from '../../../../common/crypto';
import { AppError, notFound, validationError, type ErrorDetail } from '../../../../common/errors';
import type { Directory as DirectoryRow, DirectoryVersion as VersionRow } from '../../db/generated/client';
import type { TenantStore } from '../../db/store';
import type { EhrService, EhrView } from '../../records/ehr.service';
import type { AccessPolicyService } from '../../policy/access-policy.service';
import type { AccessArea } from '../../policy/rules';
import { parseUid } from '../../compositions/composition.service';
import { commitAlone, type PreparedVersion } from '../../records/contributions';
import type { OpenEhrResult } from './openehr.service';
import { parseTime, type CommitAudit } from './versioning';

/** Most folders and items one directory holds together. */
const MAX_NODES = 5_000;
/** OBJECT_REF types a folder item may name: a composition of the same EHR. */
const ITEM_TYPES = ['COMPOSITION', 'VERSIONED_COMPOSITION'];

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Folder = Record<string, any>;

/**
 * An EHR's directory (openEHR VERSIONED_FOLDER): one FOLDER tree per EHR whose
 * every commit is an immutable version `<uuid>::<system>::<n>`, committed in a
 * CONTRIBUTION of its own; changes name the version they replace (If-Match),
 * deletion is a final version without content. Access is the EHR's: reading
 * it needs the EHR to be readable, changing it the right to write the EHR
 * record (demographics area). Folder trees are encrypted at rest, because
 * folder names can be clinical ("Oncology episode 2024").
 */
export class DirectoryService {
  constructor(
    private readonly store: TenantStore,
    private readonly cipher: FieldCipher,
    private readonly ehrs: EhrService,
    private readonly policy: AccessPolicyService,
    private readonly systemId: string,
  ) {}

  private uidOf(id: string, version: number) {
    return `${id}::${this.systemId}::${version}`;
  }

  /** GET: the latest version, the one at a time, or one by uid; `path` narrows to a sub-folder (by folder names). */
  async get(ehrId: string, versionUid: string | null, versionAtTime: string | null, path: string | null): Promise<OpenEhrResult> {
    await this.ehrs.get(ehrId);
    const versions = await this.history(ehrId);
    let chosen = versions[versions.length - 1];
    if (versionUid) {
      chosen = versions.find((v) => v.uid === versionUid)!;
      // A deletion version has no FOLDER to answer.
      if (!chosen || !chosen.contentEnc) throw notFound('Directory version', versionUid);
    } else if (versionAtTime) {
      const at = parseTime(versionAtTime);
      chosen = [...versions].reverse().find((v) => v.committedAt.getTime() <= at)!;
      if (!chosen) throw notFound('Directory at', versionAtTime);
    }
    if (!chosen.contentEnc) return { uid: chosen.uid, lastModified: chosen.committedAt, deleted: true };
    const root = JSON.parse(this.cipher.decrypt(chosen.contentEnc)) as Folder;
    const body = path ? subFolder(root, path) : root;
    if (!body) throw notFound('Directory folder', path!);
    return { body, uid: chosen.uid, lastModified: chosen.committedAt };
  }

  /** POST: the EHR's first directory (409 when it has one), or a new one after a deletion, as the next version. */
  async create(ehrId: string, folder: unknown, reason: string | null, commit?: CommitAudit): Promise<OpenEhrResult> {
    return this.commit(await this.prepare(ehrId, 'creation', folder, undefined, commit), reason, commit);
  }

  /** PUT: a new version replacing the one If-Match names (412 when that is not the latest). */
  async update(ehrId: string, ifMatch: string, folder: unknown, reason: string | null, commit?: CommitAudit): Promise<OpenEhrResult> {
    return this.commit(await this.prepare(ehrId, 'modification', folder, ifMatch, commit), reason, commit);
  }

  /** DELETE: a final version without content, replacing the one If-Match names. */
  async delete(ehrId: string, ifMatch: string, reason: string | null, commit?: CommitAudit): Promise<OpenEhrResult> {
    return this.commit(await this.prepare(ehrId, 'deleted', null, ifMatch, commit), reason, commit);
  }

  /**
   * The live directory trees of EHRs the caller already may read (AQL's `FOLDER`), decrypted, by EHR. Not
   * access-logged here: a query logs the directories its answer was computed from.
   */
  async latestTrees(ehrIds: string[]): Promise<Map<string, { id: string; patientId: string; root: Folder }>> {
    if (ehrIds.length === 0) return new Map();
    const found = await this.store.read(async (tx) => {
      const live = await tx.directory.findMany({ where: { ehrId: { in: ehrIds }, deletedAt: null } });
      if (live.length === 0) return [];
      const versions = await tx.directoryVersion.findMany({
        where: { OR: live.map((d) => ({ directoryId: d.id, version: d.latestVersion })) },
        select: { directoryId: true, contentEnc: true },
      });
      const content = new Map(versions.map((v) => [v.directoryId, v.contentEnc]));
      return live.map((d) => ({ directory: d, contentEnc: content.get(d.id) }));
    });
    return new Map(
      found
        .filter((f) => f.contentEnc)
        .map(({ directory, contentEnc }) => [
          directory.ehrId,
          { id: directory.id, patientId: directory.patientId, root: JSON.parse(this.cipher.decrypt(contentEnc!)) as Folder },
        ]),
    );
  }

  /** Whether a version uid names a version of this EHR's directory (a CONTRIBUTION's deletion carries no FOLDER to tell). */
  async isDirectoryVersion(ehrId: string, versionUid: string): Promise<boolean> {
    const id = versionUid.split('::')[0];
    return !!(await this.store.read((tx) => tx.directory.findFirst({ where: { ehrId, id }, select: { id: true } })));
  }

  /**
   * A directory version checked and ready to write in a caller's transaction
   * (the directory's own commit, or one version of a CONTRIBUTION): a creation
   * needs no live directory (409), a change or deletion names the latest
   * version it replaces (412 otherwise).
   */
  async prepare(
    ehrId: string,
    changeType: 'creation' | 'modification' | 'deleted',
    folder: unknown,
    preceding: string | undefined,
    commit?: CommitAudit,
  ): Promise<PreparedVersion<VersionRow> & { ehrId: string; content: Folder | null }> {
    const ehr = await this.forWrite(ehrId);
    let target: { id: string; exists: boolean; version: number };
    if (changeType === 'creation') {
      const existing = await this.store.read((tx) => tx.directory.findFirst({ where: { ehrId } }));
      if (existing && !existing.deletedAt) {
        const latest = this.uidOf(existing.id, existing.latestVersion);
        throw new AppError('CONFLICT', `EHR '${ehrId}' already has a directory; change it with PUT (If-Match: ${latest})`, [
          { path: 'directory', message: 'exists', latestVersionUid: latest },
        ]);
      }
      target = { id: existing?.id ?? randomUUID(), exists: !!existing, version: (existing?.latestVersion ?? 0) + 1 };
    } else {
      const current = await this.current(ehrId, preceding ?? '');
      target = { id: current.id, exists: true, version: current.latestVersion + 1 };
    }
    const uid = this.uidOf(target.id, target.version);
    const content = changeType === 'deleted' ? null : await this.checked(ehr.id, folder, uid);
    const contentEnc = content ? this.cipher.encrypt(JSON.stringify(content)) : null;
    return {
      uid,
      type: 'FOLDER',
      changeType,
      ehrId: ehr.id,
      content,
      write: async (tx, audit, contributionId) => {
        const state = { latestVersion: target.version, deletedAt: changeType === 'deleted' ? new Date() : null };
        if (!target.exists) {
          await tx.directory.create({ data: { tenantId: this.store.tenantId, id: target.id, ehrId: ehr.id, patientId: ehr.patientId, ...state } });
        } else {
          // Only the writer that read the preceding version moves the directory on; a concurrent one finds it moved (412).
          const moved = await tx.directory.updateMany({ where: { id: target.id, latestVersion: target.version - 1 }, data: state });
          if (moved.count !== 1) {
            const now = await tx.directory.findFirst({ where: { id: target.id } });
            throw this.stale(this.uidOf(target.id, target.version - 1), this.uidOf(target.id, now!.latestVersion));
          }
        }
        const row = await tx.directoryVersion.create({
          data: {
            tenantId: this.store.tenantId,
            directoryId: target.id,
            version: target.version,
            uid,
            changeType,
            contentEnc,
            committer: this.store.identity.sub,
            commitAudit: commit ? { ...commit } : undefined,
            contributionId,
          },
        });
        // The folder tree stays out of the audit trail (it is encrypted at rest); the version names it.
        await audit.record({
          action: changeType === 'creation' ? 'create' : changeType === 'deleted' ? 'delete' : 'update',
          entityType: 'Directory',
          entityId: target.id,
          after: { ehrId: ehr.id, uid, changeType, contributionId },
        });
        return row;
      },
    };
  }

  /** Every version of the EHR's directory, oldest first; the read is logged like other reads of a patient's record. */
  private async history(ehrId: string): Promise<VersionRow[]> {
    const found = await this.store.read(async (tx) => {
      const directory = await tx.directory.findFirst({ where: { ehrId } });
      if (!directory) return null;
      await this.store.logAccess(tx, [{ entityType: 'Directory', entityId: directory.id, patientId: directory.patientId, action: 'read' }]);
      return tx.directoryVersion.findMany({ where: { directoryId: directory.id }, orderBy: { version: 'asc' } });
    });
    if (!found) throw notFound('Directory of EHR', ehrId);
    return found;
  }

  /** The EHR, once the caller may change its record (the EHR's own area) and it takes changes. */
  private async forWrite(ehrId: string): Promise<EhrView> {
    const ehr = await this.ehrs.get(ehrId);
    await this.policy.assert('write', 'demographics', { patientId: ehr.patientId });
    if (!ehr.status.isModifiable) throw new AppError('CONFLICT', `EHR '${ehrId}' is not modifiable (EHR_STATUS)`);
    return ehr;
  }

  /** The live directory whose latest version If-Match names: 404 without one, 412 naming the latest otherwise. */
  private async current(ehrId: string, ifMatch: string): Promise<DirectoryRow> {
    const directory = await this.store.read((tx) => tx.directory.findFirst({ where: { ehrId } }));
    if (!directory || directory.deletedAt) throw notFound('Directory of EHR', ehrId);
    const latest = this.uidOf(directory.id, directory.latestVersion);
    if (ifMatch !== latest) throw this.stale(ifMatch, latest);
    return directory;
  }

  private stale(ifMatch: string, latest: string) {
    return new AppError('PRECONDITION_FAILED', `'${ifMatch}' is not the latest directory version; the latest is ${latest}`, [
      { path: 'If-Match', message: 'stale', latestVersionUid: latest },
    ]);
  }

  /** A directory version committed in a CONTRIBUTION of its own. */
  private async commit(
    prepared: Awaited<ReturnType<DirectoryService['prepare']>>,
    reason: string | null,
    commit: CommitAudit | undefined,
  ): Promise<OpenEhrResult> {
    const version = await commitAlone(this.store, prepared, reason ?? commit?.description, commit ?? {});
    const deleted = prepared.changeType === 'deleted';
    return { body: prepared.content ?? undefined, uid: prepared.uid, lastModified: version.committedAt, deleted };
  }

  /**
   * The FOLDER to store: a tree of named folders (names unique among siblings,
   * so a path names one) whose items reference compositions of this EHR; the
   * root's uid is the version uid, whatever the caller sent. 400 naming every problem.
   */
  private async checked(ehrId: string, folder: unknown, uid: string): Promise<Folder> {
    const details: ErrorDetail[] = [];
    const refs: Array<{ path: string; id: string; version?: number }> = [];
    let nodes = 0;
    const visit = (node: unknown, at: string) => {
      const where = (field: string) => (at ? `${at}.${field}` : field);
      if (!isObject(node)) return void details.push({ path: at || '$', message: 'FOLDER object expected' });
      if (node._type !== undefined && node._type !== 'FOLDER') details.push({ path: where('_type'), message: 'FOLDER expected' });
      if (typeof node.name?.value !== 'string' || !node.name.value.trim() || node.name.value.includes('/'))
        details.push({ path: where('name.value'), message: 'required, without "/"' });
      if (typeof node.archetype_node_id !== 'string' || !node.archetype_node_id) details.push({ path: where('archetype_node_id'), message: 'required' });
      for (const field of ['items', 'folders'])
        if (node[field] !== undefined && !Array.isArray(node[field])) details.push({ path: where(field), message: 'array expected' });
      for (const [index, item] of (Array.isArray(node.items) ? node.items : []).entries()) {
        nodes++;
        const itemAt = where(`items[${index}]`);
        const ref = isObject(item) && typeof item.id?.value === 'string' ? parseUid(item.id.value, this.systemId) : null;
        if (!isObject(item) || !ITEM_TYPES.includes(item.type) || typeof item.namespace !== 'string' || !ref)
          details.push({ path: itemAt, message: 'OBJECT_REF to a COMPOSITION or VERSIONED_COMPOSITION (id.value a composition uid, namespace, type)' });
        else refs.push({ path: itemAt, ...ref });
      }
      const children = Array.isArray(node.folders) ? node.folders : [];
      const names = children.map((child: unknown) => (isObject(child) ? child.name?.value : undefined));
      for (const [index, child] of children.entries()) {
        nodes++;
        if (names.indexOf(names[index]) !== index && typeof names[index] === 'string')
          details.push({ path: where(`folders[${index}].name.value`), message: 'a sibling folder has this name' });
        if (nodes <= MAX_NODES) visit(child, where(`folders[${index}]`));
      }
    };
    visit(folder, '');
    if (nodes > MAX_NODES) details.push({ path: '$', message: `more than ${MAX_NODES} folders and items` });
    if (!details.length && refs.length) {
      const ids = [...new Set(refs.map((r) => r.id))];
      const found = await this.store.read((tx) =>
        tx.composition.findMany({ where: { ehrId, id: { in: ids } }, select: { id: true, latestVersion: true, area: true, patientId: true } }),
      );
      // A composition the caller may not read is answered like one that does not exist: a folder
      // writer without clinical access (a receptionist) must not learn which uids are in the record.
      const readable = await Promise.all(found.map((c) => this.policy.decide('read', c.area as AccessArea, { patientId: c.patientId })));
      const latest = new Map(found.filter((_, i) => readable[i].allowed).map((c) => [c.id, c.latestVersion]));
      for (const ref of refs) {
        const known = latest.get(ref.id);
        if (known === undefined || (ref.version !== undefined && ref.version > known))
          details.push({ path: `${ref.path}.id.value`, message: 'not a composition of this EHR' });
      }
    }
    if (details.length) throw validationError('The body must be a FOLDER whose items are compositions of this EHR', details);
    return { ...(folder as Folder), _type: 'FOLDER', uid: { _type: 'OBJECT_VERSION_ID', value: uid } };
  }
}

/** The sub-folder a slash-separated path of folder names leads to (the root's own name is not part of it). */
function subFolder(root: Folder, path: string): Folder | undefined {
  let node: Folder | undefined = root;
  for (const name of path.split('/').filter(Boolean)) {
    node = (Array.isArray(node?.folders) ? node.folders : []).find((f: Folder) => f?.name?.value === name);
    if (!node) return undefined;
  }
  return node;
}
