/**
 * W1, a long project (seed 004 §7.2): over several weeks, work streams change owners, requirements change, and dates
 * promised to clients slip. Stand-ups in between carry no fact and push old ones out of any recent window. At the end
 * of each week, questions that need the history: who owns a stream now, what it must support now, and what was
 * promised before a delay (the value in force at a time before the last change).
 */
import { rng } from './rng.js';
import { dayOf, inTimeOrder, isoDay, valueAt, type Question, type Script, type ScriptEvent } from './script.js';

const STREAMS = [
  'payments API',
  'search indexer',
  'mobile checkout',
  'billing export',
  'audit dashboard',
  'partner webhooks',
  'invoice OCR',
  'fraud scoring',
  'onboarding flow',
  'data warehouse sync',
  'notification service',
  'SSO integration',
];
const PEOPLE = ['Priya Raman', 'Tomas Novak', 'Amara Obi', 'Lena Fischer', 'Kenji Sato', 'Rosa Delgado', 'Yusuf Kaya'];
const CLIENTS = ['Northwind', 'Globex', 'Initech', 'Umbrella Health', 'Stark Logistics', 'Wayne Retail'];
const REQUIREMENTS = [
  'SEPA instant transfers',
  'exports in Parquet',
  'two-factor sign-in',
  'German and French locales',
  'a 99.9 % availability target',
  'per-tenant rate limits',
  'PDF/A archiving',
  'webhook retries with backoff',
];
const CHORES = [
  'reviewed the test plan of',
  'paired on a bug in',
  'updated the runbook of',
  'demoed',
  'triaged alerts for',
];

export const W1_TENANT = 'atlas';
export const W1_WRITER = 'pm-agent';
export const W1_READER = 'assistant';

export interface W1Options {
  seed: number;
  start: Date;
  /** Work streams (default 6); weeks of five working days (default 6). */
  streams?: number;
  weeks?: number;
}

export function w1Project(o: W1Options): Script {
  const r = rng(o.seed);
  const streams = STREAMS.slice(0, Math.min(STREAMS.length, o.streams ?? 6));
  const weeks = o.weeks ?? 6;
  const events: ScriptEvent[] = [];
  let n = 0;
  const add = (day: number, hour: number, text: string, fact?: { key: string; value: string }) =>
    events.push({
      id: `w1-e${++n}`,
      at: dayOf(o.start, day, hour),
      tenant: W1_TENANT,
      principal: W1_WRITER,
      scope: 'tenant',
      subjects: ['project-atlas'],
      text,
      ...(fact ? { fact } : {}),
    });
  const client = new Map(streams.map((s) => [s, r.pick(CLIENTS)]));
  // Week 0, day 0: every stream gets an owner, a requirement and a promised date.
  streams.forEach((s, i) => {
    const owner = r.pick(PEOPLE);
    add(0, 9 + (i % 8), `Project Atlas: ${owner} owns the ${s} work stream.`, { key: `owner:${s}`, value: owner });
    const req = r.pick(REQUIREMENTS);
    add(0, 9 + (i % 8), `Project Atlas requirement: the ${s} must support ${req}.`, {
      key: `requirement:${s}`,
      value: req,
    });
    const due = isoDay(dayOf(o.start, 20 + r.int(15)));
    add(0, 10 + (i % 7), `Project Atlas commitment: we promised ${client.get(s)} that the ${s} ships by ${due}.`, {
      key: `commitment:${s}`,
      value: due,
    });
  });
  for (let w = 0; w < weeks; w++) {
    for (let d = 0; d < 5; d++) {
      const day = w * 7 + d + (w === 0 ? 1 : 0);
      for (let k = 0; k < 3; k++)
        add(
          day,
          9 + k,
          `Stand-up ${isoDay(dayOf(o.start, day))}: ${r.pick(PEOPLE)} ${r.pick(CHORES)} the ${r.pick(streams)}.`,
        );
      if (r.next() < 0.5) {
        const s = r.pick(streams);
        const owner = r.pick(PEOPLE.filter((p) => p !== valueAt(events, `owner:${s}`, dayOf(o.start, day, 23))));
        add(day, 13, `Project Atlas: the ${s} work stream moves to ${owner}.`, { key: `owner:${s}`, value: owner });
      }
      if (r.next() < 0.3) {
        const s = r.pick(streams);
        const req = r.pick(
          REQUIREMENTS.filter((q) => q !== valueAt(events, `requirement:${s}`, dayOf(o.start, day, 23))),
        );
        add(day, 14, `Requirement change: the ${s} must now support ${req}.`, { key: `requirement:${s}`, value: req });
      }
      if (r.next() < 0.3) {
        const s = r.pick(streams);
        const before = valueAt(events, `commitment:${s}`, dayOf(o.start, day, 23))!;
        const due = isoDay(new Date(Date.parse(before) + (7 + r.int(14)) * 86_400_000));
        add(day, 15, `Delay: the ${s} for ${client.get(s)} now ships by ${due}, not ${before}.`, {
          key: `commitment:${s}`,
          value: due,
        });
      }
    }
  }
  const sorted = inTimeOrder(events);
  return {
    workload: 'W1',
    events: sorted,
    questions: w1Questions(sorted, streams, client, weeks, o),
    probes: [],
    erasures: [],
  };
}

const asked: Record<string, (stream: string, client: string) => string> = {
  owner: (s) => `Who owns the ${s} work stream?`,
  requirement: (s) => `What must the ${s} support?`,
  commitment: (s, c) => `By what date did we promise ${c} the ${s}?`,
};

function w1Questions(
  events: readonly ScriptEvent[],
  streams: readonly string[],
  client: ReadonlyMap<string, string>,
  weeks: number,
  o: W1Options,
): Question[] {
  const questions: Question[] = [];
  for (let w = 0; w < weeks; w++) {
    const askedAt = dayOf(o.start, w * 7 + 5, 18);
    for (const s of streams) {
      for (const kind of Object.keys(asked)) {
        const key = `${kind}:${s}`;
        const history = events.filter((e) => e.fact?.key === key && e.at <= askedAt);
        const now = valueAt(events, key, askedAt)!;
        // The current value, every other week per stream and kind (so a run stays small).
        if ((w + streams.indexOf(s)) % 2 === 0)
          questions.push({
            id: `w1-q${questions.length + 1}`,
            workload: 'W1',
            askedAt,
            tenant: W1_TENANT,
            principal: W1_READER,
            text: asked[kind]!(s, client.get(s)!),
            intent: 'current',
            key,
            expected: now,
          });
        // Before the last change: the value in force an hour before it.
        const last = history.at(-1);
        if (history.length >= 2 && last && last.at > dayOf(o.start, w * 7 - 2)) {
          const asOf = new Date(last.at.getTime() - 3_600_000);
          questions.push({
            id: `w1-q${questions.length + 1}`,
            workload: 'W1',
            askedAt,
            tenant: W1_TENANT,
            principal: W1_READER,
            text: `Before the last change, on ${isoDay(asOf)}: ${asked[kind]!(s, client.get(s)!)}`,
            intent: 'as-of',
            asOf,
            key,
            expected: valueAt(events, key, asOf)!,
          });
        }
      }
    }
  }
  return questions;
}
