import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { BoundedMap } from '../shared/bounded-map.js';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Keyed fingerprints (HMAC-SHA-256 with a server secret): stable enough to match erased content and keys
 * again, useless to anyone without the secret. Parts are length-prefixed so that ("ab","c") ≠ ("a","bc").
 */
export interface Fingerprinter {
  of(...parts: string[]): string;
}

function macOf(key: string | Buffer, parts: readonly string[]): string {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(`${Buffer.byteLength(part, 'utf8')}:${part}|`, 'utf8');
  return mac.digest('hex');
}

export function createFingerprinter(secret: string): Fingerprinter {
  return { of: (...parts) => macOf(secret, parts) };
}

/**
 * Keyed hashes under a key of each tenant's own (HKDF-SHA-256 of the server secret, the tenant as its info): ids
 * and hashes published to one tenant's auditors (event and request ids, retrieval query hashes) confirm no guess
 * without that key, and say nothing about another tenant's. Parts are length-prefixed as fingerprints are.
 */
export interface TenantMacs {
  of(tenant: string, ...parts: string[]): string;
}

/** Derived keys of the tenants used most recently; any other is derived again (a few microseconds). */
const KEY_CACHE = 1024;

export function tenantKeyOf(secret: string, tenant: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'lethe-tenant-key-v1', tenant, 32));
}

export function createTenantMacs(secret: string): TenantMacs {
  const keys = new BoundedMap<string, Buffer>(KEY_CACHE);
  const keyOf = (tenant: string) => {
    let key = keys.get(tenant);
    if (!key) keys.set(tenant, (key = tenantKeyOf(secret, tenant)));
    return key;
  };
  return { of: (tenant, ...parts) => macOf(keyOf(tenant), parts) };
}
