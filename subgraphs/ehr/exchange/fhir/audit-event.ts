import type { AccessLog as AccessLogRow } from '../../db/generated/client';
import type { FhirResource } from './mapping';

/**
 * An access-log entry (NEN 7513: who read which patient's data, when, on what grounds) as a FHIR R4 AuditEvent,
 * so a patient's app or a partner reads it with the FHIR API: a RESTful read or search (`type` rest, `subtype` the
 * interaction), the reader as the requesting agent (with the AI client and tool when an agent read), the patient
 * and the record entity read as entities. The NEN 7513 fields: the grounds as the requesting agent's policy (a
 * `urn:caregraph:access-grounds:` URN), the data category as a detail of the record entity, and a responsible user
 * other than the actor as an agent of its own (participation RESP). Entries from before those fields have none.
 */
export function accessLogToAuditEvent(
  row: Pick<
    AccessLogRow,
    | 'id'
    | 'actor'
    | 'roles'
    | 'action'
    | 'entityType'
    | 'entityId'
    | 'patientId'
    | 'at'
    | 'purpose'
    | 'client'
    | 'tool'
    | 'responsibleUser'
    | 'dataCategory'
    | 'grounds'
  >,
): FhirResource {
  const interaction = row.action === 'read' ? { code: 'read', display: 'read' } : { code: 'search-type', display: 'search type' };
  return {
    resourceType: 'AuditEvent',
    id: row.id,
    meta: { lastUpdated: row.at.toISOString() },
    type: { system: 'http://terminology.hl7.org/CodeSystem/audit-event-type', code: 'rest', display: 'RESTful Operation' },
    subtype: [{ system: 'http://hl7.org/fhir/restful-interaction', ...interaction }],
    // R: a read; E: a query run over the record.
    action: row.action === 'query' ? 'E' : 'R',
    recorded: row.at.toISOString(),
    outcome: '0',
    ...(row.purpose ? { purposeOfEvent: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-ActReason', code: row.purpose }] }] } : {}),
    agent: [
      {
        who: { identifier: { value: row.actor }, display: row.actor },
        requestor: true,
        role: row.roles.map((role) => ({ text: role })),
        ...(row.grounds ? { policy: [`${GROUNDS_POLICY}${row.grounds}`] } : {}),
      },
      ...(row.responsibleUser && row.responsibleUser !== row.actor
        ? [
            {
              type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-ParticipationType', code: 'RESP', display: 'responsible party' }] },
              who: { identifier: { value: row.responsibleUser }, display: row.responsibleUser },
              requestor: false,
            },
          ]
        : []),
      ...(row.client
        ? [
            {
              type: { coding: [{ system: 'http://dicom.nema.org/resources/ontology/DCM', code: '110150', display: 'Application' }] },
              who: { identifier: { value: row.client }, display: row.client },
              requestor: false,
              ...(row.tool ? { name: row.tool } : {}),
            },
          ]
        : []),
    ],
    source: { observer: { display: 'CareGraph' } },
    entity: [
      ...(row.patientId ? [{ what: { reference: `Patient/${row.patientId}` }, type: { system: AUDIT_ENTITY_TYPE, code: '1', display: 'Person' } }] : []),
      {
        what: { identifier: { value: `${row.entityType}/${row.entityId}` } },
        type: { system: AUDIT_ENTITY_TYPE, code: '2', display: 'System Object' },
        ...(row.dataCategory ? { detail: [{ type: 'dataCategory', valueString: row.dataCategory }] } : {}),
      },
    ],
  };
}

const AUDIT_ENTITY_TYPE = 'http://terminology.hl7.org/CodeSystem/audit-entity-type';
const GROUNDS_POLICY = 'urn:caregraph:access-grounds:';
