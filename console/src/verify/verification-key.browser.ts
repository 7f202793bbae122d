/**
 * The browser's VerificationKey for the shared certificate verifier. WebCrypto verifies asynchronously and the
 * verifier is synchronous, so `checkSignatures` first verifies every signature of an export with WebCrypto Ed25519;
 * the verifier's own checks then read those verdicts. A signature that was not checked this way never verifies.
 */
import { sha256Hex } from './sha256.browser.js';
import { certificateSigningBytes, type DeletionCertificate } from '../../../src/governance/certificates/certificate.js';

export interface VerificationKey {
  keyId: string;
  verify(message: Uint8Array, signature: string): boolean;
}

const BASE64_SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
const verdicts = new Map<string, boolean>();
const verdictKey = (keyId: string, message: Uint8Array, signature: string) =>
  `${keyId}\n${signature}\n${sha256Hex(message)}`;

function spkiOf(pem: string): Uint8Array<ArrayBuffer> {
  const match = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----/.exec(pem);
  if (!match) throw new TypeError('not a PEM public key');
  const der = Uint8Array.from(atob(match[1]!.replace(/\s+/g, '')), (c) => c.charCodeAt(0));
  // Ed25519 SPKI: a 12-byte header naming OID 1.3.101.112, then the 32-byte key.
  if (der.length !== 44 || der[0] !== 0x30 || der[6] !== 0x2b || der[7] !== 0x65 || der[8] !== 0x70)
    throw new TypeError('not an Ed25519 public key');
  return der;
}

/** The signature's 64 bytes, or null unless it is canonical base64 (as the Node verifier requires). */
function signatureBytes(signature: string): Uint8Array<ArrayBuffer> | null {
  if (!BASE64_SIGNATURE.test(signature)) return null;
  const binary = atob(signature);
  if (binary.length !== 64 || btoa(binary) !== signature) return null;
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

export function loadVerificationKey(pem: string): VerificationKey {
  const keyId = sha256Hex(spkiOf(pem)).slice(0, 16);
  return {
    keyId,
    verify: (message, signature) => verdicts.get(verdictKey(keyId, message, signature)) === true,
  };
}

/** Verifies, with WebCrypto, the signature of every certificate line under the key its keyId names. */
export async function checkSignatures(publicKeyPems: readonly string[], certificateLines: readonly string[]) {
  const keys = new Map<string, CryptoKey>();
  for (const pem of publicKeyPems) {
    const der = spkiOf(pem);
    const key = await crypto.subtle.importKey('spki', der, { name: 'Ed25519' }, false, ['verify']);
    keys.set(sha256Hex(der).slice(0, 16), key);
  }
  for (const line of certificateLines) {
    let c: DeletionCertificate;
    let message: Uint8Array<ArrayBuffer>;
    try {
      c = JSON.parse(line) as DeletionCertificate;
      message = new Uint8Array(certificateSigningBytes(c));
    } catch {
      continue; // the verifier itself reports the line
    }
    const key = keys.get(c.keyId);
    const signature = typeof c.signature === 'string' ? signatureBytes(c.signature) : null;
    if (!key || !signature) continue;
    const ok = await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
    verdicts.set(verdictKey(c.keyId, message, c.signature), ok);
  }
}
