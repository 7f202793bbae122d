import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { StagingStore } from '../substrate/staging/staging-store.js';
import type { StagedBatch } from '../ingestion/admit-batch.js';
import type { WriteBatch } from '../ingestion/write-schemas.js';
import type { IngestBatchResult } from './contracts/ingest-batch.contract.js';
import type { Principal } from '../governance/auth/principal.js';
import { SearchAttributes } from '../shared/search-attributes.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { DomainError, ErrorType } from '../shared/errors.js';
import { type TenantMacs } from '../substrate/fingerprint.js';
import { sha256Hex } from '../shared/sha256.js';
import { keyedWriteRequest, writeRequestForms } from '../substrate/content-hash.js';
import { ingestBatchWorkflow } from './contracts/ingest-batch.contract.js';
import { executeWorkflow } from './workflow-calls.js';

/** A write's answer; `repeated` when an earlier request under the same idempotency key wrote it. */
export type SubmittedWrite = IngestBatchResult & { repeated: boolean };

/** Hands validated writes to the ingestion workflow: stage the content, start the workflow with ids only. */
export interface WriteGateway {
  /**
   * With an idempotency key, the write is the caller's one write under that key: a repeat (a client's retry after
   * its connection closed) answers the first write's result and writes nothing. A different write under a key
   * already used is refused (Conflict, naming `Idempotency-Key`), never answered with the first one's result.
   */
  submit(principal: Principal, batch: WriteBatch, idempotencyKey?: string): Promise<SubmittedWrite>;
}

export interface WriteGatewayDeps {
  staging: StagingStore;
  client: Client;
  /** The tenants' keys: what a keyed write asked for is kept as a keyed hash, never as content. */
  macs: TenantMacs;
  taskQueue: string;
  /** Called before a tenant's write is staged: its hourly retention sweep must exist before its first record. */
  onTenantWrite?: (tenant: string) => Promise<void>;
}

/** The stage (and so the workflow) a key names: one per principal and key, so callers' keys never collide. */
function keyedStageId(principal: Principal, idempotencyKey: string): string {
  const digest = createHash('sha256').update(`${principal.tenant}\0${principal.id}\0${idempotencyKey}`).digest('hex');
  return `stg_k${digest.slice(0, 32)}`;
}

/** The memo field a keyed write's workflow keeps what it asked for in (a keyed hash). */
const REQUEST_MEMO = 'writeRequest';

export function createWriteGateway(deps: WriteGatewayDeps): WriteGateway {
  const workflowIdOf = (tenant: string, stageId: string) => `ingest-${tenant}-${stageId}`;

  /**
   * The answer of an earlier write under this id, waited for if it is still running; null if there was none. An
   * earlier write that asked for something else is refused: the key was used for another write. `afterItEnds`: the
   * refusal waits for the earlier write to end (the caller then takes back a stage of its own).
   */
  async function earlierAnswer(
    workflowId: string,
    sameRequest: readonly string[],
    afterItEnds = false,
  ): Promise<IngestBatchResult | null> {
    const handle = deps.client.workflow.getHandle<(input: unknown) => Promise<IngestBatchResult>>(workflowId);
    let kept: unknown;
    try {
      kept = (await handle.describe()).memo?.[REQUEST_MEMO];
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
    // Writes started before requests were kept carry none: they are answered as before.
    if (typeof kept === 'string' && !sameRequest.includes(kept)) {
      if (afterItEnds) await handle.result().catch(() => undefined);
      throw new DomainError(
        ErrorType.Conflict,
        'Idempotency-Key: already used for a different write; a new write needs a new key',
        'Idempotency-Key',
      );
    }
    return handle.result();
  }

  return {
    async submit(principal, batch, idempotencyKey) {
      const stageId = idempotencyKey ? keyedStageId(principal, idempotencyKey) : `stg_${randomUUID()}`;
      const workflowId = workflowIdOf(principal.tenant, stageId);
      const requestDigest = idempotencyKey ? sha256Hex(canonicalJson(batch)) : null;
      const sameRequest = requestDigest ? writeRequestForms(deps.macs, principal.tenant, requestDigest) : [];
      // Looked for before staging: a stage is discarded when its workflow ends, and a repeat must not leave one.
      if (idempotencyKey) {
        const earlier = await earlierAnswer(workflowId, sameRequest);
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
        const result = await executeWorkflow(deps.client, ingestBatchWorkflow, {
          taskQueue: deps.taskQueue,
          workflowId,
          // A keyed write's id is never run twice, even after the first run ended.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          args: [{ tenant: principal.tenant, stageId }],
          ...(requestDigest
            ? { memo: { [REQUEST_MEMO]: keyedWriteRequest(deps.macs, principal.tenant, requestDigest) } }
            : {}),
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
        const earlier = await earlierAnswer(workflowId, sameRequest, true).finally(() =>
          deps.staging.discard(principal.tenant, stageId),
        );
        if (!earlier) throw error;
        return { ...earlier, repeated: true };
      }
    },
  };
}
