import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Content sealed under a record's own data key: AES-256-GCM, a fresh 96-bit nonce per seal, and the tenant and the
 * record's id as additional data, so that a sealed value copied onto another record (or another tenant's) does not
 * open. Stored as one string in the field the plaintext used to occupy:
 *
 *     lethe-sealed:v1:<nonce, base64url>:<ciphertext ‖ 128-bit tag, base64url>
 *
 * The key is found by the record's id (see `DataKeyVault`), so the sealed value names no key. Pure code.
 */
export const SEALED_PREFIX = 'lethe-sealed:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const DATA_KEY_BYTES = 32;

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(SEALED_PREFIX);
}

function additionalData(tenant: string, recordId: string): Buffer {
  return Buffer.from(`${Buffer.byteLength(tenant)}:${tenant}|${recordId}`, 'utf8');
}

export function seal(dataKey: Buffer, tenant: string, recordId: string, plaintext: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(tenant, recordId));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${SEALED_PREFIX}${nonce.toString('base64url')}:${body.toString('base64url')}`;
}

/** A sealed value that is malformed, or does not open under this key for this record. */
export class SealBroken extends Error {
  constructor(recordId: string) {
    super(`sealed content of ${recordId} does not open under its data key`);
    this.name = 'SealBroken';
  }
}

export function open(dataKey: Buffer, tenant: string, recordId: string, sealed: string): string {
  const parts = sealed.slice(SEALED_PREFIX.length).split(':');
  if (!sealed.startsWith(SEALED_PREFIX) || parts.length !== 2) throw new SealBroken(recordId);
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
