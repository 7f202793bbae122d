/**
 * The browser's signed-note verifier for the shared log verifiers (log-anchor.ts, consistency-check.ts, bundled as
 * they are): parsing and opening are the shared pure code; the Ed25519 checks are WebCrypto's. WebCrypto verifies
 * asynchronously and the shared verifiers are synchronous, so `checkNoteSignatures` first verifies the notes'
 * signature lines under the keys given; a verifier then reads those verdicts. A signature not checked this way never
 * verifies.
 */
import {
  ED25519,
  parseNote,
  readVerifierKeyParts,
  type NoteVerifier,
} from '../../../src/governance/audit/log-tree/signed-note-format.js';
import { equalBytes, toBase64, toHex } from '../../../src/shared/bytes.js';
import { sha256Hex } from './sha256.browser.js';
import { verdictStore } from './webcrypto-ed25519.browser.js';

export {
  openNote,
  parseNote,
  type NoteSignature,
  type NoteVerifier,
} from '../../../src/governance/audit/log-tree/signed-note-format.js';

const verdicts = verdictStore();
const key = (keyId: Uint8Array, text: string, signature: Uint8Array) =>
  `${toHex(keyId)}\n${toBase64(signature)}\n${sha256Hex(text)}`;

const read = (verifierKey: string) =>
  readVerifierKeyParts(verifierKey, { type: ED25519, what: 'verifier key', kind: 'an Ed25519 key' });

/** A verifier from a verifier key string; refuses one that does not add up (as the Node one does). */
export function noteVerifier(verifierKey: string): NoteVerifier {
  const { name, keyId } = read(verifierKey);
  return { name, keyId, verify: (text, signature) => verdicts.get(key(keyId, text, signature)) };
}

/** Verifies, with WebCrypto, each signature line of each note made by one of the keys given (by name and key id). */
export async function checkNoteSignatures(notes: readonly string[], verifierKeys: readonly string[]): Promise<void> {
  for (const verifierKey of verifierKeys) {
    const { name, keyId, publicKey } = read(verifierKey);
    for (const note of notes) {
      const parsed = parseNote(note);
      for (const s of parsed?.signatures ?? []) {
        if (s.name !== name || !equalBytes(s.keyId, keyId)) continue;
        const message = new TextEncoder().encode(parsed!.text);
        await verdicts.check(key(keyId, parsed!.text, s.signature), publicKey, s.signature, message);
      }
    }
  }
}
