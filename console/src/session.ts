/**
 * The signed-in token. It lives in sessionStorage (gone when the tab closes) and never in a URL; its roles and
 * tenant are read from its claims only to choose what to show — the API checks the signature on every call.
 */
export interface Session {
  token: string;
  principal: string;
  tenant: string;
  roles: string[];
  expiresAt: number | null;
}

const KEY = 'lethe.token';

function claimsOf(token: string): Record<string, unknown> | null {
  const payload = token.split('.')[1];
  if (!payload || token.split('.').length !== 3) return null;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const claims: unknown = JSON.parse(json);
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The session a token opens, or a message naming what is wrong with it. */
export function sessionOf(token: string): Session | { error: string } {
  const trimmed = token.trim();
  const claims = claimsOf(trimmed);
  if (!claims)
    return { error: 'token: not a Lethe token (expected three dot-separated parts, as `lethe token mint` prints)' };
  const { tenant, roles, sub, exp } = claims;
  if (typeof tenant !== 'string' || !Array.isArray(roles) || typeof sub !== 'string')
    return { error: 'token: it names no tenant, principal or roles' };
  const expiresAt = typeof exp === 'number' ? exp * 1000 : null;
  if (expiresAt !== null && expiresAt < Date.now()) return { error: 'token: expired — mint a new one' };
  return { token: trimmed, principal: sub, tenant, roles: roles.map(String), expiresAt };
}

export function loadSession(): Session | null {
  const stored = sessionStorage.getItem(KEY);
  if (!stored) return null;
  const session = sessionOf(stored);
  return 'error' in session ? null : session;
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(KEY, session.token);
}

/** Signing out forgets everything the tab kept: the token, and the subjects opened under it. */
export function clearSession(): void {
  sessionStorage.clear();
}
