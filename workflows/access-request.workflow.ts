import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { createAccessActivities } from '../activities/access.activities.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import type { AccessInput } from '../src/temporal/contracts/access-request.contract.js';
import type { AccessOutcome } from '../src/temporal/contracts/access-request.contract.js';

type Activities = ReturnType<typeof createAccessActivities>;
const writes = proxyActivities<Activities>(RetryProfiles.storeWrite);
const notify = proxyActivities<Activities>(RetryProfiles.notify);

/**
 * An access and portability request (Art. 15, 20): build the signed package, tell the DPO, keep it for the
 * delivery window, then erase it. A build that fails for good marks the request failed (and erases whatever was
 * stored); a notification that cannot be sent does not hold the package back.
 */
export async function accessRequest(input: AccessInput): Promise<AccessOutcome> {
  const ref = { tenant: input.tenant, requestId: input.requestId };
  let built;
  try {
    built = await writes.buildAccessPackage({ ...ref, deliveryWindowMs: input.deliveryWindowMs });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    const errorType = cause instanceof ApplicationFailure ? (cause.type ?? 'Error') : 'Error';
    await writes.failAccessRequest({ ...ref, errorType });
    return { state: 'failed', counts: {} };
  }
  try {
    await notify.notifyAccessReady({
      ...ref,
      expiresAt: built.expiresAt,
      records: (built.counts.events ?? 0) + (built.counts.memories ?? 0),
    });
  } catch {
    // The package is on the request's page either way; the mail is a courtesy.
  }
  await sleep(Date.parse(built.expiresAt) - Date.parse(built.readyAt));
  await writes.expireAccessPackage(ref);
  return { state: 'expired', counts: built.counts };
}
