/**
 * A tenant's retention sweep workflow as its schedule and the workflow share it: input, progress, result and type
 * name.
 */
import type { Duration } from '@temporalio/common';
import type { SweepTotals } from '../../governance/retention/sweep-state-store.js';
import { workflowContract } from './workflow-contract.js';

export interface RetentionSweepInput {
  tenant: string;
  /** Records per marking activity (default 1 000, at most 5 000). */
  pageSize?: number;
  /** Records per erasure request, one hand-off activity each (default `pageSize`, at most 5 000). */
  erasureBatchSize?: number;
  /** Activities per run before continuing as new, to bound the history (default 200). */
  stepsPerRun?: number;
  /**
   * Erasures of the tenant allowed at work at once before the hand-off waits (default 1: two erasures of one tenant
   * share its index, whose expunge and verification steps wait for zero deleted documents).
   */
  maxOpenErasures?: number;
  /** Minutes a run keeps handing off under back-pressure before leaving the rest to the next run (default 50). */
  handOffMinutes?: number;
  /** How long to wait when throttled (default 30 s). */
  pollEvery?: Duration;
  /** Sweep from this instant or `YYYY-MM-DDTHH` bucket instead of the watermark (after a migration). */
  rescanFrom?: string;
  /** Where the sweep stands; set by the workflow itself when it continues as new. */
  progress?: SweepProgress;
}

export interface SweepProgress {
  phase: 'mark' | 'handoff';
  bucket: string;
  until: string;
  /** Epoch ms after which the hand-off stops waiting on back-pressure. */
  handOffUntil: number;
  totals: SweepTotals;
}

export interface RetentionSweepResult extends SweepTotals {
  until: string;
  /** Records left expired but not yet handed to erasure (back-pressure); the next run continues. */
  pendingLeft: boolean;
}

/** A tenant's hourly retention sweep, started by its schedule. */
export const retentionSweepWorkflow = workflowContract<RetentionSweepInput, RetentionSweepResult>()('retentionSweep');
