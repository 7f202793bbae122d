/**
 * Starting a workflow from a client, by its contract: the type name comes from the contract and the input and result
 * are typed by it, so a gateway can neither misspell a workflow nor send it the wrong input.
 */
import type { Client, WorkflowStartOptions } from '@temporalio/client';
import type { WorkflowContract, WorkflowFunction } from './contracts/workflow-contract.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any contract, whatever its input and result
type AnyContract = WorkflowContract<string, any, any>;

export function startWorkflow<C extends AnyContract>(
  client: Client,
  contract: C,
  options: WorkflowStartOptions<WorkflowFunction<C>>,
) {
  return client.workflow.start<WorkflowFunction<C>>(contract.name, options);
}

export function executeWorkflow<C extends AnyContract>(
  client: Client,
  contract: C,
  options: WorkflowStartOptions<WorkflowFunction<C>>,
) {
  return client.workflow.execute<WorkflowFunction<C>>(contract.name, options);
}
