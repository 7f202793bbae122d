/**
 * The scale test's data: many synthetic data subjects per tenant, each with memories extracted verbatim from an event
 * of its own (so the derivation audit admits every one as supported), one attribute per memory (so no two records of
 * a subject contradict each other), and every sentence carrying the subject's made-up name. The name makes each
 * sentence unique to its subject: an erasure's copy probes, which look for the erased sentences across the whole
 * tenant, find nothing outside the subject, so the requests are independent of one another.
 */
import { randomUUID } from 'node:crypto';
import { sampleMemory } from '../support/samples.js';

/** Sizes, from the environment so that a quick smoke run can be made before the full one. */
export interface ScalePlan {
  memories: number;
  erasures: number;
  tenants: number;
  /** Of which the 1-worker phase takes this many; the 3-worker phase the rest. */
  oneWorkerTenants: number;
  memoriesPerSubject: number;
  /** Memories (each with its event) per write batch. */
  batch: number;
  /** Write batches in flight at once, spread over the two APIs. */
  batchesInFlight: number;
  /** Erasure filings in flight at once. */
  filingsInFlight: number;
  /** Retrieval loops per API process. */
  readersPerApi: number;
  /** How long to wait for the requests of a phase to complete. */
  settleMinutes: number;
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: a whole number of at least 1, not "${raw}"`);
  return value;
}

/**
 * Twenty tenants of 1 000 memories by default, rather than a few large ones: an erasure's copy probes read its whole
 * tenant in pages of 500, and on the local FerretDB each page query fetches every document of the tenant (the range
 * and the sort are not pushed down), so an erasure costs about (tenant size)² / 500 document reads. Measured: with 4
 * tenants of 5 000 memories, 50 concurrent erasures of one tenant were all still in `verify` after 35 minutes.
 */
export function scalePlan(env: NodeJS.ProcessEnv = process.env): ScalePlan {
  const tenants = positive(env, 'LETHE_SCALE_TENANTS', 20);
  const plan: ScalePlan = {
    memories: positive(env, 'LETHE_SCALE_MEMORIES', 20_000),
    erasures: positive(env, 'LETHE_SCALE_ERASURES', 200),
    tenants,
    oneWorkerTenants: positive(env, 'LETHE_SCALE_ONE_WORKER_TENANTS', Math.max(1, Math.round(tenants / 4))),
    memoriesPerSubject: positive(env, 'LETHE_SCALE_MEMORIES_PER_SUBJECT', 10),
    batch: positive(env, 'LETHE_SCALE_BATCH', 200),
    batchesInFlight: positive(env, 'LETHE_SCALE_BATCHES_IN_FLIGHT', 4),
    filingsInFlight: positive(env, 'LETHE_SCALE_FILINGS_IN_FLIGHT', 4),
    readersPerApi: positive(env, 'LETHE_SCALE_READERS_PER_API', 2),
    settleMinutes: positive(env, 'LETHE_SCALE_SETTLE_MINUTES', 90),
  };
  if (plan.oneWorkerTenants >= plan.tenants)
    throw new Error('LETHE_SCALE_ONE_WORKER_TENANTS: fewer than LETHE_SCALE_TENANTS (the rest are the 3-worker phase)');
  if (plan.memoriesPerSubject > FACTS.length)
    throw new Error(`LETHE_SCALE_MEMORIES_PER_SUBJECT: at most ${FACTS.length}`);
  if (plan.memories % (plan.tenants * plan.memoriesPerSubject) !== 0)
    throw new Error('LETHE_SCALE_MEMORIES: a multiple of tenants × memories per subject');
  if (plan.erasures % plan.tenants !== 0) throw new Error('LETHE_SCALE_ERASURES: a multiple of LETHE_SCALE_TENANTS');
  if (plan.erasures / plan.tenants > plan.memories / plan.tenants / plan.memoriesPerSubject)
    throw new Error('LETHE_SCALE_ERASURES: more erasures than subjects');
  return plan;
}

const CONSONANTS = 'bdfgklmnprstvz';
const VOWELS = 'aeiou';

/**
 * A made-up name of six letters (three consonant-vowel syllables), the same length for every subject: no name is
 * a suffix of another, so no subject's sentence is found inside another's.
 */
export function subjectName(index: number): string {
  const syllables = CONSONANTS.length * VOWELS.length;
  if (index >= syllables ** 3) throw new Error(`subject ${index}: past the names available`);
  let name = '';
  let rest = index;
  for (let i = 0; i < 3; i++) {
    const s = rest % syllables;
    rest = Math.floor(rest / syllables);
    name += CONSONANTS[Math.floor(s / VOWELS.length)]! + VOWELS[s % VOWELS.length]!;
  }
  return name[0]!.toUpperCase() + name.slice(1);
}

export const subjectId = (index: number) => `customer-${subjectName(index).toLowerCase()}`;

/**
 * One sentence per attribute, five words or more (the length the copy probes sample), with no number in it: the
 * derivation audit reads differing quantities about one subject as ambiguous.
 */
const FACTS: readonly [attribute: string, sentence: (name: string) => string][] = [
  ['invoice-channel', (n) => `${n} asked for invoices to be sent by e-mail.`],
  ['call-time', (n) => `${n} prefers phone calls in the afternoon.`],
  ['home-city', (n) => `${n} told support that the family lives in Porto.`],
  ['language', (n) => `${n} wants to be answered in Portuguese.`],
  ['delivery', (n) => `${n} asked for parcels to be left with the neighbour.`],
  ['newsletter', (n) => `${n} unsubscribed from the monthly newsletter.`],
  ['payment', (n) => `${n} pays the subscription by bank transfer.`],
  ['device', (n) => `${n} uses the mobile app on an older tablet.`],
  ['complaint', (n) => `${n} complained about a late delivery last spring.`],
  ['salutation', (n) => `${n} asked support to use the first name only.`],
  ['accessibility', (n) => `${n} needs large print on every letter.`],
  ['plan', (n) => `${n} upgraded the subscription to the family plan.`],
];

/** A subject's memory `j`, word for word as its event states it. */
export function factOf(subject: number, j: number): { attribute: string; content: string } {
  const [attribute, sentence] = FACTS[j]!;
  return { attribute, content: sentence(subjectName(subject)) };
}

/** A write batch of consecutive subjects' memories, each citing the event it was extracted from. */
export interface PlannedBatch {
  subjects: number[];
  body: { events: Record<string, unknown>[]; memories: Record<string, unknown>[] };
}

export function plannedBatches(subjects: number, memoriesPerSubject: number, batch: number): PlannedBatch[] {
  const subjectsPerBatch = Math.max(1, Math.floor(batch / memoriesPerSubject));
  const batches: PlannedBatch[] = [];
  for (let first = 0; first < subjects; first += subjectsPerBatch) {
    const members = Array.from({ length: Math.min(subjectsPerBatch, subjects - first) }, (_, i) => first + i);
    const events: Record<string, unknown>[] = [];
    const memories: Record<string, unknown>[] = [];
    for (const s of members) {
      for (let j = 0; j < memoriesPerSubject; j++) {
        const { attribute, content } = factOf(s, j);
        events.push({
          source: 'crm',
          externalId: `scale-${randomUUID()}`,
          namespace: 'support',
          subjects: [subjectId(s)],
          content,
          occurredAt: '2026-11-01T10:00:00Z',
        });
        memories.push(
          sampleMemory({
            subjects: [subjectId(s)],
            attribute,
            content,
            provenance: { eventIds: [`#${events.length - 1}`], parentIds: [], derivationRule: 'extract-fact' },
          }),
        );
      }
    }
    batches.push({ subjects: members, body: { events, memories } });
  }
  return batches;
}

/** `count` subjects out of `subjects`, spread evenly, so that the erased ones sit in many different batches. */
export function spreadPick(subjects: number, count: number): number[] {
  const step = subjects / count;
  return Array.from({ length: count }, (_, i) => Math.floor(i * step + step / 2));
}
