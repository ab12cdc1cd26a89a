import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { PatientService } from './patients/patient.service';
import type { AppointmentService } from './appointments/appointment.service';
import type { EhrService } from './records/ehr.service';
import type { ClinicalTemplateService } from './templates/clinical-template.service';
import type { CompositionService } from './compositions/composition.service';
import type { ConsentService } from './consents/consent.service';
import type { AccessPolicyService } from './policy/access-policy.service';
import type { AuditService } from './audit/audit.service';
import type { FhirService } from './exchange/fhir/fhir.service';
import type { CdaService } from './exchange/cda/cda.service';
import type { OpenEhrService } from './exchange/openehr/openehr.service';
import type { RecordPrivacyService } from './privacy/privacy.service';
import type { ClinicalContextService } from './clinical-context/clinical-context.service';
import type { ContributionService } from './exchange/openehr/contribution.service';
import type { DirectoryService } from './exchange/openehr/directory.service';
import type { StoredQueryService } from './exchange/openehr/stored-query.service';
import type { XdsService } from './exchange/xds/xds.service';

export interface EhrContext extends BaseContext {
  patients: PatientService;
  appointments: AppointmentService;
  ehrs: EhrService;
  templates: ClinicalTemplateService;
  compositions: CompositionService;
  consents: ConsentService;
  accessPolicy: AccessPolicyService;
  audit: AuditService;
  fhir: FhirService;
  cda: CdaService;
  openehr: OpenEhrService;
  privacy: RecordPrivacyService;
  clinicalContext: ClinicalContextService;
  contributions: ContributionService;
  directories: DirectoryService;
  storedQueries: StoredQueryService;
  xds: XdsService;
}
