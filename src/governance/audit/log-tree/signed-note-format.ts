/**
 * The pure half of C2SP signed notes (`signed-note.ts` holds the Node signer and verifier): splitting a note into
 * its text and signature lines, reading a verifier key, key ids, and opening a note with verifiers given. No Node
 * built-in and no Buffer, so the auditor console bundles it as it is and checks the signatures with WebCrypto.
 */
import { sha256Bytes } from '../../../shared/sha256.js';
import { concatBytes, equalBytes, fromBase64, toHex } from '../../../shared/bytes.js';

/** Signature type 0x01: an Ed25519 signed-note key. */
export const ED25519 = 0x01;
export const SIGNATURE_PREFIX = '— ';
/** A note holds no ASCII control character but the newline (as Go's reader also refuses). */
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f]/u;

export interface NoteVerifier {
  name: string;
  keyId: Uint8Array;
  verify(text: string, signature: Uint8Array): boolean;
}

export interface NoteSignature {
  name: string;
  keyId: Uint8Array;
  signature: Uint8Array;
}

/** A verifier key's parts: `<name>+<key id, hex>+<base64(type ‖ 32-byte Ed25519 key)>`. */
export interface VerifierKeyParts {
  name: string;
  keyId: Uint8Array;
  /** The raw 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
}

/**
 * A verifier key's name, key id and raw Ed25519 public key, for a key of signature type `type` (0x01 a note
 * signature, 0x04 a witness cosignature); refuses one of another type, or whose key id does not match its name and key.
 */
export function readVerifierKeyParts(
  verifierKey: string,
  { type, what, kind }: { type: number; what: string; kind: string },
): VerifierKeyParts {
  // The key is standard base64, which may itself hold a `+`: only the first two separate fields.
  const first = verifierKey.indexOf('+');
  const second = verifierKey.indexOf('+', first + 1);
  if (first < 0 || second < 0) throw new Error(`${what}: expected <name>+<key id>+<key>`);
  const [name, hexId, encoded] = [
    verifierKey.slice(0, first),
    verifierKey.slice(first + 1, second),
    verifierKey.slice(second + 1),
  ];
  checkKeyName(name);
  const bytes = fromBase64(encoded);
  if (!bytes || bytes.length !== 33 || bytes[0] !== type) throw new Error(`${what}: not ${kind}`);
  const publicKey = bytes.subarray(1);
  const keyId = keyIdOf(name, publicKey, type);
  if (toHex(keyId) !== hexId.toLowerCase()) throw new Error(`${what}: the key id does not match the key`);
  return { name, keyId, publicKey };
}

/** The first four bytes of SHA-256(name ‖ 0x0A ‖ type ‖ public key). */
export function keyIdOf(name: string, raw: Uint8Array, type = ED25519): Uint8Array {
  return sha256Bytes(concatBytes(new TextEncoder().encode(name), Uint8Array.of(0x0a, type), raw)).slice(0, 4);
}

/** Splits a signed note into its text and signature lines; null when it is not shaped as one. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } | null {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) return null;
  const text = note.slice(0, split + 1);
  if (CONTROL.test(note)) return null;
  const signatures: NoteSignature[] = [];
  for (const line of note.slice(split + 2, -1).split('\n')) {
    if (!line.startsWith(SIGNATURE_PREFIX)) return null;
    const [name, encoded, ...rest] = line.slice(SIGNATURE_PREFIX.length).split(' ');
    if (!name || !encoded || rest.length > 0) return null;
    const bytes = fromBase64(encoded);
    if (!bytes || bytes.length < 5) return null;
    signatures.push({ name, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4) });
  }
  return signatures.length > 0 ? { text, signatures } : null;
}

/**
 * The note's text when every verifier given signed it (by name and key id, and the signature checks), else null.
 * Other signatures are ignored.
 */
export function openNote(note: string, verifiers: readonly NoteVerifier[]): string | null {
  const parsed = parseNote(note);
  if (!parsed) return null;
  const signedBy = (v: NoteVerifier) =>
    parsed.signatures.some(
      (s) => s.name === v.name && equalBytes(s.keyId, v.keyId) && v.verify(parsed.text, s.signature),
    );
  return verifiers.length > 0 && verifiers.every(signedBy) ? parsed.text : null;
}

export function checkKeyName(name: string): void {
  if (name.length === 0 || /[\s+]/u.test(name)) throw new Error('key name: must be non-empty, without spaces or +');
}
