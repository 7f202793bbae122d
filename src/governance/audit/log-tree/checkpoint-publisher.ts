/**
 * The worker's checkpoint round: every interval, a signed checkpoint of each audit log that grew since its last
 * one, then each of those submitted to the configured witnesses for cosigning. Rounds never overlap; a failed round
 * is logged (tenant ids and the error's type only) and the next one tries again, so a log that grew is checkpointed
 * at most one interval after the store answers again. A witness's failure never stops publishing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../../observability/logger.js';
import type { CheckpointStore } from './checkpoint-store.js';
import type { WitnessRound } from '../witness/witness-round.js';

export interface CheckpointPublisher {
  /** Ends the loop after the round under way; resolves once it has ended. */
  stop(): Promise<void>;
}

export function startCheckpointPublisher(deps: {
  checkpoints: Pick<CheckpointStore, 'publishAll'>;
  /** Asks the witnesses to cosign what a round signed (never throws). */
  witnesses?: WitnessRound;
  everyMs: number;
  log: Pick<Logger, 'warn' | 'debug'>;
}): CheckpointPublisher {
  const stopping = new AbortController();
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        const signed = await deps.checkpoints.publishAll();
        if (signed.length > 0) {
          const witnessed = deps.witnesses ? await deps.witnesses(signed) : undefined;
          deps.log.debug({ signed: signed.length, ...witnessed }, 'audit checkpoints signed');
        }
      } catch (error) {
        deps.log.warn({ error: (error as Error).name }, 'audit checkpoint round failed; the next round retries');
      }
      await sleep(deps.everyMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
