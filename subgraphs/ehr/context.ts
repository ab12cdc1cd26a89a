import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { ReadAccount } from '../../common/graphql/shared-reads';
import type { PatientService } from './patients/patient.service';
import type { AppointmentService } from './appointments/appointment.service';
import type { EhrService } from './records/ehr.service';
import type { ClinicalTemplateService } from './templates/clinical-template.service';
import type { CompositionService } from './compositions/composition.service';
import type { ConsentService } from './consents/consent.service';
import type { AccessPolicyService } from './policy/access-policy.service';
import type { AuditService } from './audit/audit.service';
import type { AccessReviewService } from './audit/access-review.service';
import type { FhirService } from './exchange/fhir/fhir.service';
import type { CdaService } from './exchange/cda/cda.service';
import type { OpenEhrService } from './exchange/openehr/openehr.service';
import type { RecordPrivacyService } from './privacy/privacy.service';
import type { ClinicalContextService } from './clinical-context/clinical-context.service';
import type { ContributionService } from './exchange/openehr/contribution.service';
import type { DirectoryService } from './exchange/openehr/directory.service';
import type { StoredQueryService } from './exchange/openehr/stored-query.service';
import type { ItemTagService } from './exchange/openehr/item-tag.service';
import type { XdsService } from './exchange/xds/xds.service';
import type { MhdService } from './exchange/mhd/mhd.service';
import type { XdsPublishService } from './exchange/xds/xds-publish.service';

export interface EhrContext extends BaseContext {
  /** What this request read (its access log entries) and whether it changed anything. */
  readAccount: ReadAccount;
  patients: PatientService;
  appointments: AppointmentService;
  ehrs: EhrService;
  templates: ClinicalTemplateService;
  compositions: CompositionService;
  consents: ConsentService;
  accessPolicy: AccessPolicyService;
  audit: AuditService;
  accessReview: AccessReviewService;
  fhir: FhirService;
  cda: CdaService;
  openehr: OpenEhrService;
  privacy: RecordPrivacyService;
  clinicalContext: ClinicalContextService;
  contributions: ContributionService;
  directories: DirectoryService;
  storedQueries: StoredQueryService;
  itemTags: ItemTagService;
  xds: XdsService;
  mhd: MhdService;
  xdsPublish: XdsPublishService;
}
