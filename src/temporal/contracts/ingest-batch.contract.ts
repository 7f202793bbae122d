/**
 * A write batch's workflow as the write gateway and the workflow share it: input, result and type name.
 */
import type { BatchResult } from '../../ingestion/admit-batch.js';
import { workflowContract } from './workflow-contract.js';

export interface IngestBatchInput {
  tenant: string;
  stageId: string;
}

/** Input and result hold ids, statuses and counts only; the content stays in the stage and the stores. */
export type IngestBatchResult = BatchResult & { indexed: number; disputes: string[]; superseded: number };

/** A staged write batch admitted, indexed and its stage discarded. */
export const ingestBatchWorkflow = workflowContract<IngestBatchInput, IngestBatchResult>()('ingestBatch');
