import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { SearchAttributes } from '../shared/search-attributes.js';
import type { WorkflowContract, WorkflowFunction } from './contracts/workflow-contract.js';
import { startWorkflow } from './workflow-calls.js';

/**
 * Starts the one workflow of a subject-rights request, tagged with its tenant, request id and kind. A request runs
 * once: filing it again finds its workflow running (or finished) and starts nothing; only a run that failed or was
 * terminated may be started again.
 */
export async function startRequestWorkflow<Input extends object>(
  client: Client,
  contract: WorkflowContract<string, Input, unknown>,
  start: { taskQueue: string; workflowId: string; tenant: string; requestId: string; kind: string },
  input: Input,
): Promise<void> {
  try {
    await startWorkflow(client, contract, {
      taskQueue: start.taskQueue,
      workflowId: start.workflowId,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      args: [input] as Parameters<WorkflowFunction<typeof contract>>,
      typedSearchAttributes: [
        { key: SearchAttributes.tenant, value: start.tenant },
        { key: SearchAttributes.requestId, value: start.requestId },
        { key: SearchAttributes.workflowKind, value: start.kind },
      ],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
