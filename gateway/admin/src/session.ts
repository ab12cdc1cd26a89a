/** The signed-in bearer token, kept in sessionStorage only (gone when the tab closes). */
export interface Session {
  token: string;
  tenantId?: string;
}

export interface TokenClaims {
  sub?: string;
  roles?: string[];
  tenants?: string[];
  exp?: number;
}

const KEY = 'caregraph.admin.session';

export function loadSession(): Session | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null;
    return value && typeof value.token === 'string' ? value : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY);
}

/** The token's claims, for display only: the server verifies the token on every call. */
export function readClaims(token: string): TokenClaims | null {
  const part = token.split('.')[1];
  if (!part) return null;
  try {
    const json = atob(
      part
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(part.length / 4) * 4, '='),
    );
    const claims = JSON.parse(json) as unknown;
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}
