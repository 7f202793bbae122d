/**
 * Ed25519 keys for certificates, with node:crypto only: the private key comes from the PEM (PKCS#8) file named by
 * LETHE_SIGNING_KEY_FILE; the public key is exported as SPKI PEM for auditors, and named by a short fingerprint.
 */
import fs from 'node:fs';
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { ConfigError } from '../../config/config.js';

/** The configuration variable naming the private key file; errors name it. */
export const SIGNING_KEY_VARIABLE = 'LETHE_SIGNING_KEY_FILE';
/** The variable naming the public key file, which the API serves without holding the private key. */
export const PUBLIC_KEY_VARIABLE = 'LETHE_SIGNING_PUBLIC_KEY_FILE';

/** Signs certificate bodies with one Ed25519 key. */
export interface CertificateSigner {
  /** First 16 hex digits of SHA-256(SPKI DER) of the public key. */
  keyId: string;
  /** The public key, SPKI PEM: what an auditor verifies with. */
  publicKeyPem: string;
  /** Ed25519 signature over `message`, standard padded base64. */
  sign(message: Uint8Array): string;
}

function readKeyFile(variable: string, file: string | undefined): { file: string; pem: string } {
  if (!file) throw new ConfigError(variable, 'is required');
  try {
    return { file, pem: fs.readFileSync(file, 'utf8') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(variable, `cannot read the signing key file ${file} (${code})`);
  }
}

/** Loads the Ed25519 private key from a PEM file; a missing, unreadable or non-Ed25519 key is a ConfigError. */
export function loadSigningKey(path: string | undefined): CertificateSigner {
  const { file, pem } = readKeyFile(SIGNING_KEY_VARIABLE, path);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    // The parser's message could quote key material; say only what is wrong.
    throw new ConfigError(SIGNING_KEY_VARIABLE, `${file} is not a PEM private key (expected Ed25519, PKCS#8)`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new ConfigError(
      SIGNING_KEY_VARIABLE,
      `${file} holds a ${key.asymmetricKeyType ?? 'non-asymmetric'} key, not Ed25519`,
    );
  }
  return createSigner(key);
}

/**
 * The public half only (SPKI PEM file), for a process that serves the key and never issues a certificate (the
 * API): its `sign` throws, so a code path that would sign there fails loudly rather than finding a key.
 */
export function loadPublicSigningKey(path: string | undefined): CertificateSigner {
  const { file, pem } = readKeyFile(PUBLIC_KEY_VARIABLE, path);
  let publicKey: KeyObject;
  try {
    publicKey = parsePublicKeyPem(pem);
  } catch (error) {
    throw new ConfigError(PUBLIC_KEY_VARIABLE, `${file}: ${(error as Error).message}`);
  }
  return {
    keyId: keyIdOf(publicKey),
    publicKeyPem: exportPublicKeyPem(publicKey),
    sign: () => {
      throw new Error('this process holds only the public certificate key: certificates are issued by the worker');
    },
  };
}

/** A signer over an Ed25519 private key object. */
export function createSigner(privateKey: KeyObject): CertificateSigner {
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') {
    throw new TypeError('createSigner: an Ed25519 private key is required');
  }
  const publicKey = createPublicKey(privateKey);
  return {
    keyId: keyIdOf(publicKey),
    publicKeyPem: exportPublicKeyPem(publicKey),
    sign: (message) => sign(null, message, privateKey).toString('base64'),
  };
}

/** The SPKI PEM of a public key. */
export function exportPublicKeyPem(publicKey: KeyObject): string {
  return publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

/** First 16 hex digits of SHA-256 over the public key's SPKI DER. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex').slice(0, 16);
}

/** Reads an Ed25519 public key from PEM (SPKI); throws a TypeError that quotes nothing of the input. */
export function parsePublicKeyPem(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new TypeError('not a PEM public key');
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new TypeError(`a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return key;
}

const BASE64_SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;

/**
 * True when `signature` is a canonical base64 Ed25519 signature of `message` by `publicKey`. Non-canonical base64
 * is refused: Node's decoder ignores stray characters, so a changed string could otherwise still verify.
 */
export function verifySignature(publicKey: KeyObject, message: Uint8Array, signature: string): boolean {
  if (!BASE64_SIGNATURE.test(signature)) return false;
  const bytes = Buffer.from(signature, 'base64');
  if (bytes.length !== 64 || bytes.toString('base64') !== signature) return false;
  try {
    return verify(null, message, publicKey, bytes);
  } catch {
    return false;
  }
}
