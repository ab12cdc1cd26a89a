import { AppError, isErrorCode } from '../../../common/errors';
import { IDENTITY_HEADER } from '../../../common/auth/tokens';
import { IdentityTokenSigner } from '../../../common/auth/identity-cache';
import type { Identity } from '../../../common/auth/principal';

export interface ClinicalPatient {
  id: string;
  contact: { phone: string | null; email: string | null };
}

export interface ClinicalAppointment {
  id: string;
  patientId: string;
  start: string;
  end: string;
  status: string;
  location: string | null;
}

/** What messaging needs from the clinical record; an interface so batch lookups stay one call. */
export interface ClinicalRecord {
  patients(tenantId: string, ids: string[]): Promise<Map<string, ClinicalPatient>>;
  appointment(tenantId: string, id: string): Promise<ClinicalAppointment | null>;
  updateAppointmentStatus(tenantId: string, id: string, status: 'confirmed' | 'cancelled'): Promise<ClinicalAppointment>;
}

const APPOINTMENT_FIELDS = 'id patientId start end status location';
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Talks to the EHR subgraph's GraphQL API as the messaging service itself
 * (a short-lived identity signed with the platform's internal key, role
 * `integration`, in the caller's tenant). Messaging decides who may send;
 * the clinical record only answers what exists.
 */
export class ClinicalRecordClient implements ClinicalRecord {
  private readonly signer: IdentityTokenSigner;

  constructor(
    private readonly url: string,
    internalKey: Uint8Array,
  ) {
    this.signer = new IdentityTokenSigner(internalKey);
  }

  private async call<T>(tenantId: string, query: string, variables: Record<string, unknown>): Promise<T> {
    const identity: Identity = { sub: 'service:messaging', tenantId, roles: ['integration'] };
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [IDENTITY_HEADER]: await this.signer.sign(identity) },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', 'The clinical record is not reachable');
    }
    const body = (await response.json().catch(() => null)) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] } | null;
    if (!body) throw new AppError('SERVICE_UNAVAILABLE', `The clinical record answered ${response.status}`);
    const error = body.errors?.[0];
    if (error) {
      const code = error.extensions?.code;
      // Its own vocabulary passes through (NOT_FOUND, CONFLICT); anything else is its failure, not the caller's.
      if (isErrorCode(code) && code !== 'INTERNAL_ERROR' && code !== 'UNAUTHENTICATED') throw new AppError(code, error.message);
      throw new AppError('SERVICE_UNAVAILABLE', 'The clinical record could not answer');
    }
    return body.data as T;
  }

  /** Patients by id in one request (aliases), absent ones left out. */
  async patients(tenantId: string, ids: string[]): Promise<Map<string, ClinicalPatient>> {
    const unique = [...new Set(ids)];
    const found = new Map<string, ClinicalPatient>();
    for (let i = 0; i < unique.length; i += 200) {
      const chunk = unique.slice(i, i + 200);
      const params = chunk.map((_, n) => `$p${n}: ID!`).join(', ');
      const fields = chunk.map((_, n) => `p${n}: patient(id: $p${n}) { id contact { phone email } }`).join(' ');
      const variables = Object.fromEntries(chunk.map((id, n) => [`p${n}`, id]));
      const data = await this.call<Record<string, ClinicalPatient | null>>(tenantId, `query(${params}) { ${fields} }`, variables);
      for (const patient of Object.values(data)) if (patient) found.set(patient.id, patient);
    }
    return found;
  }

  async appointment(tenantId: string, id: string): Promise<ClinicalAppointment | null> {
    const data = await this.call<{ appointment: ClinicalAppointment | null }>(tenantId, `query($id: ID!) { appointment(id: $id) { ${APPOINTMENT_FIELDS} } }`, { id });
    return data.appointment;
  }

  async updateAppointmentStatus(tenantId: string, id: string, status: 'confirmed' | 'cancelled'): Promise<ClinicalAppointment> {
    const data = await this.call<{ updateAppointmentStatus: ClinicalAppointment }>(
      tenantId,
      `mutation($id: ID!, $status: String!) { updateAppointmentStatus(id: $id, status: $status) { ${APPOINTMENT_FIELDS} } }`,
      { id, status },
    );
    return data.updateAppointmentStatus;
  }
}
