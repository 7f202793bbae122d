import type { ConsolidationPlanInput } from '../activities/consolidation.activities.js';
import type { SkipReason } from '../src/substrate/views/consolidation-plan.js';
import type { Rule } from '../src/governance/read/processing-judge.js';
import type { ConsolidationTrigger } from '../src/ingestion/write-schemas.js';

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
