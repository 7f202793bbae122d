import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { StagingStore } from '../substrate/staging/staging-store.js';
import type { StagedBatch } from '../ingestion/admit-batch.js';
import type { WriteBatch } from '../ingestion/write-schemas.js';
import type { IngestBatchResult } from '../../workflows/ingest-batch.workflow.js';
import type { Principal } from '../governance/auth/principal.js';
import { SearchAttributes } from '../shared/search-attributes.js';

/** Hands validated writes to the ingestion workflow: stage the content, start the workflow with ids only. */
export interface WriteGateway {
  submit(principal: Principal, batch: WriteBatch): Promise<IngestBatchResult>;
}

export interface WriteGatewayDeps {
  staging: StagingStore;
  client: Client;
  taskQueue: string;
  /** Called before a tenant's write is staged: its hourly retention sweep must exist before its first record. */
  onTenantWrite?: (tenant: string) => Promise<void>;
}

export function createWriteGateway(deps: WriteGatewayDeps): WriteGateway {
  return {
    async submit(principal, batch) {
      await deps.onTenantWrite?.(principal.tenant);
      const stageId = `stg_${randomUUID()}`;
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
      return deps.client.workflow.execute('ingestBatch', {
        taskQueue: deps.taskQueue,
        workflowId: `ingest-${principal.tenant}-${stageId}`,
        args: [{ tenant: principal.tenant, stageId }],
        typedSearchAttributes: [
          { key: SearchAttributes.tenant, value: principal.tenant },
          { key: SearchAttributes.workflowKind, value: 'ingest' },
        ],
      });
    },
  };
}
