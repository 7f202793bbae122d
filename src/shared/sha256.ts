/**
 * SHA-256 of UTF-8 text or bytes, as hex or as bytes. The consoles' browser build swaps this module for a pure-JS one
 * (console/src/verify/sha256.browser.ts), so the audit and certificate verifiers run unchanged in the page.
 */
import { createHash } from 'node:crypto';

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256')
    .update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)
    .digest('hex');
}

export function sha256Bytes(data: Uint8Array): Uint8Array {
  return createHash('sha256').update(data).digest();
}
