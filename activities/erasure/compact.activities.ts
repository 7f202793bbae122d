import { beating, type ErasureActivityDeps, type ErasureContext, type ErasureRef } from './erasure-context.js';
import { COMPACTED } from './purge.activities.js';

/** Steps 4c and 4d: index deletions made physical, then the collections that held the records rewritten. */
export function createCompactActivities(deps: ErasureActivityDeps, ctx: ErasureContext) {
  return {
    /** Step 4c: make index deletions physical; the workflow waits and retries while deleted docs remain. */
    async expungeIndex(ref: ErasureRef): Promise<{ deletedDocs: number; segments: number }> {
      return ctx.step(ref, 'expunge', async () => {
        const stats = await deps.index.expungeDeleted(ref.tenant);
        const expunged = (await ctx.request(ref)).indicesExpunged ?? [];
        await deps.requests.update(ref.tenant, ref.requestId, {
          indicesExpunged: [...new Set([...expunged, ...stats.indices.map((i) => i.index)])],
        });
        return { deletedDocs: stats.deletedDocs, segments: stats.segments };
      });
    },

    /** Step 4d: rewrite the MongoDB collections that held the records (compact, force). */
    async compactStores(ref: ErasureRef): Promise<{ collections: number }> {
      const { compacted, proof } = await beating(() => deps.storage.compactProved(COMPACTED));
      await deps.requests.update(ref.tenant, ref.requestId, { compacted, compactionProof: proof });
      return { collections: compacted.length };
    },
  };
}
