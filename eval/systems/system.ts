/** What each system under evaluation does with a replayed script: the same calls, the same budget, the same embedder. */
import type { Context } from '../metrics.js';
import type { ScriptEvent } from '../workloads/script.js';

export interface Ask {
  tenant: string;
  principal: string;
  text: string;
  intent: 'current' | 'as-of';
  asOf?: Date;
  /** Script time of the question. */
  askedAt: Date;
}

/** Where an erased canary was still found. */
export interface ErasureProbe {
  /** In the system's records (stored events, memories, derived views, a running summary). */
  store: Set<string>;
  /** In its search index. */
  index: Set<string>;
  /** In a context served for a question about the subject. */
  context: Set<string>;
}

export interface EvalSystem {
  name: string;
  /** Writes events in time order (one batch: no fact stated twice). */
  write(events: readonly ScriptEvent[]): Promise<void>;
  ask(q: Ask, budgetTokens: number): Promise<Context>;
  /** Carries out an erasure request for a data subject. */
  erase(tenant: string, subject: string): Promise<void>;
  /** Looks for the canaries everywhere the system keeps anything, and in the context it serves for `question`. */
  probe(tenant: string, canaries: readonly string[], question: Ask): Promise<ErasureProbe>;
  /** Bytes stored so far, or null with the reason it is not measured. */
  storedBytes(): Promise<number | { reason: string }>;
  close(): Promise<void>;
  /** Writes the system refused (Lethe's derivation audit), with its reason. */
  refusals?: { eventId: string; message: string }[];
}

/** Items packed in rank order while they fit (the budget rule of the baselines). */
export function packInOrder<T>(ranked: readonly T[], tokensOf: (t: T) => number, budget: number): T[] {
  const packed: T[] = [];
  let used = 0;
  for (const item of ranked) {
    const t = tokensOf(item);
    if (used + t > budget) continue;
    packed.push(item);
    used += t;
  }
  return packed;
}
