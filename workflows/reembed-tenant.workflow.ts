import { ApplicationFailure, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createReembedActivities, ReembedPage, ReembedStart } from '../activities/reembed.activities.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import type { ReembedInput } from '../src/temporal/contracts/reembed.contract.js';
import type { ReembedProgress } from '../src/temporal/contracts/reembed.contract.js';
import { reembedProgressQuery } from '../src/temporal/contracts/reembed.contract.js';

type Activities = ReturnType<typeof createReembedActivities>;
const quick = proxyActivities<Activities>(RetryProfiles.quick);
const writes = proxyActivities<Activities>(RetryProfiles.storeWrite);

/**
 * Re-embeds one tenant's index with the worker's embedder: a new index is filled beside the live one (which
 * keeps serving), swapped in atomically, then checked against the store: records changed during the copy are
 * indexed again, and any document whose record an erasure removed meanwhile is deleted. A failure before the
 * alias moves abandons the new index and leaves the live one as it was; once it has moved the steps only repair
 * forward.
 */
export async function reembedTenant(input: ReembedInput): Promise<ReembedProgress> {
  const pageSize = input.pageSize ?? 500;
  const { tenant } = input;
  const since = new Date(workflowInfo().startTime).toISOString();
  const progress: ReembedProgress = {
    phase: 'begin',
    model: null,
    copied: 0,
    withdrawn: 0,
    caughtUp: 0,
    reconciled: 0,
    removed: 0,
  };
  setHandler(reembedProgressQuery, () => ({ ...progress }));

  const start: ReembedStart = await quick.reembedBegin({ tenant, generation: input.generation });
  progress.model = start.model;

  const walk = async (step: (after: string | null) => Promise<ReembedPage>, add: (p: ReembedPage) => void) => {
    let after: string | null = null;
    for (;;) {
      const page: ReembedPage = await step(after);
      add(page);
      if (page.done) return;
      after = page.last;
    }
  };

  try {
    progress.phase = 'copy';
    await walk(
      (after) => writes.reembedCopyPage({ tenant, after, pageSize }),
      (p) => {
        progress.copied += p.written;
        progress.withdrawn += p.withdrawn;
      },
    );
    progress.phase = 'swap';
    await writes.reembedSwap({ tenant, start, workflowId: workflowInfo().workflowId, copied: progress.copied });
  } catch (error) {
    const { live } = await writes.reembedAbandon({ tenant, target: start.target });
    if (!live) {
      progress.phase = 'abandoned';
      throw ApplicationFailure.nonRetryable(
        `re-embedding abandoned before the swap; the live index is unchanged (${(error as Error).message})`,
        'ReembedAbandoned',
      );
    }
    // The alias had moved when the swap failed (deleting the old index failed): the new index serves, so the
    // catch-up and reconcile below must still run. The old index is left behind no alias: erasure reaches it
    // and `lethe index reconcile` deletes it.
    progress.oldIndexLeft = true;
  }

  progress.phase = 'catch-up';
  await walk(
    (after) => writes.reembedCatchUpPage({ tenant, since, after, pageSize }),
    (p) => {
      progress.caughtUp += p.written;
      progress.removed += p.withdrawn;
    },
  );
  progress.phase = 'reconcile';
  await walk(
    (after) => writes.reembedReconcilePage({ tenant, after, pageSize }),
    (p) => {
      progress.reconciled += p.seen;
      progress.removed += p.withdrawn;
    },
  );
  progress.phase = 'done';
  return { ...progress };
}
