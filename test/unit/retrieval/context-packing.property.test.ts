import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateTokens, packContext, type PackCandidate } from '../../../src/retrieval/context-packing.js';

const candidate = (id: string, over: Partial<PackCandidate> = {}): PackCandidate => ({
  id,
  score: 1,
  status: 'active',
  content: `memory ${id}`,
  disputedWith: [],
  ...over,
});

describe('context packing', () => {
  it('never exceeds the budget, never repeats an item, and counts what it left out', () => {
    const arbitrary = fc.array(
      fc.record({
        score: fc.double({ min: 0, max: 1, noNaN: true }),
        status: fc.constantFrom('active', 'disputed', 'superseded'),
        content: fc.string({ minLength: 1, maxLength: 400 }),
      }),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(arbitrary, fc.integer({ min: 1, max: 600 }), (raw, budget) => {
        const candidates = raw.map((r, i) => candidate(`m${i}`, r));
        const packed = packContext(candidates, budget);
        expect(packed.usedTokens).toBeLessThanOrEqual(budget);
        expect(packed.usedTokens).toBe(packed.items.reduce((n, i) => n + estimateTokens(i.content), 0));
        expect(new Set(packed.items.map((i) => i.id)).size).toBe(packed.items.length);
        expect(packed.items.length + packed.leftOut).toBe(candidates.length);
      }),
      { numRuns: 300 },
    );
  });

  it('puts current authoritative records first, then disputed, then history', () => {
    const packed = packContext(
      [
        candidate('old', { status: 'superseded', score: 0.9, content: 'lived in Lisbon' }),
        candidate('d', { status: 'disputed', score: 0.8, content: 'works at Acme' }),
        candidate('now', { status: 'active', score: 0.1, content: 'lives in Porto' }),
      ],
      1000,
    );
    expect(packed.items.map((i) => i.id)).toEqual(['now', 'd', 'old']);
  });

  it('keeps a disputed pair together, or leaves both out', () => {
    const a = candidate('a', { status: 'disputed', disputedWith: ['b'], content: 'x'.repeat(40) });
    const b = candidate('b', { status: 'disputed', disputedWith: ['a'], content: 'y'.repeat(40) });
    expect(packContext([a, b], 20).items.map((i) => i.id)).toEqual(['a', 'b']);
    expect(packContext([a, b], 15).items).toEqual([]);
  });

  it('prefers a new fact over a near-duplicate of one already packed', () => {
    const packed = packContext(
      [
        candidate('1', { score: 1, content: 'Ana prefers e-mail for invoices' }),
        candidate('2', { score: 0.95, content: 'Ana prefers e-mail for invoices please' }),
        candidate('3', { score: 0.9, content: 'Ana lives in Porto' }),
      ],
      1000,
    );
    expect(packed.items.map((i) => i.id)).toEqual(['1', '3', '2']);
  });
});
