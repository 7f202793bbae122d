import { executeChild, proxyActivities, sleep } from '@temporalio/workflow';
import type { createConsolidationActivities } from '../activities/consolidation.activities.js';
import { RetryProfiles } from '../src/shared/retry-profiles.js';
import { ingestBatch } from './ingest-batch.workflow.js';
import type { ConsolidationInput, ConsolidationResult } from '../src/temporal/contracts/consolidation.contract.js';

const { planConsolidation } = proxyActivities<ReturnType<typeof createConsolidationActivities>>(
  RetryProfiles.storeWrite,
);

/**
 * Consolidation of one namespace and owner scope into views. The views are planned (keyed by their inputs, rule,
 * model and prompt, so a re-run builds nothing twice), then each is written through the ingestion workflow like any
 * write: write policy, tombstones, erasure fences, trust caps, taint, the derivation audit, sign-off. One view per
 * batch, so one refused view refuses only itself; one at a time, with a pause between, so a run never crowds out
 * online writes and reads. The history holds ids and counts only.
 */
export async function consolidation(input: ConsolidationInput): Promise<ConsolidationResult> {
  const plan = await planConsolidation({
    tenant: input.tenant,
    namespace: input.namespace,
    principal: input.principal,
    roles: input.roles,
    scope: input.scope,
  });
  const views: ConsolidationResult['views'] = [];
  for (const [i, staged] of plan.staged.entries()) {
    if (i > 0 && input.pauseMs > 0) await sleep(input.pauseMs);
    const written = await executeChild(ingestBatch, {
      workflowId: `ingest-${input.tenant}-${staged.stageId}`,
      args: [{ tenant: input.tenant, stageId: staged.stageId }],
    });
    const view = written.memories[0];
    views.push(
      written.refused || !view
        ? { id: staged.viewId, inputs: staged.inputs, status: 'refused', refusal: written.refused?.type ?? 'none' }
        : { id: staged.viewId, inputs: staged.inputs, status: view.status },
    );
  }
  return {
    trigger: input.trigger,
    read: plan.read,
    built: views.filter((v) => v.status !== 'refused').length,
    existing: plan.existing,
    tombstoned: plan.tombstoned,
    skipped: plan.skipped,
    refused: plan.refused,
    views,
  };
}
