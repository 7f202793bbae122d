/**
 * W2, customer service under versioned policies (seed 004 §7.2): each policy is published in several versions, each
 * in force from its publication; support tickets in between mention the policies without stating them. Questions
 * at checkpoints ask for the rule in force now, or at an earlier date (a ticket filed then is judged by the version
 * in force then).
 */
import { rng } from './rng.js';
import { dayOf, inTimeOrder, isoDay, valueAt, type Question, type Script, type ScriptEvent } from './script.js';

const POLICIES: { name: string; rule: (v: string) => string; values: string[] }[] = [
  {
    name: 'refund window',
    rule: (v) => `refunds are accepted within ${v} of delivery`,
    values: ['14 days', '30 days', '21 days', '60 days', '7 days'],
  },
  {
    name: 'discount cap',
    rule: (v) => `agents may grant a discount of at most ${v}`,
    values: ['10 %', '15 %', '5 %', '20 %', '12 %'],
  },
  {
    name: 'data export approval',
    rule: (v) => `a customer data export needs approval by ${v}`,
    values: ['the team lead', 'the data protection officer', 'two managers', 'the account owner'],
  },
  {
    name: 'shipping fee waiver',
    rule: (v) => `shipping is free for orders above ${v}`,
    values: ['EUR 50', 'EUR 75', 'EUR 40', 'EUR 100'],
  },
  {
    name: 'warranty claim',
    rule: (v) => `a warranty claim must be filed within ${v}`,
    values: ['one year', 'two years', '18 months', '6 months'],
  },
  {
    name: 'chargeback escalation',
    rule: (v) => `chargebacks above the limit go to ${v}`,
    values: ['finance', 'the risk desk', 'legal', 'the payments lead'],
  },
];
const TOPICS = ['asked about', 'complained about', 'quoted', 'misread', 'wanted an exception to'];

export const W2_TENANT = 'helpdesk';
export const W2_WRITER = 'policy-bot';
export const W2_READER = 'support-agent';

export interface W2Options {
  seed: number;
  start: Date;
  /** Policies (default 4), versions of each (default 4), days the script spans (default 60). */
  policies?: number;
  versions?: number;
  days?: number;
}

export function w2Policies(o: W2Options): Script {
  const r = rng(o.seed);
  const policies = POLICIES.slice(0, Math.min(POLICIES.length, o.policies ?? 4));
  const versions = o.versions ?? 4;
  const days = o.days ?? 60;
  const events: ScriptEvent[] = [];
  let n = 0;
  const add = (at: Date, text: string, fact?: { key: string; value: string }) =>
    events.push({
      id: `w2-e${++n}`,
      at,
      tenant: W2_TENANT,
      principal: W2_WRITER,
      scope: 'tenant',
      subjects: ['support-policies'],
      text,
      ...(fact ? { fact } : {}),
    });
  for (const [i, p] of policies.entries()) {
    // Publication days: day 0, then spread over the script, each version different from the one before.
    const publishDays = [
      0,
      ...r.sample(
        Array.from({ length: days - 2 }, (_, d) => d + 1),
        versions - 1,
      ),
    ].sort((a, b) => a - b);
    let previous: string | null = null;
    for (const [v, day] of publishDays.entries()) {
      const value: string = r.pick(p.values.filter((x) => x !== previous));
      previous = value;
      const at = dayOf(o.start, day, 8 + i);
      add(at, `Policy "${p.name}", version ${v + 1}, in force from ${isoDay(at)}: ${p.rule(value)}.`, {
        key: `policy:${p.name}`,
        value,
      });
    }
  }
  for (let d = 0; d < days; d++)
    for (let k = 0; k < 2; k++)
      add(
        dayOf(o.start, d, 11 + k),
        `Ticket ${1000 + d * 10 + k}: a customer ${r.pick(TOPICS)} the ${r.pick(policies).name}.`,
      );
  const sorted = inTimeOrder(events);

  const questions: Question[] = [];
  for (let c = 1; c <= Math.floor(days / 10); c++) {
    const askedAt = dayOf(o.start, c * 10 - 1, 20);
    for (const p of policies) {
      const key = `policy:${p.name}`;
      const base = { workload: 'W2', askedAt, tenant: W2_TENANT, principal: W2_READER, key };
      questions.push({
        ...base,
        id: `w2-q${questions.length + 1}`,
        text: `What does the ${p.name} policy say now?`,
        intent: 'current',
        expected: valueAt(sorted, key, askedAt)!,
      });
      const asOf = dayOf(o.start, r.int(c * 10 - 1), 17);
      questions.push({
        ...base,
        id: `w2-q${questions.length + 1}`,
        text: `A ticket was filed on ${isoDay(asOf)}: what did the ${p.name} policy say then?`,
        intent: 'as-of',
        asOf,
        expected: valueAt(sorted, key, asOf)!,
      });
    }
  }
  return { workload: 'W2', events: sorted, questions, probes: [], erasures: [] };
}
