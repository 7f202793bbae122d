import { createHmac, hkdfSync } from 'node:crypto';
import { BoundedMap } from '../shared/bounded-map.js';

/** A fingerprint key and its id (`LETHE_FINGERPRINT_KEYS`, `id:secret,…`, the first is current). */
export interface FingerprintKey {
  id: string;
  secret: string;
}

/**
 * Keyed fingerprints (HMAC-SHA-256 with a server secret): stable enough to match erased content and keys
 * again, useless to anyone without the secret. Parts are length-prefixed so that ("ab","c") ≠ ("a","bc").
 *
 * Several keys may be configured: new hashes are made under the current one (`of`), and a check matches a stored
 * hash under every one (`all`). A tombstone cannot be re-keyed (what it hashes is erased), so a key stays listed
 * for as long as hashes made under it must still match: dropping it would make erased content admissible again.
 */
export interface Fingerprinter {
  /** The current key's id, stored beside new hashes (`keyId`), so that what each key still covers can be counted. */
  keyId: string;
  /** Under the current key: what new records store. */
  of(...parts: string[]): string;
  /** Under every configured key, the current first (one entry while a single key is configured). */
  all(...parts: string[]): string[];
}

function macOf(key: string | Buffer, parts: readonly string[]): string {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(`${Buffer.byteLength(part, 'utf8')}:${part}|`, 'utf8');
  return mac.digest('hex');
}

/** A bare secret is one key, id `k0` (what `LETHE_FINGERPRINT_SECRET` alone configures). */
function keyList(keys: string | readonly FingerprintKey[]): readonly FingerprintKey[] {
  const list = typeof keys === 'string' ? [{ id: 'k0', secret: keys }] : keys;
  if (list.length === 0) throw new RangeError('at least one fingerprint key is required');
  return list;
}

export function createFingerprinter(keys: string | readonly FingerprintKey[]): Fingerprinter {
  const list = keyList(keys);
  return {
    keyId: list[0]!.id,
    of: (...parts) => macOf(list[0]!.secret, parts),
    all: (...parts) => list.map((k) => macOf(k.secret, parts)),
  };
}

/**
 * Keyed hashes under a key of each tenant's own (HKDF-SHA-256 of the server secret, the tenant as its info): ids
 * and hashes published to one tenant's auditors (event and request ids, retrieval query hashes) confirm no guess
 * without that key, and say nothing about another tenant's. Parts are length-prefixed as fingerprints are.
 */
export interface TenantMacs {
  /** The current key's id, stored beside hashes made under it (`hashKeyId`). */
  keyId: string;
  /** Under the current key. */
  of(tenant: string, ...parts: string[]): string;
  /** Under every configured key, the current first: to find an id made before a rotation. */
  all(tenant: string, ...parts: string[]): string[];
}

/** Derived keys of the tenants used most recently; any other is derived again (a few microseconds). */
const KEY_CACHE = 1024;

export function tenantKeyOf(secret: string, tenant: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'lethe-tenant-key-v1', tenant, 32));
}

export function createTenantMacs(secrets: string | readonly FingerprintKey[]): TenantMacs {
  const list = keyList(secrets);
  const keys = new BoundedMap<string, Buffer>(KEY_CACHE);
  const keyOf = (index: number, tenant: string) => {
    const cacheKey = `${index}:${tenant}`;
    let key = keys.get(cacheKey);
    if (!key) keys.set(cacheKey, (key = tenantKeyOf(list[index]!.secret, tenant)));
    return key;
  };
  return {
    keyId: list[0]!.id,
    of: (tenant, ...parts) => macOf(keyOf(0, tenant), parts),
    all: (tenant, ...parts) => list.map((_, index) => macOf(keyOf(index, tenant), parts)),
  };
}
