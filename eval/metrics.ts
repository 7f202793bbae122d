/**
 * The metrics of Table 1, measured on the context a system hands the generator (seed 004 §7.4), never on a generated
 * answer: pure functions of the script and of the items served.
 */
import type { Question, ScriptEvent } from './workloads/script.js';

export interface ContextItem {
  /** The script event the item holds (a memory of it, a chunk of it, a sentence of it). */
  eventId: string;
  text: string;
  /** Marked by the system as not in force at the asked time (a closed valid time): not served as current. */
  notInForce: boolean;
}

export interface Context {
  items: ContextItem[];
  /** Tokens of the items, counted with the one estimate every system is measured with. */
  tokens: number;
  ms: number;
}

export interface QuestionScore {
  /** The value in force at the asked time is in the context. */
  recalled: boolean;
  /** Another value of the same fact is served as if in force. */
  stale: boolean;
  /** Recalled and not stale. */
  temporallyCorrect: boolean;
}

export function scoreQuestion(q: Question, context: Context, byId: ReadonlyMap<string, ScriptEvent>): QuestionScore {
  let recalled = false;
  let stale = false;
  for (const item of context.items) {
    const fact = byId.get(item.eventId)?.fact;
    if (fact?.key !== q.key) continue;
    if (fact.value === q.expected) recalled = true;
    else if (!item.notInForce) stale = true;
  }
  return { recalled, stale, temporallyCorrect: recalled && !stale };
}

export interface Leaks {
  crossTenant: number;
  crossScope: number;
}

/** Items the asker may not read: another tenant's, or another principal's private ones. */
export function leaksOf(
  asker: { tenant: string; principal: string },
  context: Context,
  byId: ReadonlyMap<string, ScriptEvent>,
): Leaks {
  const leaks = { crossTenant: 0, crossScope: 0 };
  for (const item of context.items) {
    const e = byId.get(item.eventId);
    if (!e) continue;
    if (e.tenant !== asker.tenant) leaks.crossTenant++;
    else if (e.scope === 'principal' && e.principal !== asker.principal) leaks.crossScope++;
  }
  return leaks;
}

/** Canaries still found by any probe after an erasure: every other one of `canaries` is gone. */
export function remaining(canaries: readonly string[], found: Iterable<string>): string[] {
  const seen = new Set(found);
  return canaries.filter((c) => seen.has(c));
}

/** The canaries that appear in some text. */
export function canariesIn(texts: Iterable<string>, canaries: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (const t of texts) for (const c of canaries) if (t.includes(c)) found.add(c);
  return found;
}

export function share(n: number, of: number): number {
  return of === 0 ? NaN : n / of;
}
