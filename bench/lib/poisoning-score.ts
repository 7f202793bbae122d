/**
 * Scores of one arm of `bench/poisoning.bench.ts`, pure: poisoning success per scenario (a false memory served as
 * plain current, or only with its dispute marker), detection latency per attempt, false alarms and disputes per kind
 * of honest write, quarantine reasons and the derivation audit's verdicts.
 */
import {
  HONEST_CATEGORIES,
  SCENARIOS,
  trueValueOf,
  type Attempt,
  type HonestCategory,
  type PlannedMemory,
  type PoisoningPlan,
  type Scenario,
} from './poisoning-plan.js';
import type { Answer, ArmResult, WriteOutcome } from './poisoning-run.js';

export interface Detection {
  /** Poisoned writes from the attempt's first one up to the first alert (that one included), or null: never. */
  writes: number | null;
  /**
   * Wall time from the first poisoned write's admission start to the alert: the alerting write's admission end (a
   * quarantine) or the end of its batch's contradiction detection (a dispute).
   */
  ms: number | null;
}

export interface ScenarioScore {
  scenario: Scenario | 'overall';
  attempts: number;
  poisonedWrites: number;
  /** Poisoned writes whose batch admission refused (never written). */
  refusedPoison: number;
  questions: number;
  /** Poisoning success: questions whose items held a false memory of the attempt without a dispute marker. */
  servedPlain: number;
  /** Questions whose items held a false memory of the attempt, each one only with its dispute marker. */
  servedMarked: number;
  /** Questions whose first item about the attacked attribute was false; of them, those where it was marked disputed. */
  servedFirst: number;
  servedFirstMarked: number;
  /** Questions about an attribute with a true value (an honest one written before), and those that served it. */
  trueAsked: number;
  trueServed: number;
  /** Of those, the true value served only with a dispute marker. */
  trueServedMarked: number;
  /** First quarantine on the attacked attribute (the defences' alert). */
  detections: Detection[];
  /** First alert of either kind on the attacked attribute: a quarantine, or a dispute opened over a write on it. */
  alerts: Detection[];
}

export interface CategoryScore {
  category: HonestCategory | 'all honest writes' | 'all but restatements on attacked attributes';
  writes: number;
  quarantined: number;
  /** Held back otherwise: a candidate without a quarantine (sign-off), or refused. */
  withheld: number;
  /** Disputed when the questions were asked (contradiction detection: the same lifecycle in both arms). */
  disputed: number;
  /** Of those, in an open dispute with a poisoned memory. */
  disputedByPoison: number;
}

export interface ArmScore {
  scenarios: ScenarioScore[];
  overall: ScenarioScore;
  categories: CategoryScore[];
  honestAll: CategoryScore;
  honestUnattacked: CategoryScore;
  /** Quarantine reason → [on poisoned writes, on honest writes]. */
  reasons: Map<string, [number, number]>;
  /** `label → outcome` → count per column (honest, then each scenario). */
  derivation: Map<string, number[]>;
  honestAnswers: { asked: number; trueServed: number; trueServedMarked: number };
  /** Poisoned memories disputed when the questions were asked. */
  poisonDisputed: number;
  taintedServed: number;
}

const isQuarantined = (w: WriteOutcome) => w.status === 'candidate' && w.quarantinedFor.length > 0;
const isWithheldOtherwise = (w: WriteOutcome) => w.status !== 'active' && !isQuarantined(w);

function answerFacts(plan: PoisoningPlan, a: Answer, attempt: Attempt | null) {
  const about = a.served
    .map((item) => ({ item, m: plan.memories.get(item.key) }))
    .filter(
      (x): x is { item: Answer['served'][number]; m: PlannedMemory } =>
        x.m !== undefined && x.m.subject === a.subject && x.m.attribute === a.attribute,
    );
  const truth = trueValueOf(plan, a.subject, a.attribute);
  const isFalse = (m: PlannedMemory) => attempt !== null && m.role === 'poison' && m.attempt === attempt.id;
  const falseItems = about.filter((x) => isFalse(x.m));
  const trueItems = about.filter((x) => x.m.role === 'honest' && x.m.value === truth);
  const first = about[0];
  return {
    hasTruth: truth !== null,
    servedPlain: falseItems.some((x) => !x.item.disputed),
    servedMarked: falseItems.length > 0 && falseItems.every((x) => x.item.disputed),
    servedFirst: first !== undefined && isFalse(first.m),
    servedFirstMarked: first !== undefined && isFalse(first.m) && first.item.disputed,
    trueServed: trueItems.length > 0,
    trueServedMarked: trueItems.length > 0 && trueItems.every((x) => x.item.disputed),
  };
}

/** The first write on the attempt's attribute, from its first poisoned one, for which `alerted` holds. */
function detection(
  plan: PoisoningPlan,
  arm: ArmResult,
  attempt: Attempt,
  alerted: (w: WriteOutcome) => number | null,
): Detection {
  const onIt = [...plan.memories.values()]
    .filter((m) => m.attempt === attempt.id)
    .map((m) => ({ m, w: arm.writes.get(m.key)! }))
    .sort((x, y) => x.w.round - y.w.round);
  const first = onIt.findIndex((x) => x.m.role === 'poison');
  if (first < 0) return { writes: null, ms: null };
  const startedMs = onIt[first]!.w.startedMs;
  let poisoned = 0;
  for (const { m, w } of onIt.slice(first)) {
    if (m.role === 'poison') poisoned++;
    const at = alerted(w);
    if (at !== null) return { writes: poisoned, ms: at - startedMs };
  }
  return { writes: null, ms: null };
}

