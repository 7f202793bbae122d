/**
 * C2SP witness cosignatures (https://c2sp.org/tlog-cosignature), `cosignature/v1`: a signed-note signature line
 * `— <witness name> <base64(key id ‖ timestamp ‖ signature)>`, where the key id is the first four bytes of
 * SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key), the timestamp is 8 bytes of big-endian Unix seconds, and the Ed25519
 * signature is over `cosignature/v1\ntime <timestamp>\n` followed by the checkpoint's text. The witness's verifier
 * key is `<name>+<key id, hex>+<base64(0x04 ‖ public key)>`. Reading lines is pure (`cosignature-format.ts`, shared
 * with the auditor console's page); this module adds the Node verifier.
 */
import { verify } from 'node:crypto';
import { readVerifierKey } from '../log-tree/signed-note.js';
import { COSIGNATURE_V1, cosignatureBy, cosignedMessage, type Cosignature } from './cosignature-format.js';

export {
  cosignedBy,
  cosignedMessage,
  cosignedNote,
  parseCosignatureLine,
  parseCosignatureLines,
  withCosignatures,
  type Cosignature,
} from './cosignature-format.js';

export interface CosignatureVerifier {
  name: string;
  keyId: Buffer;
  /** The verifier key this was read from. */
  verifierKey: string;
  /** Whether `cosignature` is this key's valid cosignature of `checkpointText` (the note's text, signatures off). */
  verify(checkpointText: string, cosignature: Cosignature): boolean;
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
      const parts = cosignatureBy(name, keyId, cosignature);
      return (
        parts !== null && verify(null, cosignedMessage(checkpointText, parts.timestamp), publicKey, parts.signature)
      );
    },
  };
}
