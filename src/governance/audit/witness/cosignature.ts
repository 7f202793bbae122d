/**
 * C2SP witness cosignatures (https://c2sp.org/tlog-cosignature), `cosignature/v1`: a signed-note signature line
 * `— <witness name> <base64(key id ‖ timestamp ‖ signature)>`, where the key id is the first four bytes of
 * SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key), the timestamp is 8 bytes of big-endian Unix seconds, and the Ed25519
 * signature is over `cosignature/v1\ntime <timestamp>\n` followed by the checkpoint's text. The witness's verifier
 * key is `<name>+<key id, hex>+<base64(0x04 ‖ public key)>`. Pure.
 */
import { verify } from 'node:crypto';
import { readVerifierKey } from '../log-tree/signed-note.js';

const COSIGNATURE_V1 = 0x04;
const SIGNATURE_PREFIX = '— ';
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

export interface CosignatureVerifier {
  name: string;
  keyId: Buffer;
  /** The verifier key this was read from. */
  verifierKey: string;
  /** Whether `cosignature` is this key's valid cosignature of `checkpointText` (the note's text, signatures off). */
  verify(checkpointText: string, cosignature: Cosignature): boolean;
}

/** The cosignature a signature line holds, or null when the line is not one (wrong length, not base64, …). */
export function parseCosignatureLine(line: string): Cosignature | null {
  const split = splitLine(line);
  if (!split) return null;
  const { name, bytes } = split;
  const timestamp = bytes.readBigUInt64BE(4);
  if (timestamp > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const body = line.endsWith('\n') ? line.slice(0, -1) : line;
  return {
    keyName: name,
    keyId: bytes.subarray(0, 4).toString('hex'),
    timestamp: Number(timestamp),
    line: `${body}\n`,
  };
}

/**
 * The witness keys among `verifiers` that validly cosigned the checkpoint in `note` (a cosigned signed note: the
 * log's signature lines and the witnesses' under the text). Lines that are not cosignatures are skipped.
 */
export function cosignedBy(note: string, verifiers: readonly CosignatureVerifier[]): CosignatureVerifier[] {
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

function splitLine(line: string): { name: string; bytes: Buffer } | null {
  const body = line.endsWith('\n') ? line.slice(0, -1) : line;
  if (!body.startsWith(SIGNATURE_PREFIX) || body.includes('\n')) return null;
  const [name, encoded, ...rest] = body.slice(SIGNATURE_PREFIX.length).split(' ');
  if (!name || !encoded || rest.length > 0 || !validKeyName(name)) return null;
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length !== COSIGNATURE_BYTES || bytes.toString('base64') !== encoded) return null;
  return { name, bytes };
}

/** Every cosignature line of a witness's answer (one line per key it signs with); null if any line is not one. */
export function parseCosignatureLines(body: string): Cosignature[] | null {
  if (!body.endsWith('\n')) return null;
  const lines = body.slice(0, -1).split('\n');
  const parsed = lines.map(parseCosignatureLine);
  return parsed.length > 0 && parsed.every((c) => c !== null) ? (parsed as Cosignature[]) : null;
}

/** A verifier from a witness's verifier key; refuses one that is not a cosignature/v1 key or does not add up. */
export function cosignatureVerifier(verifierKey: string): CosignatureVerifier {
  const { name, keyId, publicKey } = readVerifierKey(verifierKey, {
    type: COSIGNATURE_V1,
    what: 'witness key',
    kind: 'a cosignature/v1 key',
  });
  return {
    name,
    keyId,
    verifierKey,
    verify(checkpointText, cosignature) {
      const split = splitLine(cosignature.line);
      if (!split || split.name !== name || !split.bytes.subarray(0, 4).equals(keyId)) return false;
      const timestamp = split.bytes.readBigUInt64BE(4);
      if (timestamp !== BigInt(cosignature.timestamp)) return false;
      return verify(null, cosignedMessage(checkpointText, cosignature.timestamp), publicKey, split.bytes.subarray(12));
    },
  };
}

/** What a witness signs: `cosignature/v1`, the time, then the checkpoint's text. */
export function cosignedMessage(checkpointText: string, timestamp: number): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${timestamp}\n${checkpointText}`, 'utf8');
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
