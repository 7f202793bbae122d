import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createKeyActivities } from '../activities/keys.activities.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import type { KekRotationResult } from '../src/temporal/contracts/kek-rotation.contract.js';

type Activities = ReturnType<typeof createKeyActivities>;
const quick = proxyActivities<Activities>(RetryProfiles.quick);
const long = proxyActivities<Activities>(RetryProfiles.longPurge);

/** Between the two re-wrap passes: far longer than any single key write takes (as `lethe keys rotate` waits). */
const SETTLE = '2 seconds';

/**
 * One KEK rotation, started by the worker's schedule: a new epoch, every live data key re-wrapped under it (twice,
 * for keys written by a process that had not yet seen the new epoch), every older epoch that wraps nothing destroyed,
 * and each destruction entered in the audit chain of every tenant whose certificates date a lapse from it.
 */
export async function kekRotation(): Promise<KekRotationResult> {
  const epoch = await quick.kekBeginEpoch();
  let rewrapped = await long.kekRewrap({ epoch });
  await sleep(SETTLE);
  rewrapped += await long.kekRewrap({ epoch });
  const { destroyed, kept } = await long.kekDestroyOlder({ epoch });
  const recorded = await long.kekRecordDestroyed({ destroyed });
  const tombsSwept = await quick.kekSweepTombs();
  return { epoch, rewrapped, destroyed, kept, recorded, tombsSwept };
}
