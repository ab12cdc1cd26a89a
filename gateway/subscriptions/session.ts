import type { WebSocket } from 'ws';
import { resolveTenant, identityFor, type Identity, type Principal } from '../../common/auth/principal';
import type { AccessTokenVerifier } from '../../common/auth/tokens';
import { AppError } from '../../common/errors';
import type { Clock, ClockTimer } from '../../common/clock';
import { principalFromHeader } from '../auth';
import type { TenantDirectory } from '../tenants/directory';

/** An authenticated WebSocket connection: one caller in one tenant (docs/api.md §3). */
export interface Session {
  principal: Principal;
  identity: Identity;
  /** Closes the socket when the token expires. */
  expiry?: ClockTimer;
}

/** graphql-ws close codes for a refused connection_init (4401/4403 as graphql-ws uses them). */
const CLOSE_CODES: Partial<Record<string, number>> = { UNAUTHENTICATED: 4401, FORBIDDEN: 4403 };
const BAD_REQUEST_CLOSE = 4400;

/**
 * connection_init payload `{"authorization":"Bearer …","tenantId":"…"}`; the HTTP header
 * names (`Authorization`, `X-Tenant-Id`) work too, as explorers send their headers there.
 */
export async function authenticateConnection(
  verify: AccessTokenVerifier,
  params: Record<string, unknown> | undefined,
  tenants: TenantDirectory,
): Promise<Session> {
  const authorization = params?.authorization ?? params?.Authorization;
  if (authorization !== undefined && typeof authorization !== 'string')
    throw new AppError('UNAUTHENTICATED', 'authorization must be a string "Bearer <token>"');
  if (!authorization) throw new AppError('UNAUTHENTICATED', 'Missing authorization in the connection_init payload');
  const principal = await principalFromHeader(verify, authorization);
  const tenantId = params?.tenantId ?? params?.['X-Tenant-Id'] ?? params?.['x-tenant-id'];
  if (tenantId !== undefined && tenantId !== null && typeof tenantId !== 'string') throw new AppError('VALIDATION_ERROR', 'tenantId must be a string');
  const identity = identityFor(principal, resolveTenant(principal, tenantId ?? undefined));
  await tenants.admit(identity);
  return { principal, identity };
}

/** How a refused connection is closed: code, and a reason of at most 123 bytes naming the contract code. */
export function closeFor(error: unknown): { code: number; reason: string } {
  if (!(error instanceof AppError)) return { code: 4500, reason: 'INTERNAL_ERROR: Internal server error' };
  const reason = Buffer.from(`${error.code}: ${error.message}`)
    .subarray(0, 123)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return { code: CLOSE_CODES[error.code] ?? BAD_REQUEST_CLOSE, reason };
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Closes the socket with 4401 when the token's `exp` passes (timers are re-armed past Node's 24.8-day limit). */
export function closeOnExpiry(session: Session, socket: WebSocket, clock: Clock): void {
  const exp = session.principal.exp;
  if (exp === undefined) return;
  const arm = () => {
    const left = exp * 1000 - clock.now().getTime();
    if (left <= 0) {
      socket.close(4401, 'UNAUTHENTICATED: the token has expired');
      return;
    }
    session.expiry = clock.setTimeout(arm, Math.min(left, MAX_TIMER_MS));
  };
  arm();
}
