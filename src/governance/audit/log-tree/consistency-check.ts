/**
 * What an auditor runs between two visits: both checkpoints must open under the log's verifier key (pinned by the
 * auditor, never taken from the log), name the same log, and the later one must extend the earlier, by a consistency
 * proof the log is asked for. A log that rewrote its past cannot give one. With a witness policy, the later one must
 * also carry valid cosignatures (c2sp.org/tlog-cosignature) by at least `min` of the witness keys the auditor trusts:
 * a witness cosigns only a tree that extends every tree of the log it saw, so the log cannot show the auditor a
 * history other than the one it showed the witnesses. Pure but for `proofOf`.
 */
import { parseCheckpoint, type Checkpoint } from './checkpoint.js';
import { verifyConsistency } from './merkle-verify.js';
import type { Hash } from './merkle-tree.js';
import { noteVerifier, openNote } from './signed-note.js';
import { cosignatureVerifier, cosignedBy } from '../witness/cosignature.js';

export type ConsistencyVerdict = { ok: true; origin: string; from: number; to: number } | { ok: false; reason: string };

/** Witnesses the auditor trusts (their cosignature keys, pinned by the auditor) and how many must have cosigned. */
export interface WitnessPolicy {
  keys: readonly string[];
  min: number;
}

export async function checkConsistency(
  earlierNote: string,
  laterNote: string,
  verifierKey: string,
  proofOf: (from: number, to: number) => Promise<Hash[]>,
  witnesses?: WitnessPolicy,
): Promise<ConsistencyVerdict> {
  const verifier = noteVerifier(verifierKey);
  const open = (note: string, which: string): Checkpoint | string => {
    const text = openNote(note, [verifier]);
    if (text === null) return `the ${which} checkpoint is not signed by ${verifier.name}`;
    return parseCheckpoint(text) ?? `the ${which} checkpoint is not a checkpoint`;
  };
  const earlier = open(earlierNote, 'earlier');
  if (typeof earlier === 'string') return { ok: false, reason: earlier };
  const later = open(laterNote, 'later');
  if (typeof later === 'string') return { ok: false, reason: later };
  if (earlier.origin !== later.origin)
    return { ok: false, reason: `the checkpoints are of two logs: ${earlier.origin} and ${later.origin}` };
  if (later.size < earlier.size)
    return {
      ok: false,
      reason: `the later checkpoint (${later.size}) is smaller than the earlier (${earlier.size}): the log shrank`,
    };
  if (witnesses) {
    const cosigned = cosignedBy(laterNote, witnesses.keys.map(cosignatureVerifier)).length;
    if (cosigned < witnesses.min)
      return {
        ok: false,
        reason: `the later checkpoint is cosigned by ${cosigned} of the witnesses given, fewer than ${witnesses.min}`,
      };
  }
  const done = { ok: true as const, origin: earlier.origin, from: earlier.size, to: later.size };
  if (earlier.size === 0) return done;
  if (earlier.size === later.size)
    return equalHashes(earlier.root, later.root)
      ? done
      : { ok: false, reason: `two different trees of ${later.size} entries: the log forked` };
  const proof = await proofOf(earlier.size, later.size);
  return verifyConsistency(earlier.size, later.size, proof, earlier.root, later.root)
    ? done
    : { ok: false, reason: `no proof joins the tree of ${earlier.size} to the tree of ${later.size}: the log forked` };
}

function equalHashes(a: Hash, b: Hash): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
