/**
 * The audit log's checks, run in the page with the verifiers `lethe verify --log-key` runs (bundled as they are; their
 * Ed25519 checks answered by WebCrypto, see console/src/verify/): the latest checkpoint under the log key and each
 * configured witness's cosignature of it, a certificate's inclusion under the checkpoint it carries, and that the
 * log extends the checkpoint this browser saw last.
 */
import { parseCheckpoint } from '../../../src/governance/audit/log-tree/checkpoint.js';
import { checkConsistency, type ConsistencyVerdict } from '../../../src/governance/audit/log-tree/consistency-check.js';
import type { LaterCheckpoint } from '../../../src/governance/audit/log-tree/log-anchor.js';
import {
  isAnchoredCertificate,
  verifyAnchoredCertificate,
  type AnchoredVerdict,
} from '../../../src/governance/certificates/anchored-certificate.js';
import type { CheckpointView, WitnessKeysView } from '../../../src/shared/api-contract/audit.js';
import { fromBase64, toBase64 } from '../../../src/shared/bytes.js';
import { checkCosignatures, cosignatureVerifier, cosignedBy } from '../verify/cosignature.browser.js';
import { checkNoteSignatures, noteVerifier, openNote } from '../verify/signed-note.browser.js';
import { checkSignatures } from '../verify/verification-key.browser.js';

/** One configured witness and what its cosignature of the checkpoint came to. */
export interface WitnessVerdict {
  witness: string;
  keyName: string;
  /** `verified`: a valid cosignature by its key; `missing`: none listed; `invalid`: one listed that does not verify. */
  state: 'verified' | 'missing' | 'invalid';
}

export type CheckpointVerdict =
  { ok: true; origin: string; size: number; root: string; witnesses: WitnessVerdict[] } | { ok: false; reason: string };

/**
 * The checkpoint opened under `logKey` (pinned by the auditor, or taken from the log on a first visit), the fields the
 * API served beside the note checked against the signed text, and each configured witness's cosignature.
 */
export async function verifyCheckpoint(
  view: CheckpointView,
  logKey: string,
  witnesses: WitnessKeysView['witnesses'],
): Promise<CheckpointVerdict> {
  let name: string;
  try {
    name = noteVerifier(logKey).name;
  } catch (error) {
    return { ok: false, reason: `the log key is not a verifier key: ${(error as Error).message}` };
  }
  await checkNoteSignatures([view.note], [logKey]);
  const text = openNote(view.note, [noteVerifier(logKey)]);
  if (text === null)
    return { ok: false, reason: `signature: the checkpoint is not signed by ${name} (changed, or another key)` };
  const signed = parseCheckpoint(text);
  if (!signed) return { ok: false, reason: 'signature: the signed note is not a checkpoint' };
  if (signed.origin !== name) return { ok: false, reason: `origin: the checkpoint names log ${signed.origin}` };
  const root = toBase64(signed.root);
  if (view.origin !== signed.origin || view.size !== signed.size || view.root !== root)
    return { ok: false, reason: 'the origin, size or root served beside the note differ from the signed ones' };
  await checkCosignatures(
    [view.note],
    witnesses.map((w) => w.key),
  );
  return {
    ok: true,
    origin: signed.origin,
    size: signed.size,
    root,
    witnesses: witnesses.map((w) => witnessVerdict(view, w)),
  };
}

function witnessVerdict(view: CheckpointView, w: { name: string; key: string }): WitnessVerdict {
  const listed = view.cosignatures.some((c) => c.witness === w.name);
  try {
    const verifier = cosignatureVerifier(w.key);
    const verified = cosignedBy(view.note, [verifier]).length === 1;
    return { witness: w.name, keyName: verifier.name, state: verified ? 'verified' : listed ? 'invalid' : 'missing' };
  } catch {
    return { witness: w.name, keyName: w.key.split('+')[0] ?? w.name, state: 'invalid' };
  }
}

/** Asks the log for the consistency proof between two sizes (base64 hashes). */
export type ProofOf = (from: number, to: number) => Promise<string[]>;

/** That the current checkpoint extends the one kept: both open under the key, same log, no fork, no shrinking. */
export async function verifyExtends(
  keptNote: string,
  currentNote: string,
  logKey: string,
  proofOf: ProofOf,
): Promise<ConsistencyVerdict> {
  await checkNoteSignatures([keptNote, currentNote], [logKey]);
  return checkConsistency(keptNote, currentNote, logKey, async (from, to) => (await proofOf(from, to)).map(hash));
}

/**
 * An anchored certificate (…/certificates/:id/anchored): its seal under the certificate key, that its audit entry
 * records it, the anchor's checkpoint under the log key and the inclusion proof to its root; with `later` (the
 * checkpoint verified above, and a proof between the two), that the anchor's tree is a prefix of it.
 */
export async function verifyCertificateInclusion(
  anchored: unknown,
  keys: { publicKeyPem: string; logKey: string },
  later?: LaterCheckpoint,
): Promise<AnchoredVerdict> {
  if (isAnchoredCertificate(anchored)) {
    await checkSignatures([keys.publicKeyPem], [JSON.stringify(anchored.certificate)]);
    const notes = [anchored.logAnchor?.checkpoint, later?.note].filter((n): n is string => typeof n === 'string');
    await checkNoteSignatures(notes, [keys.logKey]);
  }
  return verifyAnchoredCertificate(anchored, {
    publicKeys: [keys.publicKeyPem],
    logKey: keys.logKey,
    ...(later ? { later } : {}),
  });
}

/** A proof's hash; one that is not base64 is empty, which no proof accepts. */
const hash = (h: string) => fromBase64(h) ?? new Uint8Array(0);
