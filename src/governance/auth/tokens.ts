import { SignJWT, jwtVerify, errors } from 'jose';
import { DomainError, ErrorType } from '../../shared/errors.js';
import { ROLES, TENANT_PATTERN, type Principal, type Role } from './principal.js';

const ISSUER = 'lethe';
const AUDIENCE = 'lethe-api';

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/** A token may be stamped at most this far in the future (clock skew between the minting host and the API). */
const CLOCK_SKEW_SECONDS = 60;

/** What a token's lifetime is checked against: the configured maximum (`LETHE_TOKEN_MAX_TTL_SECONDS`). */
export interface TokenLimits {
  maxTtlSeconds: number;
}

/** The configuration's default (`LETHE_TOKEN_MAX_TTL_SECONDS`, one day). */
export const DEFAULT_TOKEN_LIMITS: TokenLimits = { maxTtlSeconds: 86_400 };

/**
 * Issues a signed bearer token (HS256) for a principal; development tokens come from `lethe token mint`. Its
 * lifetime must be positive and within the configured maximum: a token that never expires is never issued.
 */
export async function mintToken(
  secret: string,
  principal: Principal,
  ttlSeconds = 3600,
  limits: TokenLimits = DEFAULT_TOKEN_LIMITS,
): Promise<string> {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0 || ttlSeconds > limits.maxTtlSeconds)
    throw new DomainError(
      ErrorType.Validation,
      `ttl: must be a whole number of seconds from 1 to ${limits.maxTtlSeconds}`,
      'ttl',
    );
  if (!TENANT_PATTERN.test(principal.tenant))
    throw new DomainError(ErrorType.Validation, 'tenant: invalid tenant id', 'tenant');
  if (!principal.id) throw new DomainError(ErrorType.Validation, 'principal: required', 'principal');
  for (const role of principal.roles) {
    if (!ROLES.includes(role)) throw new DomainError(ErrorType.Validation, `roles: unknown role "${role}"`, 'roles');
  }
  return new SignJWT({ tenant: principal.tenant, roles: principal.roles })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(principal.id)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(key(secret));
}

/**
 * Verifies a bearer token; any defect (missing, expired, forged, malformed, without `exp`, `iat` or `sub`, issued
 * in the future, or living longer than the configured maximum) is Unauthenticated.
 */
export async function verifyToken(secret: string, token: string | undefined, limits: TokenLimits): Promise<Principal> {
  if (!token) throw new DomainError(ErrorType.Unauthenticated, 'authorization: bearer token required', 'authorization');
  try {
    const { payload } = await jwtVerify(token, key(secret), {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
      requiredClaims: ['exp', 'iat', 'sub'],
    });
    const now = Math.floor(Date.now() / 1000);
    if (payload.iat! > now + CLOCK_SKEW_SECONDS || payload.exp! - payload.iat! > limits.maxTtlSeconds) {
      throw new DomainError(ErrorType.Unauthenticated, 'authorization: token lifetime is not allowed', 'authorization');
    }
    const roles = Array.isArray(payload.roles) ? (payload.roles as unknown[]) : [];
    const tenant = typeof payload.tenant === 'string' ? payload.tenant : '';
    if (!payload.sub || !TENANT_PATTERN.test(tenant) || roles.some((r) => !ROLES.includes(r as Role))) {
      throw new DomainError(ErrorType.Unauthenticated, 'authorization: token claims are invalid', 'authorization');
    }
    return { id: payload.sub, tenant, roles: roles as Role[] };
  } catch (error) {
    if (error instanceof DomainError) throw error;
    const why = error instanceof errors.JWTExpired ? 'token expired' : 'token invalid';
    throw new DomainError(ErrorType.Unauthenticated, `authorization: ${why}`, 'authorization');
  }
}

export function bearer(header: string | undefined): string | undefined {
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match?.[1];
}
