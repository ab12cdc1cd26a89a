import type { FieldCipher } from '../../../../common/crypto';
import { notFound, validationError, type ErrorDetail } from '../../../../common/errors';
import type { ItemTag as ItemTagRow } from '../../db/generated/client';
import type { AuditWriter, TenantStore } from '../../db/store';
import type { TenantTx } from '../../db/tenant';
import type { CompositionService } from '../../compositions/composition.service';
import type { AccessPolicyService } from '../../policy/access-policy.service';
import type { OpenEhrResult, OpenEhrService } from './openehr.service';
import type { TagWriter } from './versioning';

export const TAG_TARGETS = ['COMPOSITION', 'EHR_STATUS'] as const;
export type TagTarget = (typeof TAG_TARGETS)[number];

/** Most tags one target holds, and the longest key, value and path. */
const MAX_TAGS = 100;
const MAX_KEY = 200;
const MAX_VALUE = 1_000;
const MAX_PATH = 1_000;
const TAG_FIELDS = ['key', 'value', 'target_path'];

export interface TagFilter {
  key: string | null;
  value: string | null;
  targetPath: string | null;
}

/** A tag as the openEHR headers and UPDATE_ITEM_TAG carry it. */
interface TagOut {
  key: string;
  value?: string;
  target_path?: string;
}

interface NewTag {
  key: string;
  value?: string;
  targetPath: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A key or path as openEHR's tag list headers can carry it: printable, without surrounding blanks. */
const PRINTABLE = /^[^\s\p{Cc}](?:[^\p{Cc}]*[^\s\p{Cc}])?$/u;

/** A commit's tags (`openehr-item-tag`, `openehr-version-item-tag`): the versioned object's, the new version's. */
interface CommitTags {
  versionedObject?: NewTag[];
  version?: NewTag[];
}

/** An UPDATE_ITEM_TAG list: `{key, value?, target_path?}` objects, no two with the same key and path. */
function parseTags(input: unknown): NewTag[] {
  if (!Array.isArray(input)) throw validationError('The body must be a JSON array of tags {key, value, target_path}', [{ path: 'tags', message: 'array' }]);
  if (input.length > MAX_TAGS) throw validationError(`At most ${MAX_TAGS} tags per target`, [{ path: 'tags', message: `more than ${MAX_TAGS}` }]);
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  const tags = input.map((tag, i): NewTag => {
    const at = `tags[${i}]`;
    if (!isObject(tag)) {
      details.push({ path: at, message: 'an object {key, value, target_path}' });
      return { key: '', targetPath: '' };
    }
    for (const name of Object.keys(tag)) if (!TAG_FIELDS.includes(name)) details.push({ path: `${at}.${name}`, message: 'unknown field' });
    const { key, value, target_path: targetPath = '' } = tag;
    if (typeof key !== 'string' || !PRINTABLE.test(key) || key.length > MAX_KEY)
      details.push({ path: `${at}.key`, message: `required: 1 to ${MAX_KEY} printable characters, no surrounding blanks` });
    if (value !== undefined && (typeof value !== 'string' || value.length > MAX_VALUE))
      details.push({ path: `${at}.value`, message: `a string of at most ${MAX_VALUE} characters` });
    if (typeof targetPath !== 'string' || targetPath.length > MAX_PATH || (targetPath !== '' && (!targetPath.startsWith('/') || !PRINTABLE.test(targetPath))))
      details.push({ path: `${at}.target_path`, message: `an AQL path starting with '/', at most ${MAX_PATH} characters` });
    const id = `${String(key)}\u0000${String(targetPath)}`;
    if (seen.has(id)) details.push({ path: `${at}.key`, message: 'a second tag with this key and target_path' });
    seen.add(id);
    return { key: key as string, ...(value !== undefined ? { value: value as string } : {}), targetPath: targetPath as string };
  });
  if (details.length) throw validationError('Invalid tags', details);
  return tags;
}

/**
 * openEHR ITEM_TAGs: keys, optionally with a value and a path within the
 * target, that clients attach to a composition or an EHR_STATUS (its
 * versioned object, or one version). Tags are metadata, not record content:
 * they are not versioned, but every change is an audit record. Who may read
 * or change a target's tags is who may read or change the target: a
 * composition's data area, the EHR's demographics for its EHR_STATUS.
 * Values are free text, so they are encrypted at rest like content.
 */
export class ItemTagService {
  constructor(
    private readonly store: TenantStore,
    private readonly cipher: FieldCipher,
    private readonly policy: AccessPolicyService,
    private readonly compositions: CompositionService,
    private readonly openehr: OpenEhrService,
  ) {}