const quarantineAlert = (w: WriteOutcome) => (isQuarantined(w) ? w.endedMs : null);
/** A quarantine, or a dispute its batch's contradiction detection opened over it (reviewers are told of each). */
const eitherAlert = (w: WriteOutcome) => quarantineAlert(w) ?? (w.afterDetect === 'disputed' ? w.detectedMs : null);

function sum(parts: readonly ScenarioScore[]): ScenarioScore {
  const add = (f: (s: ScenarioScore) => number) => parts.reduce((n, s) => n + f(s), 0);
  return {
    scenario: 'overall',
    attempts: add((s) => s.attempts),
    poisonedWrites: add((s) => s.poisonedWrites),
    refusedPoison: add((s) => s.refusedPoison),
    questions: add((s) => s.questions),
    servedPlain: add((s) => s.servedPlain),
    servedMarked: add((s) => s.servedMarked),
    servedFirst: add((s) => s.servedFirst),
    servedFirstMarked: add((s) => s.servedFirstMarked),
    trueAsked: add((s) => s.trueAsked),
    trueServed: add((s) => s.trueServed),
    trueServedMarked: add((s) => s.trueServedMarked),
    detections: parts.flatMap((s) => s.detections),
    alerts: parts.flatMap((s) => s.alerts),
  };
}

export function scoreArm(plan: PoisoningPlan, arm: ArmResult): ArmScore {
  const attemptById = new Map(plan.attempts.map((a) => [a.id, a]));
  const planned = [...plan.memories.values()];
  const scenarios = SCENARIOS.map((scenario): ScenarioScore => {
    const attempts = plan.attempts.filter((a) => a.scenario === scenario);
    const poison = planned.filter((m) => m.role === 'poison' && m.category === scenario);
    const answers = arm.answers
      .filter((a) => a.attempt !== null && attemptById.get(a.attempt)?.scenario === scenario)
      .map((a) => answerFacts(plan, a, attemptById.get(a.attempt!)!));
    const count = (f: (a: ReturnType<typeof answerFacts>) => boolean) => answers.filter(f).length;
    return {
      scenario,
      attempts: attempts.length,
      poisonedWrites: poison.length,
      refusedPoison: poison.filter((m) => arm.writes.get(m.key)!.status === 'refused').length,
      questions: answers.length,
      servedPlain: count((a) => a.servedPlain),
      servedMarked: count((a) => a.servedMarked),
      servedFirst: count((a) => a.servedFirst),
      servedFirstMarked: count((a) => a.servedFirstMarked),
      trueAsked: count((a) => a.hasTruth),
      trueServed: count((a) => a.trueServed),
      trueServedMarked: count((a) => a.trueServedMarked),
      detections: attempts.map((a) => detection(plan, arm, a, quarantineAlert)),
      alerts: attempts.map((a) => detection(plan, arm, a, eitherAlert)),
    };
  });

  const isPoison = (key: string) => plan.memories.get(key)?.role === 'poison';
  const honest = planned.filter((m) => m.role === 'honest');
  const category = (name: CategoryScore['category'], of: readonly PlannedMemory[]): CategoryScore => {
    const ws = of.map((m) => arm.writes.get(m.key)!);
    const disputed = ws.filter((w) => w.finalStatus === 'disputed');
    return {
      category: name,
      writes: ws.length,
      quarantined: ws.filter(isQuarantined).length,
      withheld: ws.filter(isWithheldOtherwise).length,
      disputed: disputed.length,
      disputedByPoison: disputed.filter((w) => w.disputedWith.some(isPoison)).length,
    };
  };
  const categories = Object.values(HONEST_CATEGORIES).map((c) =>
    category(
      c,
      honest.filter((m) => m.category === c),
    ),
  );

  const reasons = new Map<string, [number, number]>();
  const derivation = new Map<string, number[]>();
  for (const m of planned) {
    const w = arm.writes.get(m.key)!;
    for (const reason of w.quarantinedFor) {
      const counts = reasons.get(reason) ?? [0, 0];
      counts[m.role === 'poison' ? 0 : 1]++;
      reasons.set(reason, counts);
    }
    const key = w.derivation ? `${w.derivation.label} → ${w.derivation.outcome}` : w.refusal ? 'refused batch' : 'none';
    const column = m.role === 'honest' ? 0 : 1 + SCENARIOS.indexOf(m.category as Scenario);
    const counts = derivation.get(key) ?? new Array<number>(1 + SCENARIOS.length).fill(0);
    counts[column]!++;
    derivation.set(key, counts);
  }

  const honestAnswers = arm.answers.filter((a) => a.attempt === null).map((a) => answerFacts(plan, a, null));
  return {
    scenarios,
    overall: sum(scenarios),
    categories,
    honestAll: category('all honest writes', honest),
    honestUnattacked: category(
      'all but restatements on attacked attributes',
      honest.filter((m) => m.category !== HONEST_CATEGORIES.attacked),
    ),
    reasons,
    derivation,
    honestAnswers: {
      asked: honestAnswers.length,
      trueServed: honestAnswers.filter((a) => a.trueServed).length,
      trueServedMarked: honestAnswers.filter((a) => a.trueServedMarked).length,
    },
    poisonDisputed: planned.filter((m) => m.role === 'poison' && arm.writes.get(m.key)!.finalStatus === 'disputed')
      .length,
    taintedServed: arm.answers.reduce((n, a) => n + a.tainted, 0),
  };
}
