import { randomUUID } from 'node:crypto';
import type { TenantTx } from '../db/tenant';
import type { AuditWriter, TenantStore } from '../db/store';
import { nameUuid } from '../exchange/openehr/versioning';
import type { CommitAudit } from '../compositions/composition.service';

/** One version a CONTRIBUTION committed: its version uid, the RM type versioned and the change. */
export interface ContributionVersion {
  uid: string;
  type: 'COMPOSITION' | 'EHR_STATUS' | 'FOLDER';
  changeType: string;
}

/**
 * One version checked (policy, content, preceding version) and ready to
 * write inside a commit's transaction, with the CONTRIBUTION it belongs to.
 */
export interface PreparedVersion<Written = unknown> {
  /** The version uid the write commits. */
  uid: string;
  type: ContributionVersion['type'];
  changeType: 'creation' | 'modification' | 'deleted';
  write(tx: TenantTx, audit: AuditWriter, contributionId: string): Promise<Written>;
  /** After the transaction committed: drops what the service cached of the old state. */
  committed?(): void;
}

/** More a commit writes in its transaction once its version is written (the item tags its headers carry). */
export type AlsoWrite<Written> = (tx: TenantTx, audit: AuditWriter, written: Written) => Promise<void>;

/**
 * One prepared version committed in a CONTRIBUTION of its own (a single-resource POST, PUT or DELETE), as
 * openEHR commits every version: the version and its contribution in one transaction.
 */
export function commitAlone<Written>(
  store: TenantStore,
  version: PreparedVersion<Written> & { ehrId: string },
  reason: string | null | undefined,
  audit: CommitAudit,
  also?: AlsoWrite<Written>,
): Promise<Written> {
  const contributionId = randomUUID();
  return store.change(reason, async (tx, auditWriter) => {
    const written = await version.write(tx, auditWriter, contributionId);
    await also?.(tx, auditWriter, written);
    await writeContribution(tx, {
      tenantId: store.tenantId,
      id: contributionId,
      ehrId: version.ehrId,
      committer: store.identity.sub,
      versions: [{ uid: version.uid, type: version.type, changeType: version.changeType }],
      audit,
    });
    return written;
  });
}

/**
 * Writes the CONTRIBUTION row of a commit inside the commit's transaction:
 * every versioned change of an EHR (compositions, EHR_STATUS, directory) is
 * committed in one, so the contribution read names what changed together.
 */
export async function writeContribution(
  tx: TenantTx,
  commit: { tenantId: string; id: string; ehrId: string; committer: string; versions: ContributionVersion[]; audit?: CommitAudit | null },
) {
  return tx.contribution.create({
    data: {
      tenantId: commit.tenantId,
      id: commit.id,
      ehrId: commit.ehrId,
      versions: commit.versions.map((v) => ({ ...v })),
      commitAudit: commit.audit ? { ...commit.audit } : undefined,
      committer: commit.committer,
    },
  });
}

/** The version uid of an EHR's n-th EHR_STATUS version: its versioned object is a UUID named after the EHR and this system. */
export function statusVersionUid(systemId: string, ehrId: string, version: number): string {
  return `${nameUuid(`ehr_status.${ehrId}.${systemId}`)}::${systemId}::${version}`;
}

/**
 * The CONTRIBUTION of one EHR_STATUS version (the EHR's creation, or a status
 * change), written in its transaction; its id goes into the version's audit
 * record, which is what versions EHR_STATUS.
 */
export async function writeStatusContribution(
  tx: TenantTx,
  commit: {
    tenantId: string;
    id: string;
    committer: string;
    systemId: string;
    ehrId: string;
    version: number;
    reason?: string | null;
    audit?: CommitAudit;
  },
) {
  return writeContribution(tx, {
    tenantId: commit.tenantId,
    id: commit.id,
    ehrId: commit.ehrId,
    committer: commit.committer,
    versions: [
      {
        uid: statusVersionUid(commit.systemId, commit.ehrId, commit.version),
        type: 'EHR_STATUS',
        changeType: commit.version === 1 ? 'creation' : 'modification',
      },
    ],
    // What the committer said (openEHR-AUDIT_DETAILS, openEHR-VERSION), else the audit reason as the description.
    audit: { ...(commit.reason ? { description: commit.reason.slice(0, 1000) } : {}), ...commit.audit },
  });
}
