/** The browser's SHA-256 for the shared verifiers: synchronous, as they are (WebCrypto's digest is async only). */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

export function sha256Hex(data: string | Uint8Array): string {
  return bytesToHex(sha256(typeof data === 'string' ? new TextEncoder().encode(data) : data));
}

export function sha256Bytes(data: Uint8Array): Uint8Array {
  return sha256(data);
}
