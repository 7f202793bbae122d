/**
 * Replays a script against one system: events are written in time order, in batches that state no fact twice, and
 * every question and probe is asked once everything before it has been written. Returns what each context held.
 */
import { leaksOf, scoreQuestion, type Context, type Leaks, type QuestionScore } from './metrics.js';
import type { Ask, EvalSystem } from './systems/system.js';
import type { Probe, Question, Script, ScriptEvent } from './workloads/script.js';

export interface Answered {
  question: Question;
  budget: number;
  context: Context;
  score: QuestionScore;
}

export interface Probed {
  probe: Probe;
  context: Context;
  leaks: Leaks;
}

export interface Replayed {
  answers: Answered[];
  probes: Probed[];
}

export const askOf = (q: Question | Probe): Ask => ({
  tenant: q.tenant,
  principal: q.principal,
  text: q.text,
  intent: 'intent' in q ? q.intent : 'current',
  ...('asOf' in q && q.asOf ? { asOf: q.asOf } : {}),
  askedAt: q.askedAt,
});

/** Splits events (in time order) into batches in which no fact key repeats. */
export function batches(events: readonly ScriptEvent[], max = 200): ScriptEvent[][] {
  const out: ScriptEvent[][] = [];
  let current: ScriptEvent[] = [];
  let keys = new Set<string>();
  for (const e of events) {
    const key = e.fact ? `${e.tenant}/${e.fact.key}` : null;
    if (current.length >= max || (key && keys.has(key))) {
      out.push(current);
      current = [];
      keys = new Set();
    }
    current.push(e);
    if (key) keys.add(key);
  }
  if (current.length > 0) out.push(current);
  return out;
}

export async function replay(
  script: Script,
  system: EvalSystem,
  budgets: readonly number[],
  probeBudget: number,
  progress: (m: string) => void,
): Promise<Replayed> {
  const byId = new Map(script.events.map((e) => [e.id, e]));
  // Erasure probes are asked after the erasures, not here.
  const probes = script.erasures.length > 0 ? [] : script.probes;
  const checkpoints = [...new Set([...script.questions, ...probes].map((q) => q.askedAt.getTime()))].sort(
    (a, b) => a - b,
  );
  const answers: Answered[] = [];
  const probed: Probed[] = [];
  let next = 0;
  const writeUntil = async (t: number) => {
    const due: ScriptEvent[] = [];
    while (next < script.events.length && script.events[next]!.at.getTime() <= t) due.push(script.events[next++]!);
    for (const batch of batches(due)) await system.write(batch);
  };
  for (const t of checkpoints) {
    await writeUntil(t);
    for (const q of script.questions.filter((x) => x.askedAt.getTime() === t)) {
      for (const budget of budgets) {
        const context = await system.ask(askOf(q), budget);
        answers.push({ question: q, budget, context, score: scoreQuestion(q, context, byId) });
      }
    }
    for (const p of probes.filter((x) => x.askedAt.getTime() === t)) {
      const context = await system.ask(askOf(p), probeBudget);
      probed.push({ probe: p, context, leaks: leaksOf(p, context, byId) });
    }
  }
  await writeUntil(Infinity);
  progress(
    `${system.name} ${script.workload}: ${script.events.length} events, ${answers.length} answers, ${probed.length} probes`,
  );
  return { answers, probes: probed };
}
