import { AppError } from '../errors';

/**
 * `support` works in an organisation's context without clinical data;
 * `platform_admin` manages tenants and their limits, without patient data.
 * What each role may do is decided by the subgraphs' policy tables.
 */
export const ROLES = ['admin', 'clinician', 'nurse', 'receptionist', 'integration', 'patient', 'support', 'platform_admin'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling, as proven by a verified access token (docs/api.md §3). */
export interface Principal {
  sub: string;
  tenants: string[];
  roles: Role[];
  patientId?: string;
  /** The OAuth client the token was issued to (its `client_id` or `azp` claim), when it names one. */
  clientId?: string;
  /** Seconds since epoch at which the token stops being valid. */
  exp?: number;
  /** SMART App Launch scopes, space-separated (the `scope` claim): held to them on top of the roles (smart-scopes.ts). */
  scope?: string;
  /** Who acts for `sub` (the token's RFC 8693 `act` claim): the access log's actor, `sub` its responsible user. */
  actor?: string;
}

/**
 * An AI agent: which client (the token's), and, through the MCP server, which
 * tool and the purpose of use it declared. The clinical record's policy point
 * asks for the patient's ai_assistance consent for such calls and its access log
 * records all three. It sets one itself for a token whose client is an AI agent
 * (AI_AGENT_CLIENTS), whatever surface it calls.
 */
export interface AgentContext {
  client: string;
  /** The MCP tool; absent outside /mcp. */
  tool?: string;
  /** HL7 v3 PurposeOfUse code (purpose-of-use.ts) declared to /mcp; absent outside it. */
  purpose?: string;
}

/** The caller acting in one tenant: what subgraphs and services see. */
export interface Identity {
  sub: string;
  tenantId: string;
  roles: Role[];
  patientId?: string;
  /** Every tenant the token grants and its expiry (the `viewer` query); absent for the platform's own callers. */
  tenants?: string[];
  exp?: number;
  /** The token's OAuth client (Principal.clientId): whether the caller is an AI agent is decided from it. */
  clientId?: string;
  agent?: AgentContext;
  /**
   * The call answers the patient's right of access (GDPR art. 15/20): set only by the messaging
   * service's subject access export, never from a client token. A restricted record is still
   * read for it; the caller's own grants still decide.
   */
  subjectAccess?: true;
  /** The token's SMART scopes (Principal.scope); absent: the roles alone decide. */
  scope?: string;
  /** Principal.actor: who acts for `sub`. */
  actor?: string;
}

/**
 * The tenant of a call made in no tenant's name: a `platform_admin` token that
 * grants no tenant manages tenants from here. No tenant's rows are visible in
 * it (row-level security compares with a real tenant id), and the policy
 * points grant it nothing but platform capabilities.
 */
export const PLATFORM_SCOPE = '*';
/** Roles whose tokens may grant no tenant and then act in the platform scope. */
const PLATFORM_ROLES: readonly Role[] = ['platform_admin'];

/** A tenant id, in the X-Tenant-Id header, in token claims and in the TENANTS setting alike. */
export const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * Subjects CareGraph gives its own callers (the SMS provider's webhooks, seed
 * and key-rotation jobs); a client token naming one is refused, so only the
 * gateway itself can act as them.
 */
const RESERVED_SUBJECT = /^\s*system:/i;

export function isReservedSubject(sub: string): boolean {
  return RESERVED_SUBJECT.test(sub);
}

/**
 * docs/api.md §3: X-Tenant-Id when given (must be one of the token's), else the token's only tenant,
 * else the platform scope for a platform admin's token that grants none, else 400. Whether the
 * tenant exists and is active is the gateway's tenant directory's question (gateway/tenants).
 */
export function resolveTenant(principal: Principal, requested: string | undefined): string {
  if (requested !== undefined && requested !== '') {
    if (!TENANT_ID.test(requested)) throw new AppError('VALIDATION_ERROR', 'X-Tenant-Id is not a valid tenant id');
    if (!principal.tenants.includes(requested)) {
      throw new AppError('FORBIDDEN', `This token does not grant access to tenant '${requested}'`);
    }
    return requested;
  }
  if (principal.tenants.length === 1) return principal.tenants[0];
  if (principal.tenants.length === 0 && principal.roles.some((role) => PLATFORM_ROLES.includes(role))) return PLATFORM_SCOPE;
  throw new AppError(
    'TENANT_REQUIRED',
    principal.tenants.length === 0 ? 'This token grants no tenant' : 'This token grants several tenants: name one in the X-Tenant-Id header',
  );
}

export function identityFor(principal: Principal, tenantId: string): Identity {
  return {
    sub: principal.sub,
    tenantId,
    roles: principal.roles,
    patientId: principal.patientId,
    tenants: principal.tenants,
    ...(principal.exp !== undefined ? { exp: principal.exp } : {}),
    ...(principal.clientId !== undefined ? { clientId: principal.clientId } : {}),
    ...(principal.scope !== undefined ? { scope: principal.scope } : {}),
    ...(principal.actor !== undefined ? { actor: principal.actor } : {}),
  };
}
