/**
 * An access request's workflow as its callers and the workflow share it: input, outcome and type name.
 */
import { workflowContract } from './workflow-contract.js';

/** Input of an access request's workflow: ids and the delivery window only (the selector stays in the store). */
export interface AccessInput {
  tenant: string;
  requestId: string;
  /** How long the package stays downloadable before it is erased, in ms. */
  deliveryWindowMs: number;
}

export interface AccessOutcome {
  state: 'expired' | 'failed';
  counts: Record<string, number>;
}

/** An access request's one workflow: build the package, deliver it, erase it after the window. */
export const accessRequestWorkflow = workflowContract<AccessInput, AccessOutcome>()('accessRequest');
