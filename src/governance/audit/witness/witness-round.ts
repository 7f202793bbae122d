/**
 * After each publishing round, every newly signed checkpoint goes to every configured witness, and each valid
 * cosignature is kept with its checkpoint. A witness that refuses or is down costs only its own cosignatures: the
 * others are asked, publishing goes on, and the next checkpoint of that log catches the witness up. One that cannot be
 * reached is skipped for the rest of the round, so a hung witness delays a round by one timeout, not one per
 * checkpoint. Logged with ids, sizes, counts and error types only.
 */
import type { Logger } from '../../../observability/logger.js';
import { ErrorType } from '../../../shared/errors.js';
import { mapBounded } from '../../../substrate/mongo/collections.js';
import type { CheckpointStore, SignedCheckpoint } from '../log-tree/checkpoint-store.js';
import type { LogTree } from '../log-tree/log-tree-store.js';
import type { CheckpointCosigner } from './checkpoint-cosigner.js';

export interface WitnessRoundResult {
  cosigned: number;
  failed: number;
}

export type WitnessRound = (published: readonly SignedCheckpoint[]) => Promise<WitnessRoundResult>;

const CONCURRENCY = 4;

export function createWitnessRound(deps: {
  cosigners: readonly CheckpointCosigner[];
  checkpoints: Pick<CheckpointStore, 'addCosignature' | 'verifierKeyOf'>;
  tree: Pick<LogTree, 'consistency'>;
  log: Pick<Logger, 'warn'>;
}): WitnessRound {
  return async (published) => {
    const result: WitnessRoundResult = { cosigned: 0, failed: 0 };
    if (deps.cosigners.length === 0) return result;
    // A witness that could not be reached is not asked again in this round: one that hangs would otherwise cost a
    // timeout per checkpoint, and delay the next publishing round by as much.
    const unreachable = new Set<string>();
    await mapBounded(published, CONCURRENCY, async (checkpoint) => {
      const { tenant, size } = checkpoint;
      for (const cosigner of deps.cosigners) {
        if (unreachable.has(cosigner.witness)) {
          result.failed++;
          continue;
        }
        try {
          const cosignature = await cosigner.cosign({
            note: checkpoint.note,
            verifierKey: deps.checkpoints.verifierKeyOf(tenant),
            proofOf: (from, to) => deps.tree.consistency(tenant, from, to),
          });
          await deps.checkpoints.addCosignature(tenant, size, cosigner.witness, cosignature);
          result.cosigned++;
        } catch (error) {
          result.failed++;
          const { name: type, witnessStatus } = error as { name?: string; witnessStatus?: number };
          if (type === ErrorType.Unavailable) unreachable.add(cosigner.witness);
          deps.log.warn(
            { witness: cosigner.witness, tenant, size, error: type, ...(witnessStatus ? { witnessStatus } : {}) },
            'witness did not cosign a checkpoint; the next checkpoint of the log is submitted again',
          );
        }
      }
    });
    return result;
  };
}
