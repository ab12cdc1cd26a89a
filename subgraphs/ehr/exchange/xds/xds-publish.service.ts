import { randomUUID } from 'node:crypto';
import { AppError } from '../../../../common/errors';
import type { TenantStore } from '../../db/store';
import { assertCan } from '../../policy/rules';
import type { CdaService } from '../cda/cda.service';
import { EbXmlError, provideAndRegisterXml, readRegistryResponse, type RegistryError } from './ebrim';
import type { XdsRepositoryClient } from './repository-client';
import { ccdSubmission, dtm } from './source';

export interface XdsPublishSettings {
  /** The affinity domain's patient id assigning authority (XDS_ASSIGNING_AUTHORITY), shared with the remote registry. */
  assigningAuthority: string;
  /** XDS_SOURCE_ID. */
  sourceId: string;
}

/** What a publication sent: the ids and checksum the remote registry now holds. */
export interface XdsPublication {
  patientId: string;
  documentUniqueId: string;
  submissionSetUniqueId: string;
  /** SHA-1 (hex) and size in bytes of the CCD as sent. */
  hash: string;
  size: number;
  creationTime: string;
  repository: string;
}

/**
 * CareGraph as an IHE XDS.b Document Source: a patient's CCD (the CDA export)
 * sent with ITI-41 to the external repository of XDS_REPOSITORY_URL. Each
 * publication, accepted or refused by the remote, is one audit record
 * (ATNA-style: the transaction, the remote endpoint, the patient, the
 * document, the outcome and the remote's error codes).
 */
export class XdsPublishService {
  constructor(
    private readonly store: TenantStore,
    private readonly cda: CdaService,
    private readonly settings: XdsPublishSettings,
    private readonly repository: XdsRepositoryClient | undefined,
  ) {}

  async publishPatientCcd(patientId: string): Promise<XdsPublication> {
    assertCan(this.store.identity, 'publishDocuments', { patientId });
    if (!this.repository)
      throw new AppError('CONFLICT', 'Publishing to an XDS repository is not configured on this server: set XDS_REPOSITORY_URL (docs/exchange.md)');
    const at = new Date();
    const documentId = randomUUID().toUpperCase();
    // The CCD is read through the FHIR mapping: the policy point, consents and the access log apply as for the CDA export.
    const content = Buffer.from(await this.cda.patientDocument(patientId, { now: at, documentId }), 'utf8');
    const submission = ccdSubmission({
      patientCx: `${patientId}^^^&${this.settings.assigningAuthority}&ISO`,
      documentId,
      submissionSetId: randomUUID(),
      sourceId: this.settings.sourceId,
      author: this.store.identity.sub,
      institution: this.store.tenantId,
      content,
      at,
    });
    const publication: XdsPublication = {
      patientId,
      documentUniqueId: submission.documentUniqueId,
      submissionSetUniqueId: submission.submissionSetUniqueId,
      hash: submission.hash,
      size: submission.size,
      creationTime: dtm(at),
      repository: this.repository.endpoint,
    };

    let failure: AppError | undefined;
    try {
      const answer = readRegistryResponse(await this.repository.provideAndRegister(provideAndRegisterXml(submission.submit, submission.documents)));
      if (!answer.success) failure = refused(this.repository.endpoint, answer.errors, answer.status);
    } catch (err) {
      if (err instanceof EbXmlError)
        failure = new AppError('UPSTREAM_ERROR', `The XDS repository at ${this.repository.endpoint} did not answer a RegistryResponse`);
      else if (err instanceof AppError) failure = err;
      else throw err;
    }
    await this.store.change('IHE ITI-41 export', (_tx, audit) =>
      audit.record({
        action: 'export',
        entityType: 'XdsTransaction',
        entityId: submission.submissionSetUniqueId,
        after: {
          transaction: 'ITI-41',
          role: 'Document Source',
          endpoint: this.repository!.endpoint,
          patientId,
          documents: [submission.documentUniqueId],
          submissionSet: submission.submissionSetUniqueId,
          hash: submission.hash,
          size: submission.size,
          outcome: failure ? 'failure' : 'success',
          ...(failure ? { errors: errorCodes(failure) } : {}),
        },
      }),
    );
    if (failure) throw failure;
    return publication;
  }
}

/** A RegistryResponse that is not Success, as an UPSTREAM_ERROR carrying the remote's XDS error codes. */
function refused(endpoint: string, errors: RegistryError[], status: string): AppError {
  const summary = errors.length ? errors.map((e) => `${e.errorCode}: ${e.codeContext}`).join('; ') : `status ${status}`;
  return new AppError(
    'UPSTREAM_ERROR',
    `The XDS repository at ${endpoint} refused the document: ${summary}`,
    errors.map((e) => ({ path: e.location ?? 'rs:RegistryResponse', message: e.codeContext, xdsErrorCode: e.errorCode })),
  );
}

/** The codes an export record names: the repository's XDS error codes or SOAP fault subcode, else ours. */
const errorCodes = (failure: AppError): string[] =>
  failure.details?.map((d) => String(d.xdsErrorCode ?? d.soapSubcode ?? d.soapCode ?? failure.code)) ?? [failure.code];
