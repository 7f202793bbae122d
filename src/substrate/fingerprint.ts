import { createHash, createHmac } from 'node:crypto';

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

export function createFingerprinter(secret: string): Fingerprinter {
  return {
    of(...parts) {
      const mac = createHmac('sha256', secret);
      for (const part of parts) mac.update(`${Buffer.byteLength(part, 'utf8')}:${part}|`, 'utf8');
      return mac.digest('hex');
    },
  };
}
