import type { ConcurrencyGate } from '../../common/concurrency-gate';
import type { EhrMetrics } from './metrics';
import { buildFederatedSchema, type FederatedSchema } from '../../common/graphql/federation';
import type { BaseContext } from '../../common/graphql/subgraph-server';
import type { FieldCipher } from '../../common/crypto';
import type { EhrPrisma } from './db/client';
import { TenantStore } from './db/store';
import type { EhrContext } from './context';
import { PatientResolver, patientReference } from './patients/patient.resolver';
import { PatientService } from './patients/patient.service';
import { AppointmentResolver, appointmentReference } from './appointments/appointment.resolver';
import { PatientAppointmentsResolver } from './appointments/patient-appointments.resolver';
import { AppointmentService } from './appointments/appointment.service';
import { EhrResolver, PatientEhrResolver } from './records/ehr.resolver';
import { EhrService } from './records/ehr.service';
import { ClinicalTemplateResolver } from './templates/clinical-template.resolver';
import { ClinicalTemplateService } from './templates/clinical-template.service';
import { CompositionResolver, PatientRecordResolver } from './compositions/composition.resolver';
import { CompositionService } from './compositions/composition.service';
import { ConsentResolver, PatientConsentResolver } from './consents/consent.resolver';
import { ConsentService } from './consents/consent.service';
import { AccessPolicyResolver } from './policy/access-policy.resolver';
import { AccessPolicyService } from './policy/access-policy.service';
import { asPolicyCaller, type AgentClients } from './policy/rules';
import { AuditResolver } from './audit/audit.resolver';
import { AccessReviewResolver } from './audit/access-review.resolver';
import { AccessReviewService } from './audit/access-review.service';
import { AuditService, type AuditSeal } from './audit/audit.service';
import { FhirResolver } from './exchange/fhir/fhir.resolver';
import { CdaResolver } from './exchange/cda/cda.resolver';
import { CdaService } from './exchange/cda/cda.service';
import { FhirService } from './exchange/fhir/fhir.service';
import { OpenEhrResolver } from './exchange/openehr/openehr.resolver';
import { OpenEhrRecordResolver } from './exchange/openehr/openehr-record.resolver';
import { ContributionService } from './exchange/openehr/contribution.service';
import { DirectoryService } from './exchange/openehr/directory.service';
import { OpenEhrService } from './exchange/openehr/openehr.service';
import { StoredQueryResolver } from './exchange/openehr/stored-query.resolver';
import { ItemTagResolver } from './exchange/openehr/item-tag.resolver';
import { ItemTagService } from './exchange/openehr/item-tag.service';
import { StoredQueryService } from './exchange/openehr/stored-query.service';
import { XdsResolver } from './exchange/xds/xds.resolver';
import { MhdResolver } from './exchange/mhd/mhd.resolver';
import { MhdService } from './exchange/mhd/mhd.service';
import { XdsService, type XdsSettings } from './exchange/xds/xds.service';
import { XdsPublishResolver } from './exchange/xds/xds-publish.resolver';
import { XdsPublishService } from './exchange/xds/xds-publish.service';
import type { XdsRepositoryClient } from './exchange/xds/repository-client';
import { RecordPrivacyResolver } from './privacy/privacy.resolver';
import { RecordPrivacyService } from './privacy/privacy.service';
import { systemClock, type Clock } from '../../common/clock';
import { ClinicalContextResolver } from './clinical-context/clinical-context.resolver';
import { ClinicalContextService } from './clinical-context/clinical-context.service';

export const EHR_SUBGRAPH = 'ehr';

let ehrSchema: Promise<FederatedSchema> | undefined;

/**
 * Built once per process: the schema depends on no setting, and a process that serves the subgraph more than once
 * (several platforms in one test process, the supergraph composition beside a running server) shares it.
 */
