/**
 * Scoring of `bench/consolidation.bench.ts`'s retrieval answers against the workload's relevant facts. A fact is
 * covered by an item whose content states its sentence (compared as the planner compares contents: case, spacing
 * and a final full stop aside), whatever the item is: the record that said it, a view of it, or a summary holding
 * it. An item stating a value the subject no longer has (a superseded sentence) is stale. Pure code.
 */
import { normalised, type Question } from './consolidation-workload.js';

/** What the bench reads of one retrieved item. */
export interface Item {
  id: string;
  kind: string;
  content: string;
  tokens: number;
}

export interface RecallTally {
  questions: number;
  recallSum: number;
  /** Items served that state a superseded value. */
  stale: number;
  items: number;
  tokens: number;
  /** Items that are views or summaries. */
  derived: number;
  /** Answers holding every relevant fact, and the prefix that first does (items, tokens) for each. */
  complete: number;
  toCover: { items: number; tokens: number }[];
}

export const emptyRecall = (): RecallTally => ({
  questions: 0,
  recallSum: 0,
  stale: 0,
  items: 0,
  tokens: 0,
  derived: 0,
  complete: 0,
  toCover: [],
});

const states = (item: Item, sentence: string) => normalised(item.content).includes(normalised(sentence));

/** Scores one answer (items best first) into the tally; the prefix that covers every fact, or null. */
export function addRecall(
  tally: RecallTally,
  q: Question,
  items: readonly Item[],
): { items: number; tokens: number } | null {
  const covered = new Set<string>();
  let prefix: { items: number; tokens: number } | null = null;
  let tokens = 0;
  for (const [i, item] of items.entries()) {
    tokens += item.tokens;
    for (const fact of q.relevant) if (states(item, fact)) covered.add(fact);
    if (q.stale.some((s) => states(item, s))) tally.stale++;
    if (item.kind === 'view' || item.kind === 'summary') tally.derived++;
    if (prefix === null && covered.size === q.relevant.length) prefix = { items: i + 1, tokens };
  }
  tally.questions++;
  tally.recallSum += covered.size / q.relevant.length;
  tally.items += items.length;
  tally.tokens += tokens;
  if (prefix) {
    tally.complete++;
    tally.toCover.push(prefix);
  }
  return prefix;
}

export const mean = (values: readonly number[]) =>
  values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
