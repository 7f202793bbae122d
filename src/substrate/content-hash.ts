import { type TenantMacs } from './fingerprint.js';
import { sha256Hex } from '../shared/sha256.js';

/**
 * Content hashes at rest: an HMAC under the tenant's own key over the content's SHA-256, never the SHA-256 itself,
 * so that one who holds a backup or reads a record's hash cannot confirm a guess of a short fact ("Alice is …").
 * Keyed over the digest rather than the content so that a row written before hashes were keyed is re-keyed from the
 * digest it stored (no sealed content is opened), and a DPO who names content by its plain SHA-256 (the erasure
 * selector `contentFingerprint`) is matched: the digest is keyed here under every configured key.
 *
 * A row keeps the id of the key its hash was made under (`hashKeyId`); a row without one holds the plain digest (it
 * was written before keying) until `lethe keys rehash` re-keys it, and every lookup by hash matches that form too.
 */
const CONTENT = 'content';
const IDEMPOTENCY_KEY = 'idempotency-key';
const WRITE_REQUEST = 'write-request';

/** The keyed hash of a SHA-256 hex digest under the tenant's current key: what a new row stores. */
export function keyedDigest(macs: TenantMacs, tenant: string, digest: string): string {
  return macs.of(tenant, CONTENT, digest);
}

/** The keyed hash of content under the tenant's current key. */
export function contentHashOf(macs: TenantMacs, tenant: string, content: string): string {
  return keyedDigest(macs, tenant, sha256Hex(content));
}

/**
 * Every form a stored row may hold for this digest: keyed under each configured key (a row written before a
 * rotation), then the digest itself (a row written before hashes were keyed and not yet re-keyed).
 */
export function storedDigestForms(macs: TenantMacs, tenant: string, digest: string): string[] {
  return [...macs.all(tenant, CONTENT, digest), digest];
}

/** `storedDigestForms` of the content's SHA-256. */
export function storedContentForms(macs: TenantMacs, tenant: string, content: string): string[] {
  return storedDigestForms(macs, tenant, sha256Hex(content));
}

/** An event's idempotency key as stored: the plain key (source, external id, content digest) keyed. */
export function keyedIdempotencyKey(macs: TenantMacs, tenant: string, plainKey: string): string {
  return macs.of(tenant, IDEMPOTENCY_KEY, plainKey);
}

/**
 * What a write sent under an `Idempotency-Key` asked for, as its workflow keeps it: the SHA-256 of the request's
 * canonical JSON, keyed under the tenant's current key (a repeat is compared with every configured key's form).
 */
export function keyedWriteRequest(macs: TenantMacs, tenant: string, digest: string): string {
  return macs.of(tenant, WRITE_REQUEST, digest);
}

/** Every form a kept write request may hold for this digest. */
export function writeRequestForms(macs: TenantMacs, tenant: string, digest: string): string[] {
  return macs.all(tenant, WRITE_REQUEST, digest);
}

/** Every form a stored event may hold for this plain idempotency key (see `storedDigestForms`). */
export function storedIdempotencyKeyForms(macs: TenantMacs, tenant: string, plainKey: string): string[] {
  return [...macs.all(tenant, IDEMPOTENCY_KEY, plainKey), plainKey];
}

/**
 * What a tombstone of this content about each subject may have been written over: an erasure tombstones the hash
 * its row stored (keyed under the key then current, or plain before keying), so a check looks for every form.
 */
export function subjectContentParts(
  macs: TenantMacs,
  tenant: string,
  subjects: readonly string[],
  content: string,
): [string, string][] {
  const forms = storedContentForms(macs, tenant, content);
  return subjects.flatMap((s) => forms.map((form): [string, string] => [s, form]));
}

/**
 * A stored row's content hash in keyed form: as it is when the row has a key id, keyed under the current key when
 * it holds the plain digest (written before keying). What an erasure keeps of its rows' hashes, and what the
 * re-keying of old rows writes; never the plain digest.
 */
export function keyedStoredHash(
  macs: TenantMacs,
  tenant: string,
  row: { contentHash: string; hashKeyId?: string | undefined },
): string {
  return row.hashKeyId !== undefined ? row.contentHash : keyedDigest(macs, tenant, row.contentHash);
}