  /** The target a uid names in an EHR, checked for the action: its patient and area (none for EHR_STATUS). */
  private async target(ehrId: string, targetType: TagTarget, uid: string, action: 'read' | 'write') {
    // The EHR first: unknown or unreadable EHRs answer as such, whatever the target.
    const { ehr, uids } = await this.openehr.statusUids(ehrId);
    if (targetType === 'COMPOSITION') {
      const composition = await this.compositions.describedTarget(ehrId, uid, action);
      return { patientId: ehr.patientId, area: composition.area };
    }
    if (!uids.includes(uid)) throw notFound('EHR_STATUS', uid);
    if (action === 'write') await this.policy.assert('write', 'demographics', { patientId: ehr.patientId });
    return { patientId: ehr.patientId, area: null };
  }

  private body(row: ItemTagRow, ehrId: string) {
    return {
      key: row.key,
      ...(row.valueEnc !== null ? { value: this.cipher.decrypt(row.valueEnc) } : {}),
      ...(row.targetPath ? { target_path: row.targetPath } : {}),
      target: {
        id: { _type: row.target.includes('::') ? 'OBJECT_VERSION_ID' : 'HIER_OBJECT_ID', value: row.target },
        namespace: 'local',
        type: row.targetType,
      },
      owner_id: { id: { _type: 'HIER_OBJECT_ID', value: ehrId }, namespace: 'local', type: 'EHR' },
    };
  }

  private async rows(where: { ehrId: string; targetType?: string; target?: string; key?: string; targetPath?: string }) {
    return this.store.read((tx) => tx.itemTag.findMany({ where, orderBy: [{ target: 'asc' }, { key: 'asc' }, { targetPath: 'asc' }] }));
  }

  /** The tags of one target (an empty list when it has none). */
  async ofTarget(ehrId: string, targetType: TagTarget, uid: string): Promise<OpenEhrResult> {
    await this.target(ehrId, targetType, uid, 'read');
    const rows = await this.rows({ ehrId, targetType, target: uid });
    return { body: rows.map((row) => this.body(row, ehrId)) };
  }

  /** Every tag in an EHR the caller may read (tags of compositions of unreadable areas are left out), filtered. */
  async ofEhr(ehrId: string, filter: TagFilter): Promise<OpenEhrResult> {
    const { ehr } = await this.openehr.statusUids(ehrId);
    const rows = await this.rows({
      ehrId,
      ...(filter.key !== null ? { key: filter.key } : {}),
      ...(filter.targetPath !== null ? { targetPath: filter.targetPath } : {}),
    });
    const areas = await this.compositions.readableAreas(ehr.patientId, [...new Set(rows.flatMap((r) => (r.area ? [r.area] : [])))]);
    const tags = rows.filter((row) => row.area === null || areas.has(row.area)).map((row) => this.body(row, ehrId));
    return { body: filter.value === null ? tags : tags.filter((tag) => tag.value === filter.value) };
  }

  /** Replaces a target's tags with the list given (an empty list removes them all). */
  async replace(ehrId: string, targetType: TagTarget, uid: string, input: unknown, reason: string | null): Promise<OpenEhrResult> {
    const tags = parseTags(input);
    const { patientId, area } = await this.target(ehrId, targetType, uid, 'write');
    const rows = await this.store.change(reason, (tx, audit) => this.write(tx, audit, { ehrId, patientId, targetType, uid, area }, tags));
    return { body: rows.map((row) => this.body(row, ehrId)) };
  }

