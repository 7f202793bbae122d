/**
 * C2SP signed notes (https://c2sp.org/signed-note) with Ed25519: a text that ends in a newline, a blank line, then
 * one line per signature, `— <key name> <base64(key id ‖ signature)>`. The key id is the first four bytes of
 * SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key), 0x01 naming Ed25519; a verifier key is written
 * `<name>+<key id, hex>+<base64(0x01 ‖ public key)>`, as Go's `golang.org/x/mod/sumdb/note` reads it. Signatures by
 * keys the reader does not know are kept and skipped, so a witness's cosignature can sit beside the log's own.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { CertificateSigner } from '../../certificates/signing.js';
import { sha256Bytes } from '../../../shared/sha256.js';

const ED25519 = 0x01;
const SIGNATURE_PREFIX = '— ';
/** A note holds no ASCII control character but the newline (as Go's reader also refuses). */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f]/u;
/** Ed25519 public keys in SPKI DER are this 12-byte header and the 32-byte key. */
const SPKI_ED25519_HEADER = Buffer.from('302a300506032b6570032100', 'hex');

export interface NoteSigner {
  name: string;
  /** The verifier key others configure to check this signer's notes. */
  verifierKey: string;
  sign(text: string): Buffer;
  keyId: Buffer;
}

export interface NoteVerifier {
  name: string;
  keyId: Buffer;
  verify(text: string, signature: Buffer): boolean;
}

export interface NoteSignature {
  name: string;
  keyId: Buffer;
  signature: Buffer;
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
  const keyId = keyIdOf(name, raw);
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
  { type, what, kind }: { type: number; what: string; kind: string },
): { name: string; keyId: Buffer; publicKey: KeyObject } {
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
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length !== 33 || bytes[0] !== type) throw new Error(`${what}: not ${kind}`);
  const raw = bytes.subarray(1);
  const keyId = keyIdOf(name, raw, type);
  if (keyId.toString('hex') !== hexId.toLowerCase()) throw new Error(`${what}: the key id does not match the key`);
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_ED25519_HEADER, raw]), format: 'der', type: 'spki' });
  return { name, keyId, publicKey };
}

/** The note: its text, then a signature line by each signer. */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  checkText(text);
  const lines = signers.map(
    (s) => `${SIGNATURE_PREFIX}${s.name} ${Buffer.concat([s.keyId, s.sign(text)]).toString('base64')}\n`,
  );
  return `${text}\n${lines.join('')}`;
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
    const bytes = Buffer.from(encoded, 'base64');
    if (bytes.length < 5) return null;
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
    parsed.signatures.some((s) => s.name === v.name && s.keyId.equals(v.keyId) && v.verify(parsed.text, s.signature));
  return verifiers.length > 0 && verifiers.every(signedBy) ? parsed.text : null;
}

function keyIdOf(name: string, raw: Buffer, type = ED25519): Buffer {
  const hashed = sha256Bytes(Buffer.concat([Buffer.from(name, 'utf8'), Buffer.of(0x0a, type), raw]));
  return Buffer.from(hashed.subarray(0, 4));
}

function rawPublicKey(key: KeyObject): Buffer {
  const der = key.export({ format: 'der', type: 'spki' });
  return der.subarray(SPKI_ED25519_HEADER.length);
}

function checkKeyName(name: string): void {
  if (name.length === 0 || /[\s+]/u.test(name)) throw new Error('key name: must be non-empty, without spaces or +');
}

function checkText(text: string): void {
  if (!text.endsWith('\n')) throw new Error('note text: must end with a newline');
  if (text.includes('\n\n')) throw new Error('note text: must hold no blank line');
  if (CONTROL.test(text)) throw new Error('note text: must hold no control character but the newline');
}
