/**
 * A consolidation run's workflow as its callers and the workflow share it: input, result and type name.
 */
import type { Role } from '../../governance/auth/principal.js';
import type { SkipReason } from '../../substrate/views/consolidation-plan.js';
import type { Rule } from '../../governance/read/processing-judge.js';
import type { ConsolidationTrigger } from '../../ingestion/write-schemas.js';
import { workflowContract } from './workflow-contract.js';

export type { ConsolidationTrigger };

export interface ConsolidationInput extends ConsolidationPlanInput {
  trigger: ConsolidationTrigger;
  /** Pause between two views' writes: a run yields to online traffic rather than compete with it. */
  pauseMs: number;
}

export interface ConsolidationResult {
  trigger: ConsolidationTrigger;
  /** Active records read, views built now, found already built, not built because something was erased. */
  read: number;
  built: number;
  existing: number;
  tombstoned: number;
  skipped: Partial<Record<SkipReason, number>>;
  /** Records the processing judge kept out of every view, by rule (counts only). */
  refused: Partial<Record<Rule, number>>;
  views: { id: string; inputs: number; status: 'active' | 'candidate' | 'disputed' | 'refused'; refusal?: string }[];
}

export interface ConsolidationPlanInput {
  tenant: string;
  namespace: string;
  /** Who asked: the views are theirs (their scope, their roles before the write policy). */
  principal: string;
  roles: Role[];
  /** Whose memories: the principal's own, or the tenant's shared ones. */
  scope: 'principal' | 'tenant';
}

/** One consolidation run over a principal's or a tenant's memories. */
export const consolidationWorkflow = workflowContract<ConsolidationInput, ConsolidationResult>()('consolidation');
