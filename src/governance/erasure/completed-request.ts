import type { ErasureFenceStore } from './erasure-fence-store.js';
import type { ErasureRequestStore } from './erasure-request-store.js';
import type { ErasureSetStore } from './erasure-set-store.js';

/**
 * What a completed request lets go of: its fences (writes about the subject are admitted again, and checked against
 * its tombstones), the selector's clear values (its keyed hash stays), and its id sets and facts. Run when the
 * erasure completes, and again by `lethe restore reapply-erasures` on a request row a backup brought back. Idempotent.
 */
export async function releaseCompletedRequest(
  deps: { fences: ErasureFenceStore; requests: ErasureRequestStore; sets: ErasureSetStore },
  tenant: string,
  requestId: string,
): Promise<{ fences: number }> {
  const fences = await deps.fences.lower(tenant, requestId);
  await deps.requests.dropSelector(tenant, requestId);
  await deps.sets.drop(tenant, requestId);
  return { fences };
}
