/**
 * The pure half of C2SP witness cosignatures (`cosignature.ts` holds the Node verifier): reading a cosignature line,
 * what a witness signs, and which of the given verifiers cosigned a note. No Node built-in and no Buffer, so the
 * auditor console bundles it as it is and checks the signatures with WebCrypto.
 */
import { equalBytes, fromCanonicalBase64, toHex } from '../../../shared/bytes.js';
import { SIGNATURE_PREFIX } from '../log-tree/signed-note-format.js';

/** Signature type 0x04: a c2sp.org/tlog-cosignature `cosignature/v1` key. */
export const COSIGNATURE_V1 = 0x04;
/** 4 bytes of key id, 8 of timestamp, 64 of Ed25519 signature. */
const COSIGNATURE_BYTES = 4 + 8 + 64;

/** One witness's cosignature of one checkpoint, as the witness returned it. */
export interface Cosignature {
  /** The witness's key name. */
  keyName: string;
  /** Hex. */
  keyId: string;
  /** Unix seconds at which the witness signed. */
  timestamp: number;
  /** The signature line, newline-terminated, as it goes under the checkpoint's note. */
  line: string;
}

/** What `cosignedBy` needs of a verifier: whether a cosignature is its key's, over the checkpoint's text. */
export interface CosignatureCheck {
  verify(checkpointText: string, cosignature: Cosignature): boolean;
}

/** A cosignature line's parts: the key name, key id, timestamp and the 64-byte Ed25519 signature. */
export interface CosignatureParts {
  name: string;
  keyId: Uint8Array;
  timestamp: bigint;
  signature: Uint8Array;
}

/** The cosignature a signature line holds, or null when the line is not one (wrong length, not base64, …). */
export function parseCosignatureLine(line: string): Cosignature | null {
  const parts = cosignatureParts(line);
  if (!parts || parts.timestamp > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const body = line.endsWith('\n') ? line.slice(0, -1) : line;
  return { keyName: parts.name, keyId: toHex(parts.keyId), timestamp: Number(parts.timestamp), line: `${body}\n` };
}

/** Every cosignature line of a witness's answer (one line per key it signs with); null if any line is not one. */
export function parseCosignatureLines(body: string): Cosignature[] | null {
  if (!body.endsWith('\n')) return null;
  const lines = body.slice(0, -1).split('\n');
  const parsed = lines.map(parseCosignatureLine);
  return parsed.length > 0 && parsed.every((c) => c !== null) ? (parsed as Cosignature[]) : null;
}

/**
 * The verifiers among `verifiers` that validly cosigned the checkpoint in `note` (a cosigned signed note: the log's
 * signature lines and the witnesses' under the text). Lines that are not cosignatures are skipped.
 */
export function cosignedBy<V extends CosignatureCheck>(note: string, verifiers: readonly V[]): V[] {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) return [];
  const text = note.slice(0, split + 1);
  const cosignatures = note
    .slice(split + 2, -1)
    .split('\n')
    .map(parseCosignatureLine)
    .filter((c): c is Cosignature => c !== null);
  return verifiers.filter((v) => cosignatures.some((c) => v.verify(text, c)));
}

/**
 * The parts of a cosignature by the key `name`/`keyId`, when `cosignature` is one by that key whose line and
 * timestamp agree; null otherwise (then it cannot verify).
 */
export function cosignatureBy(name: string, keyId: Uint8Array, cosignature: Cosignature): CosignatureParts | null {
  const parts = cosignatureParts(cosignature.line);
  if (!parts || parts.name !== name || !equalBytes(parts.keyId, keyId)) return null;
  return parts.timestamp === BigInt(cosignature.timestamp) ? parts : null;
}

/** The line's parts, or null when it is not a cosignature line. */
export function cosignatureParts(line: string): CosignatureParts | null {
  const body = line.endsWith('\n') ? line.slice(0, -1) : line;
  if (!body.startsWith(SIGNATURE_PREFIX) || body.includes('\n')) return null;
  const [name, encoded, ...rest] = body.slice(SIGNATURE_PREFIX.length).split(' ');
  if (!name || !encoded || rest.length > 0 || !validKeyName(name)) return null;
  const bytes = fromCanonicalBase64(encoded);
  if (!bytes || bytes.length !== COSIGNATURE_BYTES) return null;
  return {
    name,
    keyId: bytes.subarray(0, 4),
    timestamp: new DataView(bytes.buffer, bytes.byteOffset + 4, 8).getBigUint64(0),
    signature: bytes.subarray(12),
  };
}

/** What a witness signs: `cosignature/v1`, the time, then the checkpoint's text. */
export function cosignedMessage(checkpointText: string, timestamp: number | bigint): Uint8Array {
  return new TextEncoder().encode(`cosignature/v1\ntime ${timestamp}\n${checkpointText}`);
}

/** The note with each cosignature's line added under the log's own signatures, as a C2SP cosigned checkpoint. */
export function withCosignatures(note: string, cosignatures: readonly Pick<Cosignature, 'line'>[]): string {
  return note + cosignatures.map((c) => c.line).join('');
}

/**
 * A checkpoint's note with its stored cosignatures under the log's signature, in the witnesses' names' order, so that
 * the same cosignatures always make the same note.
 */
export function cosignedNote(checkpoint: { note: string; cosignatures?: Record<string, Cosignature> }): {
  note: string;
  cosignatures: [witness: string, cosignature: Cosignature][];
} {
  const cosignatures = Object.entries(checkpoint.cosignatures ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    note: withCosignatures(
      checkpoint.note,
      cosignatures.map(([, c]) => c),
    ),
    cosignatures,
  };
}

function validKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}
