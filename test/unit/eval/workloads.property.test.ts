import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Script, ScriptEvent } from '../../../eval/workloads/script.js';
import { w1Project } from '../../../eval/workloads/w1-project.js';
import { w2Policies } from '../../../eval/workloads/w2-policies.js';
import { w3Tenants } from '../../../eval/workloads/w3-tenants.js';
import { canariesOf, w4Regulated } from '../../../eval/workloads/w4-regulated.js';

const START = new Date('2026-03-02T00:00:00Z');

/** An independent fold: the statements of a key up to a time, newest last, and the last one's value. */
function foldedValue(events: readonly ScriptEvent[], key: string, at: Date): string | undefined {
  const statements = events
    .map((e, order) => ({ e, order }))
    .filter(({ e }) => e.fact?.key === key && e.at.getTime() <= at.getTime())
    .sort((a, b) => a.e.at.getTime() - b.e.at.getTime() || a.order - b.order);
  return statements.reduce<string | undefined>((_, { e }) => e.fact!.value, undefined);
}

const generators: [string, (seed: number) => Script][] = [
  ['W1', (seed) => w1Project({ seed, start: START, streams: 4, weeks: 4 })],
  ['W2', (seed) => w2Policies({ seed, start: START, policies: 3, versions: 4, days: 40 })],
  ['W3', (seed) => w3Tenants({ seed, start: START, tenants: 2, principals: 2, topics: 3 })],
  ['W4', (seed) => w4Regulated({ seed, start: START, patients: 6, erasures: 2 })],
];

describe('evaluation workloads', () => {
  for (const [name, generate] of generators) {
    it(`${name}: the same seed gives the same script, and its events are in time order`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 10_000 }), (seed) => {
          const script = generate(seed);
          expect(JSON.stringify(generate(seed))).toBe(JSON.stringify(script));
          script.events.forEach((e, i) => {
            if (i > 0) expect(e.at.getTime()).toBeGreaterThanOrEqual(script.events[i - 1]!.at.getTime());
          });
        }),
        { numRuns: 10 },
      );
    });

    it(`${name}: every expected answer is the value an independent fold of the script finds at the asked time`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 10_000 }), (seed) => {
          const script = generate(seed);
          for (const q of script.questions) {
            expect(q.expected).toBe(foldedValue(script.events, q.key, q.asOf ?? q.askedAt));
            // The event that states it says it in words, so a context holding it holds the answer.
            const stating = script.events.filter((e) => e.fact?.key === q.key && e.fact.value === q.expected);
            expect(stating.some((e) => e.text.includes(q.expected))).toBe(true);
          }
        }),
        { numRuns: 20 },
      );
    });
  }

  it('W1 and W2 ask about the past: some as-of answers differ from the value in force when asked', () => {
    for (const script of [generators[0]![1](4), generators[1]![1](5)]) {
      const past = script.questions.filter((q) => q.intent === 'as-of');
      expect(past.length).toBeGreaterThan(0);
      expect(past.some((q) => q.expected !== foldedValue(script.events, q.key, q.askedAt))).toBe(true);
    }
  });

  it('W1 asks before a change only what the change replaced', () => {
    const script = generators[0]![1](11);
    for (const q of script.questions.filter((x) => x.intent === 'as-of'))
      expect(q.expected).not.toBe(foldedValue(script.events, q.key, q.askedAt));
  });

  it("W3 asks each principal only about its tenant's shared records and its own private ones", () => {
    const script = generators[2]![1](3);
    for (const q of script.questions) {
      const stating = script.events.find((e) => e.fact?.key === q.key)!;
      expect(stating.tenant).toBe(q.tenant);
      if (stating.scope === 'principal') expect(stating.principal).toBe(q.principal);
    }
    expect(script.probes.length).toBeGreaterThan(0);
  });

  it('W4 erases patients whose records a digest quotes, and the digest carries their canary', () => {
    const script = generators[3]![1](8);
    for (const request of script.erasures) {
      const own = script.events.filter((e) => e.subjects.includes(request.subject));
      const canaries = canariesOf(script, request.subject);
      expect(canaries).toEqual(expect.arrayContaining(own.map((e) => e.canary!)));
      const digests = script.events.filter((e) => e.derivedFrom && canaries.includes(e.canary!));
      expect(digests.length).toBeGreaterThan(0);
      expect(digests.every((d) => !d.subjects.includes(request.subject))).toBe(true);
    }
  });
});
