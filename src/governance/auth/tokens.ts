import { SignJWT, jwtVerify, errors } from 'jose';
import { DomainError, ErrorType } from '../../shared/errors.js';
import { ROLES, TENANT_PATTERN, type Principal, type Role } from './principal.js';

const ISSUER = 'lethe';
const AUDIENCE = 'lethe-api';

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/** Issues a signed bearer token (HS256) for a principal; development tokens come from `lethe token mint`. */
export async function mintToken(secret: string, principal: Principal, ttlSeconds = 3600): Promise<string> {
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

/** Verifies a bearer token; any defect (missing, expired, forged, malformed) is Unauthenticated. */
export async function verifyToken(secret: string, token: string | undefined): Promise<Principal> {
  if (!token) throw new DomainError(ErrorType.Unauthenticated, 'authorization: bearer token required', 'authorization');
  try {
    const { payload } = await jwtVerify(token, key(secret), {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
    });
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