export function buildEhrSchema(): Promise<FederatedSchema> {
  return (ehrSchema ??= buildFederatedSchema({
    resolvers: [
      PatientResolver,
      AppointmentResolver,
      PatientAppointmentsResolver,
      EhrResolver,
      PatientEhrResolver,
      ClinicalTemplateResolver,
      CompositionResolver,
      PatientRecordResolver,
      ConsentResolver,
      PatientConsentResolver,
      AccessPolicyResolver,
      AuditResolver,
      AccessReviewResolver,
      FhirResolver,
      CdaResolver,
      OpenEhrResolver,
      RecordPrivacyResolver,
      ClinicalContextResolver,
      OpenEhrRecordResolver,
      StoredQueryResolver,
      ItemTagResolver,
      XdsResolver,
      XdsPublishResolver,
      MhdResolver,
    ],
    referenceResolvers: { ...patientReference, ...appointmentReference },
  }));
}

export interface EhrDeps {
  prisma: EhrPrisma;
  cipher: FieldCipher;
  /** Which OAuth clients are AI agents (AI_AGENT_CLIENTS). */
  aiAgentClients: AgentClients;
  /** openEHR system id in composition version uids (OPENEHR_SYSTEM_ID). */
  systemId: string;
  /** See TenantStoreOptions. */
  transactionalReads: boolean;
  /** The audit chain's key and signed checkpoints. */
  auditSeal: AuditSeal;
  /** IHE XDS.b: the affinity domain's assigning authority and this repository's id. */
  xds: XdsSettings & { sourceId: string };
  /** The external repository CCDs are published to (XDS_REPOSITORY_URL), if one is configured. */
  xdsRepository?: XdsRepositoryClient;
  /** The time of restrictions and their deletion dates (default: the system clock). */
  clock?: Clock;
  metrics: EhrMetrics;
  /** Turns for AQL evaluation in this process (AQL_CONCURRENCY). */
  aqlGate: ConcurrencyGate;
}

/** Per-request services of the clinical record subgraph, bound to the caller's identity and tenant. */
export function createEhrContext(deps: EhrDeps) {
  return (request: BaseContext): EhrContext => {
    // The caller as the policy point sees it (an AI client marked as an agent), for every service of the request.
    const base = { ...request, identity: asPolicyCaller(request.identity, deps.aiAgentClients) };
    const store = new TenantStore(
      deps.prisma,
      base.identity,
      { transactionalReads: deps.transactionalReads, chainKey: deps.auditSeal.chainKey },
      base.requestId,
    );
    const accessPolicy = new AccessPolicyService(store);
    const consents = new ConsentService(store, accessPolicy);
    const templates = new ClinicalTemplateService(store);
    const patients = new PatientService(store, deps.cipher, accessPolicy, deps.systemId);
    const appointments = new AppointmentService(store, accessPolicy);
    const ehrs = new EhrService(store, deps.cipher, accessPolicy, deps.systemId);
    const compositions = new CompositionService(store, deps.cipher, deps.systemId, accessPolicy, consents, templates, deps.metrics);
    const directories = new DirectoryService(store, deps.cipher, ehrs, accessPolicy, deps.systemId);
    const openehr = new OpenEhrService(ehrs, compositions, templates, directories, deps.systemId, { gate: deps.aqlGate, signal: base.deadline?.signal });
    const xds = new XdsService(store, deps.cipher, accessPolicy, consents, deps.xds, deps.metrics);
    const mhd = new MhdService(xds, deps.xds);
    const audit = new AuditService(store, deps.auditSeal);
    const fhir = new FhirService(patients, appointments, compositions, templates, mhd, accessPolicy, deps.systemId, audit);
    const cda = new CdaService(fhir, compositions, templates, base.identity.tenantId);
    return {
      ...base,
      readAccount: store,
      patients,
      appointments,
      ehrs,
      templates,
      compositions,
      consents,
      accessPolicy,
      audit,
      accessReview: new AccessReviewService(store, consents, deps.clock ?? systemClock),
      fhir,
      cda,
      openehr,
      contributions: new ContributionService(store, ehrs, compositions, openehr, directories, deps.systemId),
      directories,
      storedQueries: new StoredQueryService(store, openehr),
      itemTags: new ItemTagService(store, deps.cipher, accessPolicy, compositions, openehr),
      xds,
      mhd,
      xdsPublish: new XdsPublishService(store, cda, deps.xds, deps.xdsRepository),
      privacy: new RecordPrivacyService(store, accessPolicy, deps.clock ?? systemClock),
      clinicalContext: new ClinicalContextService(store, patients, appointments, compositions, consents, templates, accessPolicy),
    };
  };
}
