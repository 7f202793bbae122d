import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Content sealed under a record's own data key: AES-256-GCM, a fresh 96-bit nonce per seal, and the tenant and the
 * record's id as additional data, so that a sealed value copied onto another record (or another tenant's) does not
 * open. Stored as one string in the field the plaintext used to occupy:
 *
 *     lethe-sealed:v2:<key page>:<nonce, base64url>:<ciphertext ‖ 128-bit tag, base64url>
 *     lethe-sealed:v1:<nonce, base64url>:<ciphertext ‖ 128-bit tag, base64url>
 *
 * v2 names the page of the key vault that holds the record's key (see `DataKeyVault`): a read of many records then
 * reads a few pages, not a key document per record. v1 (written before pages) names no key: its key is the vault's
 * document with the record's id. Both are read; only v2 is written. Pure code.
 */
const PREFIX = 'lethe-sealed:';
const V1 = `${PREFIX}v1:`;
const V2 = `${PREFIX}v2:`;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const DATA_KEY_BYTES = 32;
/** A key page's id: `kp_` and 32 hex digits (128 random bits). */
export const KEY_PAGE = /^kp_[0-9a-f]{32}$/;

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && (value.startsWith(V2) || value.startsWith(V1));
}

/**
 * The key page a sealed value names; null for a v1 value (its key is found by the record's id). A v2 value whose
 * page is malformed names none: its key is looked for by id, finds nothing that opens it, and it reads as erased.
 */
export function keyPageOf(sealed: string): string | null {
  if (!sealed.startsWith(V2)) return null;
  const page = sealed.slice(V2.length, sealed.indexOf(':', V2.length));
  return KEY_PAGE.test(page) ? page : null;
}

function additionalData(tenant: string, recordId: string): Buffer {
  return Buffer.from(`${Buffer.byteLength(tenant)}:${tenant}|${recordId}`, 'utf8');
}

/** Seals under `dataKey`, naming its key page (v2), or no page for a key kept by the record's id (v1). */
export function seal(
  dataKey: Buffer,
  tenant: string,
  recordId: string,
  plaintext: string,
  page: string | null,
): string {
  if (page !== null && !KEY_PAGE.test(page)) throw new Error('a key page is kp_ and 32 hex digits');
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(tenant, recordId));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const head = page === null ? V1 : `${V2}${page}:`;
  return `${head}${nonce.toString('base64url')}:${body.toString('base64url')}`;
}

/** A sealed value that is malformed, or does not open under this key for this record. */
export class SealBroken extends Error {
  constructor(recordId: string) {
    super(`sealed content of ${recordId} does not open under its data key`);
    this.name = 'SealBroken';
  }
}

export function open(dataKey: Buffer, tenant: string, recordId: string, sealed: string): string {
  const parts = sealed.startsWith(V2)
    ? sealed.slice(V2.length).split(':').slice(1)
    : sealed.startsWith(V1)
      ? sealed.slice(V1.length).split(':')
      : [];
  if (parts.length !== 2) throw new SealBroken(recordId);
  const nonce = Buffer.from(parts[0]!, 'base64url');
  const body = Buffer.from(parts[1]!, 'base64url');
  if (nonce.length !== NONCE_BYTES || body.length < TAG_BYTES) throw new SealBroken(recordId);
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(tenant, recordId));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new SealBroken(recordId);
  }
}
