/**
 * The verifier's view of a public key: its id and a signature check. Node verifies with node:crypto; the consoles'
 * browser build swaps this module for one backed by WebCrypto (console/src/verify/verification-key.browser.ts).
 */
import { keyIdOf, parsePublicKeyPem, verifySignature } from './signing.js';

export interface VerificationKey {
  keyId: string;
  /** True when `signature` (canonical base64) is a valid Ed25519 signature of `message` under this key. */
  verify(message: Uint8Array, signature: string): boolean;
}

/** Reads an Ed25519 SPKI PEM; throws a TypeError that quotes nothing of the input. */
export function loadVerificationKey(pem: string): VerificationKey {
  const key = parsePublicKeyPem(pem);
  return { keyId: keyIdOf(key), verify: (message, signature) => verifySignature(key, message, signature) };
}
