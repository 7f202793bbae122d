import type { DataKeyVault } from './data-key-vault.js';
import type { KeyEncryptionKeys } from './key-encryption-keys.port.js';

export interface RotationOutcome {
  epoch: number;
  rewrapped: number;
  /** Epochs whose key material this rotation destroyed. */
  destroyed: number[];
  /** Epochs left alive because data keys under them remained after the second pass (none, normally). */
  kept: number[];
  /** Tombs of key pages' older generations, a day old, deleted. */
  tombsSwept: number;
}

/**
 * A KEK rotation: begin a new epoch, re-wrap every live data key under it, then destroy every older epoch. After it,
 * a data key deleted before the rotation survives in the database's log or a backup only wrapped under a destroyed
 * epoch: the erased content it sealed can no longer be opened from any copy.
 *
 * A key wrapped by a writer that read the keyring just before the new epoch began may land after the first pass: a
 * second pass, `settleMs` later (at least the longest write of a key), re-wraps it. An older epoch that still wraps
 * any key after that is kept, and named, rather than destroyed with live data under it.
 */
export async function rotateKeks(
  vault: DataKeyVault,
  keks: KeyEncryptionKeys,
  options: { settleMs: number; onProgress?: (done: number) => void },
): Promise<RotationOutcome> {
  const epoch = await keks.beginEpoch();
  let rewrapped = await vault.rewrapOlderThan(epoch, options.onProgress);
  await new Promise((resolve) => setTimeout(resolve, options.settleMs));
  rewrapped += await vault.rewrapOlderThan(epoch, options.onProgress);
  const { destroyed, kept } = await destroyOlderEpochs(vault, keks, epoch);
  return { epoch, rewrapped, destroyed, kept, tombsSwept: await vault.sweepTombs() };
}

/**
 * Destroys every live epoch older than `epoch` that wraps no data key any more, and names those that still do.
 * Idempotent: an epoch destroyed already is not looked at again.
 */
export async function destroyOlderEpochs(
  vault: Pick<DataKeyVault, 'countUnder'>,
  keks: KeyEncryptionKeys,
  epoch: number,
): Promise<{ destroyed: number[]; kept: number[] }> {
  const destroyed: number[] = [];
  const kept: number[] = [];
  for (const older of (await keks.epochs()).filter((e) => e.epoch < epoch && e.destroyedAt === null)) {
    if ((await vault.countUnder(older.epoch)) > 0) {
      kept.push(older.epoch);
      continue;
    }
    await keks.destroyEpoch(older.epoch);
    destroyed.push(older.epoch);
  }
  return { destroyed, kept };
}
