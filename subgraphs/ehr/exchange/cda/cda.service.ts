import { randomUUID } from 'node:crypto';
import type { CompositionService } from '../../compositions/composition.service';
import type { ClinicalTemplateService } from '../../templates/clinical-template.service';
import type { FhirService } from '../fhir/fhir.service';
import { compositionToResources, mappedTemplate } from '../fhir/mapping';
import { buildCcd, nameUuid } from './ccd';

/**
 * CDA R2 / C-CDA 2.1 documents of the clinical record, made from its FHIR
 * mapping: every read goes through the same services as the FHIR export, so
 * the policy point, consent, access log and tenant isolation apply alike.
 */
export class CdaService {
  constructor(
    private readonly fhir: FhirService,
    private readonly compositions: CompositionService,
    private readonly templates: ClinicalTemplateService,
    private readonly tenantId: string,
  ) {}

  /**
   * The patient's Continuity of Care Document, as of now (or `now`). Each export is a new
   * document (a fresh id, or the `documentId` given); all of a patient's exports share one setId.
   */
  async patientDocument(patientId: string, options: { now?: Date; documentId?: string } = {}): Promise<string> {
    const [patient, ...resources] = await this.fhir.everythingResources(patientId);
    return buildCcd({
      tenantId: this.tenantId,
      documentId: options.documentId ?? randomUUID().toUpperCase(),
      setId: nameUuid(`ccd:${this.tenantId}:${patient.id}`),
      version: 1,
      effectiveTime: options.now ?? new Date(),
      title: 'Continuity of Care Document',
      patient,
      resources,
    });
  }

  /**
   * One composition version as a CDA document: its document set is the
   * composition, its version the composition's, and the same version always
   * gives the same document id.
   */
  async compositionDocument(uid: string): Promise<string> {
    const composition = await this.compositions.get(uid);
    const template = await this.templates.get(composition.templateId);
    const patient = await this.fhir.read('Patient', composition.patientId);
    return buildCcd({
      tenantId: this.tenantId,
      documentId: nameUuid(`composition:${this.tenantId}:${composition.uid}`),
      setId: composition.id.toUpperCase(),
      version: composition.version,
      effectiveTime: composition.committedAt,
      title: template.name,
      patient,
      resources: compositionToResources(composition, mappedTemplate(this.templates, template)),
    });
  }
}
