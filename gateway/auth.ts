import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../common/errors';
import { identityFor, resolveTenant, type Identity, type Principal } from '../common/auth/principal';
import type { AccessTokenVerifier } from '../common/auth/tokens';
import type { TenantDirectory, TenantRecord } from './tenants/directory';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    requestId?: string;
  }
}

const BEARER = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)\s*$/i;

/** Extracts and verifies `Authorization: Bearer <JWT>`; every API path goes through it (docs/api.md §3). */
export function authenticate(verify: AccessTokenVerifier) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    try {
      req.principal = await principalFromHeader(verify, req.headers.authorization);
      next();
    } catch (err) {
      next(err);
    }
  };
}

export async function principalFromHeader(verify: AccessTokenVerifier, header: string | undefined): Promise<Principal> {
  if (!header) throw new AppError('UNAUTHENTICATED', 'Missing Authorization: Bearer token');
  const match = BEARER.exec(header);
  if (!match) throw new AppError('UNAUTHENTICATED', 'The Authorization header must be "Bearer <token>"');
  return verify(match[1]);
}

/** The caller in the tenant this request addresses (X-Tenant-Id, or the token's only tenant). */
export function identityOf(req: Request, options: { requireTenantHeader?: boolean } = {}): Identity {
  if (!req.principal) throw new AppError('UNAUTHENTICATED', 'Missing Authorization: Bearer token');
  const header = req.headers['x-tenant-id'];
  const requested = Array.isArray(header) ? header[0] : header;
  if (options.requireTenantHeader && !requested) {
    throw new AppError('TENANT_REQUIRED', 'This call needs the X-Tenant-Id header');
  }
  return identityFor(req.principal, resolveTenant(req.principal, requested));
}

/**
 * The gateway's one auth path for a request that acts in a tenant: the caller,
 * its tenant, and that tenant's record, refused (403) when the tenant is
 * unknown or suspended. Every surface that serves tenant data goes through here.
 */
export async function admittedIdentity(
  req: Request,
  tenants: TenantDirectory,
  options: { requireTenantHeader?: boolean } = {},
): Promise<{ identity: Identity; tenant?: TenantRecord }> {
  const identity = identityOf(req, options);
  return { identity, tenant: await tenants.admit(identity) };
}
