/**
 * W4, a regulated business (seed 004 §7.2): synthetic personal data of patients, each record carrying a canary, and
 * weekly digests written by staff that quote some patients' records while being filed under the care team (a derived
 * view, reachable from the patient only through what it was derived from). Erasure requests follow for some
 * patients; afterwards, nothing carrying their canaries may be found (records, derived views, the index), and every
 * other patient's records must still be there.
 */
import { rng } from './rng.js';
import { dayOf, inTimeOrder, type ErasureRequest, type Probe, type Script, type ScriptEvent } from './script.js';

const FIRST = ['Ana', 'Bruno', 'Chiara', 'Dmitri', 'Elif', 'Farid', 'Greta', 'Hugo', 'Ines', 'Jonas', 'Kaja', 'Luca'];
const LAST = ['Moreau', 'Silva', 'Berg', 'Horvat', 'Nowak', 'Costa', 'Lindqvist', 'Varga', 'Keller', 'Rossi'];
const FIELDS: { field: string; text: (name: string, c: string) => string }[] = [
  { field: 'address', text: (name, c) => `Intake: ${name} lives at ${c} Harbour Street, Flat 4.` },
  { field: 'iban', text: (name, c) => `Billing: ${name} pays by direct debit from account ${c}.` },
  { field: 'diagnosis', text: (name, c) => `Clinical note: ${name} was diagnosed with condition code ${c}.` },
];

export const W4_TENANT = 'clinic';
export const W4_STAFF = 'care-agent';

export interface W4Options {
  seed: number;
  start: Date;
  /** Patients (default 6), of whom this many ask for erasure (default 2). */
  patients?: number;
  erasures?: number;
}

export function w4Regulated(o: W4Options): Script {
  const r = rng(o.seed);
  const count = Math.min(FIRST.length * LAST.length, o.patients ?? 6);
  const names = r.sample(
    FIRST.flatMap((f) => LAST.map((l) => `${f} ${l}`)),
    count,
  );
  const events: ScriptEvent[] = [];
  let n = 0;
  const canary = () => `PII${100000 + r.int(899999)}`;
  const subjectOf = (name: string) => `patient:${name.toLowerCase().replace(/ /g, '-')}`;
  for (const [i, name] of names.entries()) {
    for (const [j, f] of FIELDS.entries()) {
      const c = canary();
      events.push({
        id: `w4-e${++n}`,
        at: dayOf(o.start, i, 9 + j),
        tenant: W4_TENANT,
        principal: W4_STAFF,
        scope: 'tenant',
        subjects: [subjectOf(name)],
        text: f.text(name, c),
        fact: { key: `${subjectOf(name)}/${f.field}`, value: c },
        canary: c,
      });
    }
  }
  // A digest per pair of patients: it quotes the first one's clinical note and is filed under the care team only.
  for (let i = 0; i + 1 < names.length; i += 2) {
    const quoted = events.find((e) => e.fact?.key === `${subjectOf(names[i]!)}/diagnosis`)!;
    events.push({
      id: `w4-e${++n}`,
      at: dayOf(o.start, names.length + i, 16),
      tenant: W4_TENANT,
      principal: W4_STAFF,
      scope: 'tenant',
      subjects: ['care-team'],
      text: `Weekly digest: follow-ups this week include ${names[i]} (${quoted.canary}) and ${names[i + 1]}.`,
      canary: quoted.canary!,
      derivedFrom: [quoted.id],
    });
  }
  const sorted = inTimeOrder(events);
  const end = dayOf(o.start, names.length * 2 + 1, 9);
  // Erased: the patients quoted in digests first (the harder case), every other one of them.
  const erased = names.filter((_, i) => i % 2 === 0).slice(0, o.erasures ?? 2);
  const erasures: ErasureRequest[] = erased.map((name, i) => ({
    tenant: W4_TENANT,
    subject: subjectOf(name),
    at: new Date(end.getTime() + i * 3_600_000),
  }));
  const probes: Probe[] = erased.map((name, i) => ({
    id: `w4-p${i + 1}`,
    askedAt: new Date(end.getTime() + 86_400_000),
    tenant: W4_TENANT,
    principal: W4_STAFF,
    text: `What do we hold on ${name}: address, account, diagnosis?`,
  }));
  return { workload: 'W4', events: sorted, questions: [], probes, erasures };
}

/** The canaries an erasure of `subject` must remove: its records', and those of views derived from them. */
export function canariesOf(script: Script, subject: string): string[] {
  const own = script.events.filter((e) => e.subjects.includes(subject));
  const ids = new Set(own.map((e) => e.id));
  const derived = script.events.filter((e) => e.derivedFrom?.some((id) => ids.has(id)));
  return [...new Set([...own, ...derived].flatMap((e) => (e.canary ? [e.canary] : [])))];
}
