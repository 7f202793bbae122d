import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { StagingStore } from '../substrate/staging/staging-store.js';
import type { StagedBatch } from '../ingestion/admit-batch.js';
import type { WriteBatch } from '../ingestion/write-schemas.js';
import type { IngestBatchResult } from '../../workflows/ingest-batch.workflow.js';
import type { Principal } from '../governance/auth/principal.js';
import { SearchAttributes } from '../shared/search-attributes.js';

/** A write's answer; `repeated` when an earlier request under the same idempotency key wrote it. */
export type SubmittedWrite = IngestBatchResult & { repeated: boolean };

/** Hands validated writes to the ingestion workflow: stage the content, start the workflow with ids only. */
export interface WriteGateway {
  /**
   * With an idempotency key, the write is the caller's one write under that key: a repeat (a client's retry after
   * its connection closed) answers the first write's result and writes nothing.
   */
  submit(principal: Principal, batch: WriteBatch, idempotencyKey?: string): Promise<SubmittedWrite>;
}

export interface WriteGatewayDeps {
  staging: StagingStore;
  client: Client;
  taskQueue: string;
  /** Called before a tenant's write is staged: its hourly retention sweep must exist before its first record. */
  onTenantWrite?: (tenant: string) => Promise<void>;
}

/** The stage (and so the workflow) a key names: one per principal and key, so callers' keys never collide. */
function keyedStageId(principal: Principal, idempotencyKey: string): string {
  const digest = createHash('sha256').update(`${principal.tenant}\0${principal.id}\0${idempotencyKey}`).digest('hex');
  return `stg_k${digest.slice(0, 32)}`;
}

export function createWriteGateway(deps: WriteGatewayDeps): WriteGateway {
  const workflowIdOf = (tenant: string, stageId: string) => `ingest-${tenant}-${stageId}`;

  /** The answer of an earlier write under this id, waited for if it is still running; null if there was none. */
  async function earlierAnswer(workflowId: string): Promise<IngestBatchResult | null> {
    const handle = deps.client.workflow.getHandle<(input: unknown) => Promise<IngestBatchResult>>(workflowId);
    try {
      await handle.describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
    return handle.result();
  }

  return {
    async submit(principal, batch, idempotencyKey) {
      const stageId = idempotencyKey ? keyedStageId(principal, idempotencyKey) : `stg_${randomUUID()}`;
      const workflowId = workflowIdOf(principal.tenant, stageId);
      // Looked for before staging: a stage is discarded when its workflow ends, and a repeat must not leave one.
      if (idempotencyKey) {
        const earlier = await earlierAnswer(workflowId);
        if (earlier) return { ...earlier, repeated: true };
      }
      await deps.onTenantWrite?.(principal.tenant);
      const body: StagedBatch = {
        roles: principal.roles,
        events: batch.events,
        memories: batch.memories.map((m) => ({ ...m, id: `mem_${randomUUID()}` })),
      };
      await deps.staging.put({
        _id: stageId,
        tenant: principal.tenant,
        principal: principal.id,
        body,
        createdAt: new Date(),
      });
      try {
        const result = await deps.client.workflow.execute('ingestBatch', {
          taskQueue: deps.taskQueue,
          workflowId,
          // A keyed write's id is never run twice, even after the first run ended.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          args: [{ tenant: principal.tenant, stageId }],
          typedSearchAttributes: [
            { key: SearchAttributes.tenant, value: principal.tenant },
            { key: SearchAttributes.workflowKind, value: 'ingest' },
          ],
        });
        return { ...result, repeated: false };
      } catch (error) {
        // Two requests under one key at once: the second waits for the first's answer, then takes back the stage it
        // put (once the first has ended, nothing else would discard it).
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        const earlier = await earlierAnswer(workflowId);
        await deps.staging.discard(principal.tenant, stageId);
        if (!earlier) throw error;
        return { ...earlier, repeated: true };
      }
    },
  };
}
