/**
 * The synthetic customer-support workload of `bench/consolidation.bench.ts`. Pure code: deterministic for a seed.
 *
 * Each subject is a customer with a made-up surname (unique in the workload) and 4–6 attributes of six
 * (contact channel, language, call window, plan, device, city). Its owner agent writes, in phases:
 *  1. `profile`: the CRM profile as one event (source `crm`, external id `profile-<subject>`) and one memory per
 *     attribute extracted from it;
 *  2. `change`: for some attributes that change over time, the CRM profile again under the same source and
 *     external id with the new value (a correction of the event), and the new value's memory extracted from it:
 *     admission supersedes the old value instead of disputing it (docs/lifecycle.md, "A correction");
 *  3. `chat`: one or two chat sessions (new events) in which the customer restates some current values, each
 *     restatement a memory with the same wording as the record it repeats.
 * Some subjects are then served by a second agent too (`second`): a chat of its own restating two or three current
 * values, which are that agent's memories (its own scope). Changed attributes are restated only after the change,
 * so no active record ever states an old value beside a new one (that would be a dispute, not a history).
 *
 * Questions (current intent) are asked by the owner about its subject: one attribute, two attributes, and the whole
 * subject; the relevant facts of a question are the current sentences of its attributes.
 */
import { rng } from './substrate-measure.js';

export interface Attribute {
  name: string;
  kind: 'fact' | 'preference';
  values: readonly string[];
  /** Whether the workload may change it over time (through a correction of the profile event). */
  changes: boolean;
  say(name: string, value: string): string;
  ask(name: string): string;
}

export const ATTRIBUTES: readonly Attribute[] = [
  {
    name: 'contact-channel',
    kind: 'preference',
    values: ['e-mail', 'phone', 'chat', 'text message', 'post'],
    changes: true,
    say: (n, v) => `${n} prefers contact by ${v}.`,
    ask: (n) => `How does ${n} prefer to be contacted?`,
  },
  {
    name: 'language',
    kind: 'preference',
    values: ['Portuguese', 'Spanish', 'French', 'German', 'English', 'Italian'],
    changes: false,
    say: (n, v) => `${n} speaks ${v} with support agents.`,
    ask: (n) => `Which language does ${n} speak with support?`,
  },
  {
    name: 'call-window',
    kind: 'preference',
    values: ['mornings', 'afternoons', 'evenings', 'lunch breaks'],
    changes: false,
    say: (n, v) => `${n} likes support calls in the ${v}.`,
    ask: (n) => `At what time of day does ${n} like support calls?`,
  },
  {
    name: 'plan',
    kind: 'fact',
    values: ['Basic', 'Standard', 'Premium', 'Family', 'Business', 'Student'],
    changes: true,
    say: (n, v) => `${n} is on the ${v} plan.`,
    ask: (n) => `Which subscription plan is ${n} on?`,
  },
  {
    name: 'device',
    kind: 'fact',
    values: ['an Android phone', 'an iPhone', 'a Windows laptop', 'a MacBook', 'a Chromebook', 'an iPad'],
    changes: true,
    say: (n, v) => `${n} uses ${v}.`,
    ask: (n) => `What device does ${n} use?`,
  },
  {
    name: 'city',
    kind: 'fact',
    values: ['Lisbon', 'Porto', 'Braga', 'Coimbra', 'Faro', 'Madrid', 'Seville', 'Lyon'],
    changes: true,
    say: (n, v) => `${n} lives in ${v}.`,
    ask: (n) => `Which city does ${n} live in?`,
  },
];

const FIRST_NAMES = ['Ana', 'Bruno', 'Carla', 'Diego', 'Elena', 'Filipe', 'Greta', 'Hugo', 'Ines', 'Jonas', 'Lara'];
const SYLLABLES = ['ka', 'lo', 'mi', 'ru', 'se', 'ta', 'vo', 'ne', 'pi', 'da', 'gu', 'fe', 'zo', 'ri', 'ba', 'mor'];

export interface WorkloadOptions {
  subjects: number;
  agents: number;
  seed: number;
  /** Chance that an attribute that may change does change (once). */
  changeShare: number;
  /** Chance that an attribute is restated in the owner's first chat (and half of it in a second). */
  restateShare: number;
  /** Share of subjects a second agent also serves. */
  secondShare: number;
}

