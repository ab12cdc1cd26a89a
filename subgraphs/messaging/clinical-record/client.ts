import { randomUUID } from 'node:crypto';
import { AppError, isErrorCode } from '../../../common/errors';
import { IDENTITY_HEADER } from '../../../common/auth/tokens';
import { IdentityTokenSigner } from '../../../common/auth/identity-cache';
import type { Identity } from '../../../common/auth/principal';
import { SYSTEM_SUBJECTS } from '../../../common/auth/system-identities';
import type { RunningSubgraph, SubgraphRequest, SubgraphResponse } from '../../../common/graphql/subgraph-server';
import { deadlinePassed } from '../../../common/deadline';

export interface ClinicalPatient {
  id: string;
  contact: { phone: string | null; email: string | null };
  /** The patient's MESSAGING consent as the clinical record decides it (its default applied when none is recorded). */
  messagingConsent: boolean;
}

export interface ClinicalAppointment {
  id: string;
  patientId: string;
  start: string;
  end: string;
  status: string;
  location: string | null;
  /** IANA zone of the appointment's local times (null: none recorded). */
  timeZone: string | null;
}

/**
 * What messaging needs from the clinical record; an interface so batch lookups stay one call.
 * A lookup given a request's deadline signal (a send's) stops at the deadline, refused with `deadlinePassed()`.
 */
export interface ClinicalRecord {
  patients(tenantId: string, ids: string[], signal?: AbortSignal): Promise<Map<string, ClinicalPatient>>;
  appointment(tenantId: string, id: string, signal?: AbortSignal): Promise<ClinicalAppointment | null>;
  /** `requestKey` makes it idempotent (see the EHR's updateAppointmentStatus): success means this request made the change. */
  updateAppointmentStatus(tenantId: string, id: string, status: 'confirmed' | 'cancelled', requestKey: string): Promise<ClinicalAppointment>;
  /** The tenant's patients under legal hold (their messaging data outlives its retention period). */
  legalHolds(tenantId: string): Promise<string[]>;
  /** A subject access export's read, as the person who requested it: the clinical record's policy decides it as theirs. */
  readAs<T>(requester: Identity, query: string, variables: Record<string, unknown>): Promise<T>;
}

interface RawPatient {
  id: string;
  contact: ClinicalPatient['contact'];
  consents: { purpose: string; granted: boolean }[];
}

const APPOINTMENT_FIELDS = 'id patientId start end status location timeZone';
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * How one GraphQL operation reaches the EHR subgraph and comes back, errors
 * formatted as the subgraph formats them. Two transports, same operations,
 * same identity, so the clinical record's policy decides alike on both.
 */
export type ClinicalRecordTransport = (identity: Identity, request: SubgraphRequest, deadline?: AbortSignal) => Promise<SubgraphResponse>;

/** Scale-out: the EHR subgraph's HTTP endpoint, the identity signed with the platform's internal key. */
export function httpTransport(url: string, internalKey: Uint8Array): ClinicalRecordTransport {
  const signer = new IdentityTokenSigner(internalKey);
  return async (identity, request, deadline) => {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [IDENTITY_HEADER]: await signer.sign(identity) },
        body: JSON.stringify(request),
        signal: deadline ? AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), deadline]) : AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch {
      if (deadline?.aborted) throw deadlinePassed();
      throw new AppError('SERVICE_UNAVAILABLE', 'The clinical record is not reachable');
    }
    const body = (await response.json().catch(() => null)) as SubgraphResponse | null;
    if (!body) throw deadline?.aborted ? deadlinePassed() : new AppError('SERVICE_UNAVAILABLE', `The clinical record answered ${response.status}`);
    return body;
  };
}

/**
 * All-in-one: the operation runs on the EHR subgraph's schema in this process
 * (its context factory, resolvers and error formatter), as the identity the
 * HTTP transport would sign; no HTTP, no JSON, no token.
 */
export function inProcessTransport(ehr: Pick<RunningSubgraph, 'execute'>): ClinicalRecordTransport {
  return async (identity, request, deadline) => {
    if (deadline?.aborted) throw deadlinePassed();
    const answer = ehr.execute(request, { identity, requestId: randomUUID() }).catch(() => {
      // What the HTTP transport makes of a subgraph that failed outside its resolvers.
      throw new AppError('SERVICE_UNAVAILABLE', 'The clinical record could not answer');
    });
    if (!deadline) return answer;
    // As over HTTP, the caller stops waiting at the deadline (the read itself runs to its end).
    return new Promise<SubgraphResponse>((resolve, reject) => {
      const abort = () => reject(deadlinePassed());
      deadline.addEventListener('abort', abort, { once: true });
      answer.then(resolve, reject).finally(() => deadline.removeEventListener('abort', abort));
    });
  };
}

