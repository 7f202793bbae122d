/**
 * The browser's witness cosignature verifier for the shared log verifiers (consistency-check.ts, bundled as it is):
 * reading lines is the shared pure code; the Ed25519 checks are WebCrypto's, made beforehand by
 * `checkCosignatures` (see signed-note.browser.ts for why).
 */
import {
  COSIGNATURE_V1,
  cosignatureBy,
  cosignedMessage,
  parseCosignatureLine,
  type Cosignature,
} from '../../../src/governance/audit/witness/cosignature-format.js';
import { readVerifierKeyParts } from '../../../src/governance/audit/log-tree/signed-note-format.js';
import { toBase64, toHex } from '../../../src/shared/bytes.js';
import { sha256Hex } from './sha256.browser.js';
import { verdictStore } from './webcrypto-ed25519.browser.js';

export {
  cosignedBy,
  parseCosignatureLine,
  parseCosignatureLines,
  withCosignatures,
  type Cosignature,
} from '../../../src/governance/audit/witness/cosignature-format.js';

export interface CosignatureVerifier {
  name: string;
  keyId: Uint8Array;
  verifierKey: string;
  verify(checkpointText: string, cosignature: Cosignature): boolean;
}

const verdicts = verdictStore();
const key = (keyId: Uint8Array, text: string, parts: { timestamp: bigint; signature: Uint8Array }) =>
  `${toHex(keyId)}\n${parts.timestamp}\n${toBase64(parts.signature)}\n${sha256Hex(text)}`;

const read = (verifierKey: string) =>
  readVerifierKeyParts(verifierKey, { type: COSIGNATURE_V1, what: 'witness key', kind: 'a cosignature/v1 key' });

/** A verifier from a witness's verifier key; refuses one that is not a cosignature/v1 key or does not add up. */
export function cosignatureVerifier(verifierKey: string): CosignatureVerifier {
  const { name, keyId } = read(verifierKey);
  return {
    name,
    keyId,
    verifierKey,
    verify(checkpointText, cosignature) {
      const parts = cosignatureBy(name, keyId, cosignature);
      return parts !== null && verdicts.get(key(keyId, checkpointText, parts));
    },
  };
}

/** Verifies, with WebCrypto, each cosignature line under each note that one of the witness keys given made. */
export async function checkCosignatures(notes: readonly string[], witnessKeys: readonly string[]): Promise<void> {
  for (const witnessKey of witnessKeys) {
    const { name, keyId, publicKey } = read(witnessKey);
    for (const note of notes) {
      const split = note.lastIndexOf('\n\n');
      if (split < 0 || !note.endsWith('\n')) continue;
      const text = note.slice(0, split + 1);
      for (const line of note.slice(split + 2, -1).split('\n')) {
        const cosignature = parseCosignatureLine(line);
        const parts = cosignature && cosignatureBy(name, keyId, cosignature);
        if (!parts) continue;
        const message = cosignedMessage(text, parts.timestamp);
        await verdicts.check(key(keyId, text, parts), publicKey, parts.signature, message);
      }
    }
  }
}
