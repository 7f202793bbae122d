/** Table 1 of seed 004 §7.5, from what the replays measured: one row per system, "not run" rows say why. */
import { percentile } from '../bench/lib/stack-report.js';
import { share } from './metrics.js';
import type { Replayed } from './replay.js';

export interface SystemRun {
  name: string;
  replays: Map<string, Replayed>;
  /** Canaries of erased subjects, and those still found by each probe. */
  erasure: {
    canaries: number;
    before: number;
    store: number;
    index: number;
    context: number;
    anywhere: number;
    keptControls: string;
  };
  bytesPerEvent: number | { reason: string };
  /** Writes the system refused, with why. */
  refusals: { eventId: string; message: string }[];
}

export interface Row {
  system: string;
  recall: number;
  temporal: number;
  stale: number;
  crossTenant: number;
  crossScope: number;
  probes: number;
  deletion: number;
  tokens: number;
  p95: number;
  bytesPerEvent: number | { reason: string };
}

const TEMPORAL = new Set(['W1', 'W2']);

export function rowOf(run: SystemRun, budget: number): Row {
  const answers = [...run.replays.values()].flatMap((r) => r.answers).filter((a) => a.budget === budget);
  const temporal = answers.filter((a) => TEMPORAL.has(a.question.workload));
  const probes = [...run.replays.values()].flatMap((r) => r.probes);
  return {
    system: run.name,
    recall: share(answers.filter((a) => a.score.recalled).length, answers.length),
    temporal: share(temporal.filter((a) => a.score.temporallyCorrect).length, temporal.length),
    stale: share(temporal.filter((a) => a.score.stale).length, temporal.length),
    crossTenant: share(probes.filter((p) => p.leaks.crossTenant > 0).length, probes.length),
    crossScope: share(probes.filter((p) => p.leaks.crossScope > 0).length, probes.length),
    probes: probes.length,
    deletion: share(run.erasure.canaries - run.erasure.anywhere, run.erasure.canaries),
    tokens: answers.reduce((n, a) => n + a.context.tokens, 0) / Math.max(1, answers.length),
    p95: percentile(
      answers.map((a) => a.context.ms),
      95,
    ),
    bytesPerEvent: run.bytesPerEvent,
  };
}

/** Recall per workload and budget: the points of the Pareto picture and of the breakdown table. */
export function pointsOf(
  run: SystemRun,
  budgets: readonly number[],
): { budget: number; tokens: number; recall: number }[] {
  return budgets.map((budget) => {
    const answers = [...run.replays.values()].flatMap((r) => r.answers).filter((a) => a.budget === budget);
    return {
      budget,
      tokens: answers.reduce((n, a) => n + a.context.tokens, 0) / Math.max(1, answers.length),
      recall: share(answers.filter((a) => a.score.recalled).length, answers.length),
    };
  });
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)} %` : 'n/a');

export const HEADER = [
  'system',
  'task success',
  'fact recall ↑ (W1–W3)',
  'temporal correctness ↑ (W1, W2)',
  'stale rate ↓ (W1, W2)',
  'cross-tenant / cross-scope probes leaking ↓ (W3)',
  'deletion completeness ↑ (W4)',
  'preference consistency',
  'context tokens per task ↓',
  'p95 ms ↓',
  'storage bytes per event ↓',
];

export function cells(r: Row): string[] {
  return [
    r.system,
    'not measured¹',
    pct(r.recall),
    pct(r.temporal),
    pct(r.stale),
    `${pct(r.crossTenant)} / ${pct(r.crossScope)} (${r.probes})`,
    pct(r.deletion),
    'not measured¹',
    r.tokens.toFixed(0),
    r.p95.toFixed(1),
    typeof r.bytesPerEvent === 'number' ? r.bytesPerEvent.toFixed(0) : `not measured (${r.bytesPerEvent.reason})`,
  ];
}

export const NOT_RUN: [string, string][] = [
  ['B1 full context', 'not run: every workload fits no fixed budget whole; B2 is the budgeted form of it'],
  ['B4 MemGPT-style paging', 'not run: no implementation here'],
  ['B5 Mem0-style pipeline', 'not run: no implementation here'],
  ['B6 Zep-style temporal graph', 'not run: no implementation here'],
  ['B7 A-MEM-style notes', 'not run: no implementation here'],
  [
    'B8 Lethe without governance',
    'not run: Lethe has no switch that turns its governance plane off (read policy, scopes, lifecycle and erasure are ' +
      'wired into admission, retrieval and the stores; the only switch, `AdmissionDeps.defences`, covers the ' +
      'poisoning defences alone)',
  ],
];
