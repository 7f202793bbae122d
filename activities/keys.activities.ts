import type { DataKeyVault } from '../src/substrate/crypto/data-key-vault.js';
import { destroyOlderEpochs } from '../src/substrate/crypto/kek-rotation.js';
import { recordDestroyedEpochs, type EpochDestructionDeps } from '../src/governance/keys/epoch-destruction.js';
import { beating } from './erasure/erasure-context.js';

export interface KeyActivityDeps {
  vault: DataKeyVault;
  requests: EpochDestructionDeps['requests'];
  audit: EpochDestructionDeps['audit'];
}

/** Who the audit chain names for a scheduled rotation. */
export const SCHEDULED_ROTATION_ACTOR = 'kek-rotation-schedule';

/**
 * The scheduled KEK rotation, a step per activity (the workflow waits between the two re-wrap passes on a durable
 * timer). Each step can run again: a re-wrap moves only keys still under older epochs, a destruction skips epochs
 * destroyed already, and the audit entries are keyed by epoch. Beginning an epoch is the one step that is not: a
 * retry after a lost answer begins another, newer epoch, which the rest of the run then uses; the unused one between
 * them wraps nothing and is destroyed with the others by the next rotation.
 */
export function createKeyActivities(deps: KeyActivityDeps) {
  return {
    async kekBeginEpoch(): Promise<number> {
      return deps.vault.keks.beginEpoch();
    },
    async kekRewrap(input: { epoch: number }): Promise<number> {
      return beating(() => deps.vault.rewrapOlderThan(input.epoch));
    },
    async kekDestroyOlder(input: { epoch: number }): Promise<{ destroyed: number[]; kept: number[] }> {
      return beating(() => destroyOlderEpochs(deps.vault, deps.vault.keks, input.epoch));
    },
    async kekRecordDestroyed(input: { destroyed: number[] }): Promise<number> {
      return recordDestroyedEpochs(
        { requests: deps.requests, audit: deps.audit, keks: deps.vault.keks },
        input.destroyed,
        SCHEDULED_ROTATION_ACTOR,
      );
    },
    async kekSweepTombs(): Promise<number> {
      return deps.vault.sweepTombs();
    },
  };
}