/**
 * Messaging's one way into the clinical record: GraphQL operations on the EHR
 * subgraph's public schema, as the messaging service itself (a reserved
 * identity in the caller's tenant). The clinical record grants that identity
 * a fixed set of areas (subgraphs/ehr/policy/rules.ts); messaging decides who may send.
 */
export class GraphQLClinicalRecord implements ClinicalRecord {
  constructor(private readonly transport: ClinicalRecordTransport) {}

  private call<T>(tenantId: string, query: string, variables: Record<string, unknown>, deadline?: AbortSignal): Promise<T> {
    // No role: the clinical record grants this reserved identity its own row of the policy table.
    return this.readAs({ sub: SYSTEM_SUBJECTS.messagingService, tenantId, roles: [] }, query, variables, deadline);
  }

  async readAs<T>(identity: Identity, query: string, variables: Record<string, unknown>, deadline?: AbortSignal): Promise<T> {
    const body = await this.transport(identity, { query, variables }, deadline);
    const error = body.errors?.[0];
    if (error) {
      const code = error.extensions?.code;
      // Its own vocabulary passes through (NOT_FOUND, CONFLICT); anything else is its failure, not the caller's.
      if (isErrorCode(code) && code !== 'INTERNAL_ERROR' && code !== 'UNAUTHENTICATED') throw new AppError(code, error.message);
      throw new AppError('SERVICE_UNAVAILABLE', 'The clinical record could not answer');
    }
    return body.data as T;
  }

  /** Patients by id with their messaging consent, in one request (aliases); absent ones left out. */
  async patients(tenantId: string, ids: string[], signal?: AbortSignal): Promise<Map<string, ClinicalPatient>> {
    const unique = [...new Set(ids)];
    const found = new Map<string, ClinicalPatient>();
    for (let i = 0; i < unique.length; i += 200) {
      const chunk = unique.slice(i, i + 200);
      const params = chunk.map((_, n) => `$p${n}: ID!`).join(', ');
      // Consent comes in the same request, so a send or a batch costs no extra round trip.
      const fields = chunk.map((_, n) => `p${n}: patient(id: $p${n}) { id contact { phone email } consents { purpose granted } }`).join(' ');
      const variables = Object.fromEntries(chunk.map((id, n) => [`p${n}`, id]));
      const data = await this.call<Record<string, RawPatient | null>>(tenantId, `query(${params}) { ${fields} }`, variables, signal);
      for (const patient of Object.values(data)) {
        if (!patient) continue;
        // The clinical record lists every purpose, defaults included; an absent entry fails closed.
        const messaging = patient.consents.find((c) => c.purpose === 'MESSAGING');
        found.set(patient.id, { id: patient.id, contact: patient.contact, messagingConsent: messaging?.granted === true });
      }
    }
    return found;
  }

  async appointment(tenantId: string, id: string, signal?: AbortSignal): Promise<ClinicalAppointment | null> {
    const data = await this.call<{ appointment: ClinicalAppointment | null }>(
      tenantId,
      `query($id: ID!) { appointment(id: $id) { ${APPOINTMENT_FIELDS} } }`,
      { id },
      signal,
    );
    return data.appointment;
  }

  async legalHolds(tenantId: string): Promise<string[]> {
    return (await this.call<{ legalHolds: string[] }>(tenantId, '{ legalHolds }', {})).legalHolds;
  }

  async updateAppointmentStatus(tenantId: string, id: string, status: 'confirmed' | 'cancelled', requestKey: string): Promise<ClinicalAppointment> {
    const data = await this.call<{ updateAppointmentStatus: ClinicalAppointment }>(
      tenantId,
      `mutation($id: ID!, $status: String!, $key: String) { updateAppointmentStatus(id: $id, status: $status, requestKey: $key) { ${APPOINTMENT_FIELDS} } }`,
      { id, status, key: requestKey },
    );
    return data.updateAppointmentStatus;
  }
}
