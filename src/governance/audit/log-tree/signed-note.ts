/**
 * C2SP signed notes (https://c2sp.org/signed-note) with Ed25519: a text that ends in a newline, a blank line, then
 * one line per signature, `— <key name> <base64(key id ‖ signature)>`. The key id is the first four bytes of
 * SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key), 0x01 naming Ed25519; a verifier key is written
 * `<name>+<key id, hex>+<base64(0x01 ‖ public key)>`, as Go's `golang.org/x/mod/sumdb/note` reads it. Signatures by
 * keys the reader does not know are kept and skipped, so a witness's cosignature can sit beside the log's own.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { CertificateSigner } from '../../certificates/signing.js';
import {
  CONTROL,
  ED25519,
  SIGNATURE_PREFIX,
  checkKeyName,
  keyIdOf,
  readVerifierKeyParts,
  type NoteVerifier,
} from './signed-note-format.js';

// Parsing and opening are pure, shared with the auditor console's page.
export { openNote, parseNote, type NoteSignature, type NoteVerifier } from './signed-note-format.js';

/** Ed25519 public keys in SPKI DER are this 12-byte header and the 32-byte key. */
const SPKI_ED25519_HEADER = Buffer.from('302a300506032b6570032100', 'hex');

export interface NoteSigner {
  name: string;
  /** The verifier key others configure to check this signer's notes. */
  verifierKey: string;
  sign(text: string): Buffer;
  keyId: Buffer;
}

/**
 * A note signer under a key name, over an Ed25519 key that signs (the certificate signer's shape: the private key
 * stays where it was loaded).
 */
export function noteSigner(name: string, key: Pick<CertificateSigner, 'publicKeyPem' | 'sign'>): NoteSigner {
  checkKeyName(name);
  const publicKey = createPublicKey(key.publicKeyPem);
  if (publicKey.asymmetricKeyType !== 'ed25519') throw new Error('note signer: the key is not an Ed25519 key');
  const raw = rawPublicKey(publicKey);
  const keyId = Buffer.from(keyIdOf(name, raw));
  return {
    name,
    keyId,
    verifierKey: `${name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.of(ED25519), raw]).toString('base64')}`,
    sign: (text) => Buffer.from(key.sign(Buffer.from(text, 'utf8')), 'base64'),
  };
}

/** A verifier from a verifier key string, `<name>+<hex key id>+<base64(0x01 ‖ key)>`; refuses one that does not add up. */
export function noteVerifier(verifierKey: string): NoteVerifier {
  const { name, keyId, publicKey } = readVerifierKey(verifierKey, {
    type: ED25519,
    what: 'verifier key',
    kind: 'an Ed25519 key',
  });
  return { name, keyId, verify: (text, signature) => verify(null, Buffer.from(text, 'utf8'), publicKey, signature) };
}

/**
 * A verifier key's name, key id and Ed25519 public key, for a key of signature type `type` (0x01 a note signature,
 * 0x04 a witness cosignature); refuses one of another type, or whose key id does not match its name and key.
 */
export function readVerifierKey(
  verifierKey: string,
  options: { type: number; what: string; kind: string },
): { name: string; keyId: Buffer; publicKey: KeyObject } {
  const { name, keyId, publicKey } = readVerifierKeyParts(verifierKey, options);
  return {
    name,
    keyId: Buffer.from(keyId),
    publicKey: createPublicKey({ key: Buffer.concat([SPKI_ED25519_HEADER, publicKey]), format: 'der', type: 'spki' }),
  };
}

/** The note: its text, then a signature line by each signer. */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  checkText(text);
  const lines = signers.map(
    (s) => `${SIGNATURE_PREFIX}${s.name} ${Buffer.concat([s.keyId, s.sign(text)]).toString('base64')}\n`,
  );
  return `${text}\n${lines.join('')}`;
}

function rawPublicKey(key: KeyObject): Buffer {
  const der = key.export({ format: 'der', type: 'spki' });
  return der.subarray(SPKI_ED25519_HEADER.length);
}

function checkText(text: string): void {
  if (!text.endsWith('\n')) throw new Error('note text: must end with a newline');
  if (text.includes('\n\n')) throw new Error('note text: must hold no blank line');
  if (CONTROL.test(text)) throw new Error('note text: must hold no control character but the newline');
}
