import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batches } from '../../../eval/replay.js';
import { extractiveSummary, windowContext } from '../../../eval/systems/b2-window-summary.js';
import { packInOrder } from '../../../eval/systems/system.js';
import { estimateTokens } from '../../../src/retrieval/context-packing.js';
import type { ScriptEvent } from '../../../eval/workloads/script.js';

const events = (texts: readonly string[], keys: readonly (string | null)[] = []): ScriptEvent[] =>
  texts.map((text, i) => ({
    id: `e${i}`,
    at: new Date(Date.UTC(2026, 2, 2, 0, i)),
    tenant: 'acme',
    principal: 'writer',
    scope: 'tenant',
    subjects: ['s'],
    text,
    ...(keys[i] ? { fact: { key: keys[i]!, value: text } } : {}),
  }));
const tokens = (list: readonly ScriptEvent[]) => list.reduce((n, e) => n + estimateTokens(e.text), 0);
const texts = fc.array(fc.string({ minLength: 1, maxLength: 120 }), { maxLength: 40 });

describe('the baselines and the replay', () => {
  it('window + summary stays within the budget, keeps the newest events, and repeats none', () => {
    fc.assert(
      fc.property(texts, fc.integer({ min: 1, max: 500 }), (raw, budget) => {
        const log = events(raw);
        const context = windowContext(log, budget);
        expect(tokens(context)).toBeLessThanOrEqual(budget);
        expect(new Set(context.map((e) => e.id)).size).toBe(context.length);
        const newest = log.at(-1);
        if (newest && estimateTokens(newest.text) <= Math.floor(budget * 0.75)) expect(context.at(-1)).toBe(newest);
      }),
    );
  });

  it('the extractive summary keeps its sentences in time order', () => {
    const summary = extractiveSummary(events(['a b c', 'b c d', 'x', 'c d e', 'y z']), 9);
    const order = summary.map((e) => Number(e.id.slice(1)));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(tokens(summary)).toBeLessThanOrEqual(9);
  });

  it('packing in rank order never exceeds the budget and keeps the rank order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 30 }),
        fc.integer({ min: 1, max: 200 }),
        (sizes, budget) => {
          const ranked = sizes.map((size, rank) => ({ size, rank }));
          const packed = packInOrder(ranked, (x) => x.size, budget);
          expect(packed.reduce((n, x) => n + x.size, 0)).toBeLessThanOrEqual(budget);
          expect(packed.map((x) => x.rank)).toEqual([...packed.map((x) => x.rank)].sort((a, b) => a - b));
        },
      ),
    );
  });

  it('replay batches keep time order and never state one fact twice in a batch', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('k1', 'k2', 'k3', null), { maxLength: 40 }), (keys) => {
        const log = events(
          keys.map((_, i) => `event ${i}`),
          keys,
        );
        const split = batches(log);
        expect(split.flat()).toEqual(log);
        for (const batch of split) {
          const stated = batch.flatMap((e) => (e.fact ? [e.fact.key] : []));
          expect(new Set(stated).size).toBe(stated.length);
        }
      }),
    );
  });
});
