import { createHash } from 'node:crypto';
import { validationError } from '../../../../common/errors';
import type { CommitAudit } from '../../compositions/composition.service';
import type { CompositionCommitArgs } from './openehr.types';
import type { AuditWriter } from '../../db/store';
import type { TenantTx } from '../../db/tenant';

/** openEHR terminology codes of the change types a version records. */
const CHANGE_CODES: Record<string, string> = { creation: '249', amendment: '250', modification: '251', deleted: '523', unknown: '253' };

/** VERSION.lifecycle_state values. */
export const LIFECYCLE = {
  complete: { value: 'complete', defining_code: { terminology_id: { value: 'openehr' }, code_string: '532' } },
  incomplete: { value: 'incomplete', defining_code: { terminology_id: { value: 'openehr' }, code_string: '553' } },
  deleted: { value: 'deleted', defining_code: { terminology_id: { value: 'openehr' }, code_string: '523' } },
} as const;

export type { CommitAudit } from '../../compositions/composition.service';

/** The version a commit wrote, as its tags name it. */
interface TaggedVersion {
  ehrId: string;
  patientId: string;
  /** The composition's data area; null for an EHR_STATUS. */
  area: string | null;
  versionedObjectUid: string;
  versionUid: string;
}

/** The item tags' writer: writes the tags of a commit inside its transaction (after the version, before the commit). */
export type TagWriter = (tx: TenantTx, audit: AuditWriter, version: TaggedVersion) => Promise<void>;

/** AUDIT_DETAILS of one version. */
export function auditDetails(
  systemId: string,
  version: { at: Date; changeType: string; committer: string; description?: string | null; claimedCommitter?: string | null },
) {
  return {
    _type: 'AUDIT_DETAILS',
    system_id: systemId,
    time_committed: { value: version.at.toISOString() },
    change_type: {
      value: version.changeType,
      defining_code: { terminology_id: { value: 'openehr' }, code_string: CHANGE_CODES[version.changeType] ?? CHANGE_CODES.unknown },
    },
    // The committer the caller named (openEHR-AUDIT_DETAILS), else the authenticated subject; the audit trail keeps the subject either way.
    committer: { _type: 'PARTY_IDENTIFIED', name: version.claimedCommitter ?? version.committer },
    ...(version.description ? { description: { _type: 'DV_TEXT', value: version.description } } : {}),
  };
}

/** An ISO 8601 `version_at_time`, 400 when it is not one. */
export function parseTime(value: string): number {
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw validationError('version_at_time must be an ISO 8601 date-time', [{ path: 'version_at_time', message: 'invalid' }]);
  return at;
}

/** CommitAudit from an AUDIT_DETAILS JSON object (a CONTRIBUTION's `audit`). */
export function commitAuditOf(audit: unknown): CommitAudit {
  const a = (typeof audit === 'object' && audit !== null ? audit : {}) as Record<string, any>;
  const committer = typeof a.committer?.name === 'string' ? a.committer.name : undefined;
  const description = typeof a.description?.value === 'string' ? a.description.value : typeof a.description === 'string' ? a.description : undefined;
  return { ...(committer ? { committer: committer.slice(0, 200) } : {}), ...(description ? { description: description.slice(0, 1000) } : {}) };
}

const LIFECYCLE_BY_CODE: Record<string, 'complete' | 'incomplete'> = { '532': 'complete', '553': 'incomplete' };

/** A CommitAudit as an API caller sends it ({committer, description, lifecycleState}), 400 on anything else. */
export function commitAuditInput(input: Record<string, unknown> | null | undefined): CommitAudit | undefined {
  if (!input) return undefined;
  const details = Object.keys(input)
    .filter((k) => !['committer', 'description', 'lifecycleState'].includes(k) || (input[k] !== undefined && typeof input[k] !== 'string'))
    .map((k) => ({ path: `audit.${k}`, message: 'unknown field or not a string' }));
  const state = input.lifecycleState as string | undefined;
  const lifecycleState = state === undefined ? undefined : (LIFECYCLE_BY_CODE[state] ?? (['complete', 'incomplete'].includes(state) ? state : undefined));
  if (state !== undefined && !lifecycleState) details.push({ path: 'audit.lifecycleState', message: 'complete (532) or incomplete (553)' });
  if (details.length) throw validationError('Invalid commit audit', details);
  return {
    ...(typeof input.committer === 'string' && input.committer ? { committer: input.committer.slice(0, 200) } : {}),
    ...(typeof input.description === 'string' && input.description ? { description: input.description.slice(0, 1000) } : {}),
    ...(lifecycleState ? { lifecycleState: lifecycleState as CommitAudit['lifecycleState'] } : {}),
  };
}

/**
 * A stable name-based (version 5, DNS namespace) UUID, where openEHR wants a
 * UUID for something CareGraph names otherwise: EHR.system_id (from the system
 * id the version uids carry) and the versioned EHR_STATUS of an EHR.
 */
export function nameUuid(name: string): string {
  const dnsNamespace = Buffer.from('6ba7b8109dad11d180b400c04fd430c8', 'hex');
  const hash = createHash('sha1')
    .update(Buffer.concat([dnsNamespace, Buffer.from(name, 'utf8')]))
    .digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An OBJECT_ID for an identifier chosen elsewhere: HIER_OBJECT_ID when it is a UUID, GENERIC_ID otherwise. */
export function objectId(value: string) {
  return UUID.test(value) ? { _type: 'HIER_OBJECT_ID', value } : { _type: 'GENERIC_ID', value, scheme: 'id' };
}

/** What a composition commit (create or update) carries beside the ids of its target, checked. */
export interface CompositionCommit {
  templateId: string | null;
  body: unknown;
  format: string | null;
  reason: string | null;
  audit: CommitAudit | undefined;
}

/** A composition commit's arguments checked: the body as compositionArgument takes it, the audit as commitAuditInput. */
export function compositionCommit(args: CompositionCommitArgs): CompositionCommit {
  return {
    templateId: args.templateId,
    ...compositionArgument(args.composition, args.xml, args.format),
    reason: args.reason,
    audit: commitAuditInput(args.audit),
  };
}

/** A composition write's body: the JSON `composition` in its format, or the canonical `xml` document (format XML); exactly one. */
function compositionArgument(
  composition: Record<string, unknown> | null | undefined,
  xml: string | null | undefined,
  format: string | null | undefined,
): { body: unknown; format: string | null } {
  if ((composition == null) === (xml == null))
    throw validationError('Give the composition either as JSON (composition) or as canonical XML (xml)', [
      { path: 'composition', message: 'exactly one of composition, xml' },
    ]);
  if (xml == null) return { body: composition, format: format ?? null };
  if (format && format.toUpperCase() !== 'XML')
    throw validationError(`xml is a canonical XML composition; format ${format} is JSON`, [{ path: 'format', message: 'conflicts with xml' }]);
  return { body: xml, format: 'XML' };
}
