/**
 * Gets one witness's cosignature of a log's checkpoint. The witness is told the size it last cosigned for the log
 * (remembered here; 0 at first) with the consistency proof from there. When it has seen another size it says which
 * (409): the proof is rebuilt from that size and sent once more, which is also how a witness that missed
 * checkpoints (down, or cosigning for another worker) catches up. A witness that does not know the log (403) is told
 * about it once, where this host administers it (`LogEnrolment`). Only a cosignature that verifies under the
 * witness's pinned key, over this checkpoint's text, is returned.
 */
import { BoundedMap } from '../../../shared/bounded-map.js';
import type { Hash } from '../log-tree/merkle-tree.js';
import type { Cosignature } from './cosignature.js';
import { submittableCheckpoint } from './add-checkpoint.js';
import { WitnessError, witnessRefused, type LogEnrolment, type Witness } from './witness.port.js';

export interface CheckpointCosigner {
  readonly witness: string;
  /** The witness's cosignature of the checkpoint in `note`; throws WitnessError, or a ValidationError before sending. */
  cosign(log: {
    note: string;
    /** The verifier key the log signs its checkpoints with (what a witness that does not know the log is told). */
    verifierKey: string;
    /** The log's consistency proof between two of its sizes. */
    proofOf(from: number, to: number): Promise<Hash[]>;
  }): Promise<Cosignature>;
}

/** Logs whose size at this witness is remembered, across tenants. */
const KNOWN_SIZES = 10_000;

export function createCheckpointCosigner(deps: { witness: Witness; enrolment?: LogEnrolment }): CheckpointCosigner {
  const { witness } = deps;
  const known = new BoundedMap<string, number>(KNOWN_SIZES);
  return {
    witness: witness.name,
    async cosign({ note, verifierKey, proofOf }) {
      const { text, checkpoint } = submittableCheckpoint(note);
      const { origin, size } = checkpoint;
      let oldSize = Math.min(known.get(origin) ?? 0, size);
      let conflicts = 0;
      let enrolled = false;
      for (;;) {
        const proof = oldSize === 0 || oldSize === size ? [] : await proofOf(oldSize, size);
        let answer;
        try {
          answer = await witness.addCheckpoint({ oldSize, proof, note });
        } catch (error) {
          if (error instanceof WitnessError && error.witnessStatus === 403 && deps.enrolment && !enrolled) {
            enrolled = true;
            await deps.enrolment.enrol(origin, verifierKey);
            continue;
          }
          throw error;
        }
        if (answer.kind === 'size-conflict') {
          const seen = answer.witnessSize;
          if (seen > size)
            throw witnessRefused(
              witness.name,
              `it has seen a larger tree (${seen}) than this checkpoint's (${size})`,
              409,
            );
          if (++conflicts > 1) throw witnessRefused(witness.name, 'its tree size changed again after one retry', 409);
          oldSize = seen;
          continue;
        }
        const valid = answer.cosignatures.find((c) => witness.verifier.verify(text, c));
        if (!valid) throw witnessRefused(witness.name, 'none of its cosignatures verifies under its pinned key', 200);
        known.set(origin, size);
        return valid;
      }
    },
  };
}