  /** One target's tag list replaced inside the caller's transaction, with its audit record. */
  private async write(
    tx: TenantTx,
    audit: AuditWriter,
    target: { ehrId: string; patientId: string; targetType: TagTarget; uid: string; area: string | null },
    tags: NewTag[],
  ): Promise<ItemTagRow[]> {
    const { ehrId, targetType, uid } = target;
    const before = await tx.itemTag.findMany({ where: { ehrId, targetType, target: uid } });
    await tx.itemTag.deleteMany({ where: { ehrId, targetType, target: uid } });
    await tx.itemTag.createMany({
      data: tags.map((tag) => ({
        tenantId: this.store.tenantId,
        ehrId,
        patientId: target.patientId,
        targetType,
        target: uid,
        area: target.area,
        key: tag.key,
        valueEnc: tag.value !== undefined ? this.cipher.encrypt(tag.value) : null,
        targetPath: tag.targetPath,
        createdBy: this.store.identity.sub,
      })),
    });
    const after = await tx.itemTag.findMany({ where: { ehrId, targetType, target: uid }, orderBy: [{ key: 'asc' }, { targetPath: 'asc' }] });
    await audit.record({ action: 'update', entityType: 'ItemTag', entityId: uid, before: { tags: summary(before) }, after: { tags: summary(after) } });
    return after;
  }

  /**
   * The tags a commit's headers carry, checked before anything is written, and the writer that sets them in the
   * commit's own transaction (so a commit and its tags land together or not at all). Whoever may write the
   * version may tag it: the commit has passed that check before the writer runs. Undefined without tags.
   */
  tagsForCommit(targetType: TagTarget, input: { versionedObject?: unknown; version?: unknown } | null | undefined): TagWriter | undefined {
    if (!input) return undefined;
    const unknown = Object.keys(input).filter((k) => k !== 'versionedObject' && k !== 'version');
    if (unknown.length)
      throw validationError(
        'itemTags takes versionedObject and version',
        unknown.map((k) => ({ path: `itemTags.${k}`, message: 'unknown field' })),
      );
    const tags: CommitTags = {
      ...(input.versionedObject !== undefined ? { versionedObject: parseTags(input.versionedObject) } : {}),
      ...(input.version !== undefined ? { version: parseTags(input.version) } : {}),
    };
    if (!tags.versionedObject && !tags.version) return undefined;
    return async (tx, audit, v) => {
      const target = { ehrId: v.ehrId, patientId: v.patientId, targetType, area: v.area };
      if (tags.versionedObject) await this.write(tx, audit, { ...target, uid: v.versionedObjectUid }, tags.versionedObject);
      if (tags.version) await this.write(tx, audit, { ...target, uid: v.versionUid }, tags.version);
    };
  }

  /** The tags of a version and of its versioned object, for the response headers of a read or commit (the caller has read it). */
  async ofVersion(ehrId: string, targetType: TagTarget, versionUid: string): Promise<{ versionedObject: TagOut[]; version: TagOut[] }> {
    const versionedObjectUid = versionUid.split('::')[0];
    const rows = await this.store.read((tx) =>
      tx.itemTag.findMany({
        where: { ehrId, targetType, target: { in: [versionedObjectUid, versionUid] } },
        orderBy: [{ key: 'asc' }, { targetPath: 'asc' }],
      }),
    );
    const tag = (row: ItemTagRow): TagOut => ({
      key: row.key,
      ...(row.valueEnc !== null ? { value: this.cipher.decrypt(row.valueEnc) } : {}),
      ...(row.targetPath ? { target_path: row.targetPath } : {}),
    });
    return {
      versionedObject: rows.filter((r) => r.target === versionedObjectUid).map(tag),
      version: rows.filter((r) => r.target === versionUid).map(tag),
    };
  }

  /** Deletes a target's tags with a key (whatever their path); 404 when it has none. */
  async delete(ehrId: string, targetType: TagTarget, uid: string, key: string, reason: string | null): Promise<OpenEhrResult> {
    await this.target(ehrId, targetType, uid, 'write');
    await this.store.change(reason, async (tx, audit) => {
      const before = await tx.itemTag.findMany({ where: { ehrId, targetType, target: uid, key } });
      if (!before.length) throw notFound('Tag', `${uid}/${key}`);
      await tx.itemTag.deleteMany({ where: { ehrId, targetType, target: uid, key } });
      await audit.record({ action: 'delete', entityType: 'ItemTag', entityId: uid, before: { tags: summary(before) }, after: null });
    });
    return {};
  }
}

/** What the audit trail keeps of a tag list: keys and paths in clear, values as their ciphertext. */
const summary = (rows: ItemTagRow[]) => rows.map((r) => ({ key: r.key, targetPath: r.targetPath, valueEnc: r.valueEnc }));
