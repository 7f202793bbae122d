/**
 * The wire format of a C2SP tlog-witness's `POST /add-checkpoint` (https://c2sp.org/tlog-witness): the request is
 * `old <size>`, one line per consistency-proof hash (base64), a blank line, then the checkpoint's signed note; a
 * `409 Conflict` answers `<size>\n` (`text/x.tlog.size`), the size the witness has seen. Pure.
 */
import { parseCheckpoint, type Checkpoint } from '../log-tree/checkpoint.js';
import { parseNote } from '../log-tree/signed-note.js';
import { validationError } from '../../../shared/errors.js';
import type { AddCheckpointRequest } from './witness.port.js';

/** The spec's bound on a proof: a tree of 2⁶³ entries needs no more. */
const MAX_PROOF_HASHES = 63;

export function formatAddCheckpoint(request: AddCheckpointRequest): string {
  if (!Number.isSafeInteger(request.oldSize) || request.oldSize < 0)
    throw validationError('oldSize', 'a tree size, a whole number ≥ 0');
  if (request.proof.length > MAX_PROOF_HASHES) throw validationError('proof', `at most ${MAX_PROOF_HASHES} hashes`);
  if (request.proof.some((h) => h.length !== 32)) throw validationError('proof', 'SHA-256 hashes');
  const proof = request.proof.map((h) => `${Buffer.from(h).toString('base64')}\n`).join('');
  return `old ${request.oldSize}\n${proof}\n${request.note}`;
}

/** The tree size a 409's body reports, or null when the body is not one decimal size and a newline. */
export function parseSizeConflict(body: string): number | null {
  const match = /^(0|[1-9][0-9]{0,15})\n$/u.exec(body);
  if (!match) return null;
  const size = Number(match[1]);
  return Number.isSafeInteger(size) ? size : null;
}

/**
 * The checkpoint a note holds when it may be sent to a witness as it is: a signed note (no control character but
 * the newline, so no NUL), whose text is a checkpoint (so an origin of one line). Refused as a ValidationError
 * otherwise, before any byte leaves.
 */
export function submittableCheckpoint(note: string): { text: string; checkpoint: Checkpoint } {
  const parsed = parseNote(note);
  if (!parsed) throw validationError('note', 'not a signed note (or it holds a control character)');
  const checkpoint = parseCheckpoint(parsed.text);
  if (!checkpoint) throw validationError('note', 'its text is not a checkpoint (origin, size, root hash)');
  return { text: parsed.text, checkpoint };
}