export type Phase = 'profile' | 'change' | 'chat' | 'second';
export const PHASES: readonly Phase[] = ['profile', 'change', 'chat', 'second'];

/** One write: a batch of one event and the memories extracted from it, by one agent. */
export interface Session {
  phase: Phase;
  agent: string;
  subject: string;
  /** Batches of one subject and phase go in this order (a second correction after the first). */
  order: number;
  batch: {
    events: Record<string, unknown>[];
    memories: Record<string, unknown>[];
  };
}

export interface Question {
  kind: 'one attribute' | 'two attributes' | 'whole subject';
  agent: string;
  subject: string;
  text: string;
  /** Current sentences (as written) that answer it. */
  relevant: string[];
  /** Sentences of the subject no longer current (superseded values): an item saying one is stale. */
  stale: string[];
}

export interface SubjectPlan {
  id: string;
  name: string;
  owner: string;
  second: string | null;
  attributes: string[];
  /** Current sentence per attribute; old sentences of changed ones. */
  current: Map<string, string>;
  old: Map<string, string>;
}

export interface Workload {
  agents: string[];
  subjects: SubjectPlan[];
  sessions: Session[];
  questions: Question[];
  /** What the planner should build per agent, from the workload alone (before admission has a say). */
  expected: Map<string, { views: number; summaries: number }>;
}

const at = (day: number, minute: number) => new Date(Date.UTC(2026, 0, 5 + day, 9, minute)).toISOString();

