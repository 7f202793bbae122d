import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ReembedProgress } from './contracts/reembed.contract.js';
import { SearchAttributes } from '../shared/search-attributes.js';
import { DomainError, ErrorType } from '../shared/errors.js';
import { reembedProgressQuery, reembedTenantWorkflow } from './contracts/reembed.contract.js';
import { startWorkflow } from './workflow-calls.js';

/** What an operator sees of a tenant's re-embedding: the workflow's state and its counts. */
export interface ReembedStatus {
  workflowId: string;
  state: 'running' | 'completed' | 'failed';
  progress: ReembedProgress | null;
}

/** Starts and watches the re-embedding of a tenant's index (one at a time per tenant). */
export interface ReembedGateway {
  start(tenant: string): Promise<{ status: ReembedStatus; started: boolean }>;
  status(tenant: string): Promise<ReembedStatus>;
}

const workflowIdOf = (tenant: string) => `reembed-${tenant}`;

export function createReembedGateway(deps: { client: Client; taskQueue: string }): ReembedGateway {
  async function status(tenant: string): Promise<ReembedStatus> {
    const workflowId = workflowIdOf(tenant);
    const handle = deps.client.workflow.getHandle(workflowId);
    let described;
    try {
      described = await handle.describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) {
        throw new DomainError(ErrorType.NotFound, 'the tenant has no re-embedding', 'tenant');
      }
      throw error;
    }
    const name = described.status.name;
    if (name === 'RUNNING') {
      const progress = await handle.query(reembedProgressQuery).catch(() => null);
      return { workflowId, state: 'running', progress };
    }
    if (name === 'COMPLETED') return { workflowId, state: 'completed', progress: await handle.result() };
    return { workflowId, state: 'failed', progress: null };
  }

  return {
    status,
    async start(tenant) {
      // The index generation is named by the moment of asking: unique per tenant, letters and digits only.
      const generation = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
      try {
        await startWorkflow(deps.client, reembedTenantWorkflow, {
          taskQueue: deps.taskQueue,
          workflowId: workflowIdOf(tenant),
          // A finished re-embedding may be followed by another; a running one is joined, not doubled.
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          args: [{ tenant, generation }],
          typedSearchAttributes: [
            { key: SearchAttributes.tenant, value: tenant },
            { key: SearchAttributes.workflowKind, value: 'reembed' },
          ],
        });
        return { status: await status(tenant), started: true };
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError)
          return { status: await status(tenant), started: false };
        throw error;
      }
    },
  };
}
