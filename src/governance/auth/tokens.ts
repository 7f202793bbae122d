import { randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, jwtVerify, errors, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { DomainError, ErrorType } from '../../shared/errors.js';
import { purposesProblem, ROLES, TENANT_PATTERN, type Principal, type Role } from './principal.js';

const ISSUER = 'lethe';
const AUDIENCE = 'lethe-api';

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/**
 * What signs a token: an Ed25519 private key named by the `kid` its public key has in the API's key set, or (in
 * development only) the shared HS256 secret.
 */
export type TokenSigningKey = string | { privateKey: KeyObject; kid: string };

/**
 * What the API verifies tokens with: Ed25519 public keys by `kid` (a JWKS file or URL), so that it holds no
 * signing secret; and, in development only, the HS256 secret that `lethe token mint` signs with by default.
 */
export interface TokenKeys {
  jwks?: JWTVerifyGetKey;
  hs256Secret?: string;
}

/** Tells whether a token's `jti` was revoked (the `revoked_tokens` collection, see `revoked-token-store.ts`). */
export interface RevocationCheck {
  isRevoked(jti: string): Promise<boolean>;
}

/** A `jti` is an id (mint's are UUIDs); a longer one would only grow the revocation cache. */
const MAX_JTI_LENGTH = 128;

/** A token may be stamped at most this far in the future (clock skew between the minting host and the API). */
const CLOCK_SKEW_SECONDS = 60;

/** What a token's lifetime is checked against: the configured maximum (`LETHE_TOKEN_MAX_TTL_SECONDS`). */
export interface TokenLimits {
  maxTtlSeconds: number;
}

/** The configuration's default (`LETHE_TOKEN_MAX_TTL_SECONDS`, one day). */
export const DEFAULT_TOKEN_LIMITS: TokenLimits = { maxTtlSeconds: 86_400 };

/**
 * Issues a signed bearer token for a principal, with a fresh `jti` by which it can be revoked: EdDSA with a `kid`
 * under a private key, HS256 under the development secret. Its lifetime must be positive and within the
 * configured maximum: a token that never expires is never issued. The principal's `purposes`, when given, become
 * the token's `purposes` claim: the context purposes its bearer may read for.
 */
export async function mintToken(
  signingKey: TokenSigningKey,
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
  const purposes = principal.purposes;
  const problem = purposes === undefined ? null : purposesProblem(purposes);
  if (problem) throw new DomainError(ErrorType.Validation, `purposes: ${problem}`, 'purposes');
  const jwt = new SignJWT({
    tenant: principal.tenant,
    roles: principal.roles,
    ...(purposes !== undefined ? { purposes: [...purposes] } : {}),
  })
    .setSubject(principal.id)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds);
  return typeof signingKey === 'string'
    ? jwt.setProtectedHeader({ alg: 'HS256' }).sign(key(signingKey))
    : jwt.setProtectedHeader({ alg: 'EdDSA', kid: signingKey.kid }).sign(signingKey.privateKey);
}

/** Checks the signature under the key the header names: EdDSA by `kid`, HS256 only where a secret is configured. */
async function verifySignature(keys: TokenKeys, token: string): Promise<JWTPayload> {
  const header = decodeProtectedHeader(token);
  const options = { issuer: ISSUER, audience: AUDIENCE, requiredClaims: ['exp', 'iat', 'sub', 'jti'] };
  if (header.alg === 'EdDSA' && keys.jwks && typeof header.kid === 'string') {
    return (await jwtVerify(token, keys.jwks, { ...options, algorithms: ['EdDSA'] })).payload;
  }
  if (header.alg === 'HS256' && keys.hs256Secret) {
    return (await jwtVerify(token, key(keys.hs256Secret), { ...options, algorithms: ['HS256'] })).payload;
  }
  throw new DomainError(ErrorType.Unauthenticated, 'authorization: token invalid', 'authorization');
}

/**
 * Verifies a bearer token; any defect (missing, expired, forged, malformed, signed by an unknown `kid` or with an
 * algorithm not configured, without `exp`, `iat`, `sub` or `jti`, issued in the future, living longer than the
 * configured maximum, a `purposes` claim that is not a list of distinct purpose names, or revoked) is
 * Unauthenticated.
 */
export async function verifyToken(
  keys: TokenKeys,
  token: string | undefined,
  limits: TokenLimits,
  revocations?: RevocationCheck,
): Promise<Principal> {
  if (!token) throw new DomainError(ErrorType.Unauthenticated, 'authorization: bearer token required', 'authorization');
  let verified: { principal: Principal; jti: string };
  try {
    const payload = await verifySignature(keys, token);
    const now = Math.floor(Date.now() / 1000);
    if (payload.iat! > now + CLOCK_SKEW_SECONDS || payload.exp! - payload.iat! > limits.maxTtlSeconds) {
      throw new DomainError(ErrorType.Unauthenticated, 'authorization: token lifetime is not allowed', 'authorization');
    }
    const roles = Array.isArray(payload.roles) ? (payload.roles as unknown[]) : [];
    const tenant = typeof payload.tenant === 'string' ? payload.tenant : '';
    const jti = payload.jti;
    const purposes = payload.purposes;
    if (
      !payload.sub ||
      typeof jti !== 'string' ||
      jti.length > MAX_JTI_LENGTH ||
      !TENANT_PATTERN.test(tenant) ||
      roles.some((r) => !ROLES.includes(r as Role)) ||
      (purposes !== undefined && purposesProblem(purposes) !== null)
    ) {
      throw new DomainError(ErrorType.Unauthenticated, 'authorization: token claims are invalid', 'authorization');
    }
    verified = {
      principal: {
        id: payload.sub,
        tenant,
        roles: roles as Role[],
        // Absent from a token issued without the claim: the reader then gets its roles' default (see `grantedPurposes`).
        ...(purposes !== undefined ? { purposes: purposes as string[] } : {}),
      },
      jti,
    };
  } catch (error) {
    if (error instanceof DomainError) throw error;
    const why = error instanceof errors.JWTExpired ? 'token expired' : 'token invalid';
    throw new DomainError(ErrorType.Unauthenticated, `authorization: ${why}`, 'authorization');
  }
  // Outside the catch: a store that does not answer is a server error, not a bad token.
  if (revocations && (await revocations.isRevoked(verified.jti))) {
    throw new DomainError(ErrorType.Unauthenticated, 'authorization: token revoked', 'authorization');
  }
  return verified.principal;
}

export function bearer(header: string | undefined): string | undefined {
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match?.[1];
}
