/**
 * B2, sliding window + summary (seed 004 §7.3): the context is the tenant's most recent events that fit three
 * quarters of the budget, after an extractive summary of everything older in the rest: the older events' sentences
 * with the most central terms (terms many older events share), per token, chosen without the question. No
 * embedder, no lifecycle, no scopes; an erasure deletes the events filed under the subject from the log (the
 * summary is built from the log, so it follows).
 */
import { estimateTokens } from '../../src/retrieval/context-packing.js';
import { canariesIn, type Context } from '../metrics.js';
import type { ScriptEvent } from '../workloads/script.js';
import { type Ask, type ErasureProbe, type EvalSystem } from './system.js';

/** Share of the budget the recent window takes; the summary gets the rest. */
export const WINDOW_SHARE = 0.75;

const terms = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

/** The extractive summary of `older` within `budget` tokens, in time order. */
export function extractiveSummary(older: readonly ScriptEvent[], budget: number): ScriptEvent[] {
  const df = new Map<string, number>();
  const bags = older.map((e) => terms(e.text));
  for (const bag of bags) for (const t of bag) df.set(t, (df.get(t) ?? 0) + 1);
  const ranked = older
    .map((e, i) => ({ e, i, score: [...bags[i]!].reduce((n, t) => n + df.get(t)!, 0) / estimateTokens(e.text) }))
    .sort((a, b) => b.score - a.score || b.i - a.i);
  const chosen: { e: ScriptEvent; i: number }[] = [];
  let used = 0;
  for (const c of ranked) {
    const t = estimateTokens(c.e.text);
    if (used + t > budget) continue;
    chosen.push(c);
    used += t;
  }
  return chosen.sort((a, b) => a.i - b.i).map((c) => c.e);
}

/** The window (newest first until the window's share of the budget is full) and the summary of what is older. */
export function windowContext(log: readonly ScriptEvent[], budget: number): ScriptEvent[] {
  const windowBudget = Math.floor(budget * WINDOW_SHARE);
  let used = 0;
  let from = log.length;
  while (from > 0 && used + estimateTokens(log[from - 1]!.text) <= windowBudget) {
    from--;
    used += estimateTokens(log[from]!.text);
  }
  return [...extractiveSummary(log.slice(0, from), budget - used), ...log.slice(from)];
}

export function createWindowSummary(): EvalSystem {
  let log: ScriptEvent[] = [];
  const context = (q: Ask, budget: number): Context => {
    const started = performance.now();
    const items = windowContext(
      log.filter((e) => e.tenant === q.tenant),
      budget,
    );
    return {
      items: items.map((e) => ({ eventId: e.id, text: e.text, notInForce: false })),
      tokens: items.reduce((n, e) => n + estimateTokens(e.text), 0),
      ms: performance.now() - started,
    };
  };
  return {
    name: 'B2 window + summary',
    async write(events) {
      log.push(...events);
    },
    async ask(q, budget) {
      return context(q, budget);
    },
    async erase(tenant, subject) {
      log = log.filter((e) => !(e.tenant === tenant && e.subjects.includes(subject)));
    },
    async probe(tenant, canaries, question): Promise<ErasureProbe> {
      const stored = log.filter((e) => e.tenant === tenant).map((e) => e.text);
      return {
        store: canariesIn(stored, canaries),
        index: new Set(),
        context: canariesIn(
          context(question, 100_000).items.map((i) => i.text),
          canaries,
        ),
      };
    },
    async storedBytes() {
      return log.reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)), 0);
    },
    async close() {},
  };
}
