/**
 * A tenant's re-embedding workflow as its gateway and the workflow share it: input, progress, type name and the
 * progress query.
 */
import { workflowContract } from './workflow-contract.js';
import { defineQuery } from '@temporalio/workflow';

export interface ReembedInput {
  tenant: string;
  /** Names the new index (lower-case letters and digits); the client derives it from the time it asks. */
  generation: string;
  /** Records per copy activity (default 500, at most 1 000). */
  pageSize?: number;
}

export type ReembedPhase = 'begin' | 'copy' | 'swap' | 'catch-up' | 'reconcile' | 'done' | 'abandoned';

/** Counts only: what an operator watches while a tenant is re-embedded. */
export interface ReembedProgress {
  phase: ReembedPhase;
  model: string | null;
  copied: number;
  withdrawn: number;
  caughtUp: number;
  reconciled: number;
  removed: number;
  /** The swap moved the alias but could not delete the index it replaced (an orphan until reconciled). */
  oldIndexLeft?: boolean;
}

/** A tenant's index rebuilt with the process's embedding model, then swapped in. */
export const reembedTenantWorkflow = workflowContract<ReembedInput, ReembedProgress>()('reembedTenant');
export const reembedProgressQuery = defineQuery<ReembedProgress>('reembedProgress');