export function generateWorkload(o: WorkloadOptions): Workload {
  const random = rng(o.seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const agents = Array.from({ length: o.agents }, (_, i) => `agent-${i + 1}`);
  const used = new Set<string>();
  const surname = () => {
    for (;;) {
      const s = Array.from({ length: 3 }, () => pick(SYLLABLES)).join('');
      const word = s[0]!.toUpperCase() + s.slice(1);
      if (!used.has(word)) {
        used.add(word);
        return word;
      }
    }
  };
  const sessions: Session[] = [];
  const questions: Question[] = [];
  const subjects: SubjectPlan[] = [];
  const expected = new Map(agents.map((a) => [a, { views: 0, summaries: 0 }]));
  // Records an agent holds per subject and attribute at the end (active only): for the expected counts.
  const held = new Map<string, Map<string, number>>();
  const hold = (agent: string, subject: string, attribute: string) => {
    const key = `${agent}\u0000${subject}`;
    const m = held.get(key) ?? new Map<string, number>();
    m.set(attribute, (m.get(attribute) ?? 0) + 1);
    held.set(key, m);
  };

  for (let s = 0; s < o.subjects; s++) {
    const id = `customer-${s.toString(36).padStart(3, '0')}`;
    const name = `${pick(FIRST_NAMES)} ${surname()}`;
    const owner = agents[s % agents.length]!;
    const second =
      o.agents > 1 && random() < o.secondShare ? agents[(s + 1 + int(o.agents - 1)) % agents.length]! : null;
    const count = 4 + int(3);
    const attrs = [...ATTRIBUTES].sort(() => random() - 0.5).slice(0, count);
    const value = new Map(attrs.map((a) => [a.name, pick(a.values)]));
    const plan: SubjectPlan = {
      id,
      name,
      owner,
      second,
      attributes: attrs.map((a) => a.name),
      current: new Map(),
      old: new Map(),
    };
    const sentence = (a: Attribute) => a.say(name, value.get(a.name)!);
    const memory = (a: Attribute, day: number, minute: number) => ({
      namespace: 'support',
      subjects: [id],
      kind: a.kind,
      attribute: a.name,
      content: sentence(a),
      validFrom: at(day, minute),
      purpose: 'customer-support',
      sensitivity: 'internal',
      jurisdiction: 'PT',
      trustTier: 1,
      confidence: Math.round((0.75 + random() * 0.2) * 100) / 100,
      provenance: { eventIds: ['#0'], parentIds: [], derivationRule: 'extract-customer-fact' },
    });
    const event = (source: string, externalId: string, content: string, day: number, minute: number) => ({
      source,
      externalId,
      namespace: 'support',
      subjects: [id],
      content,
      occurredAt: at(day, minute),
    });
    const profile = () => `CRM profile of ${name}. ${attrs.map(sentence).join(' ')}`;

    // 1. The CRM profile and what the owner extracts from it.
    sessions.push({
      phase: 'profile',
      agent: owner,
      subject: id,
      order: 0,
      batch: {
        events: [event('crm', `profile-${id}`, profile(), 0, 0)],
        memories: attrs.map((a, i) => memory(a, 0, i)),
      },
    });
    for (const a of attrs) hold(owner, id, a.name);

    // 2. Changes: the profile corrected at its source, the new value extracted; the old one is superseded.
    let order = 0;
    for (const a of attrs) {
      if (!a.changes || random() >= o.changeShare) continue;
      plan.old.set(a.name, sentence(a));
      const before = value.get(a.name)!;
      value.set(a.name, pick(a.values.filter((v) => v !== before)));
      const day = 20 + order * 10;
      sessions.push({
        phase: 'change',
        agent: owner,
        subject: id,
        order: order++,
        batch: {
          events: [event('crm', `profile-${id}`, profile(), day, 0)],
          memories: [memory(a, day, 1)],
        },
      });
    }

    // 3. The owner's chats: the customer restates current values (the same wording as the record).
    const chats = [attrs.filter(() => random() < o.restateShare)];
    chats.push(chats[0]!.filter(() => random() < 0.5));
    chats.forEach((restated, c) => {
      if (restated.length === 0) return;
      const day = 60 + c * 15;
      sessions.push({
        phase: 'chat',
        agent: owner,
        subject: id,
        order: c,
        batch: {
          events: [event('chat', `chat-${id}-${c}`, `Chat with ${name}. ${restated.map(sentence).join(' ')}`, day, 0)],
          memories: restated.map((a, i) => memory(a, day, i + 1)),
        },
      });
      for (const a of restated) hold(owner, id, a.name);
    });

    // 4. A second agent's chat: its own memories of two or three current values.
    if (second) {
      const restated = [...attrs].sort(() => random() - 0.5).slice(0, 2 + int(2));
      sessions.push({
        phase: 'second',
        agent: second,
        subject: id,
        order: 0,
        batch: {
          events: [
            event('chat', `chat-${id}-${second}`, `Chat with ${name}. ${restated.map(sentence).join(' ')}`, 90, 0),
          ],
          memories: restated.map((a, i) => memory(a, 90, i + 1)),
        },
      });
      for (const a of restated) hold(second, id, a.name);
    }

    for (const a of attrs) plan.current.set(a.name, sentence(a));
    subjects.push(plan);

    // Questions by the owner.
    const stale = [...plan.old.values()];
    const shuffled = [...attrs].sort(() => random() - 0.5);
    for (const a of shuffled.slice(0, 2))
      questions.push({
        kind: 'one attribute',
        agent: owner,
        subject: id,
        text: a.ask(name),
        relevant: [sentence(a)],
        stale,
      });
    const [x, y] = shuffled.slice(2, 4) as [Attribute, Attribute];
    questions.push({
      kind: 'two attributes',
      agent: owner,
      subject: id,
      text: `${x.ask(name)} ${y.ask(name)}`,
      relevant: [sentence(x), sentence(y)],
      stale,
    });
    questions.push({
      kind: 'whole subject',
      agent: owner,
      subject: id,
      text: `What do we know about the customer ${name}?`,
      relevant: attrs.map(sentence),
      stale,
    });
  }

  for (const [key, byAttribute] of held) {
    const agent = key.split('\u0000')[0]!;
    const e = expected.get(agent)!;
    for (const n of byAttribute.values()) if (n >= 2) e.views++;
    // Distinct contents: one per attribute the agent holds.
    if (byAttribute.size >= 2) e.summaries++;
  }
  return { agents, subjects, sessions, questions, expected };
}

/** Two contents say the same when they differ only in case, spacing and a final full stop (as the planner reads). */
export const normalised = (content: string) => content.trim().replace(/\s+/g, ' ').replace(/[.]+$/, '').toLowerCase();
