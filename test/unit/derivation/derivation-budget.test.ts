/**
 * The derivation audit is bounded whatever an agent writes: past the obligation or evidence budget the memory is
 * unresolved (a reviewer decides), the retrieved history is cut by bytes, and text handling is linear.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { auditDerivation, MAX_OBLIGATIONS } from '../../../src/governance/derivation/derivation-audit.js';
import { createDeterministicVerifier } from '../../../src/governance/derivation/deterministic-verifier.js';
import {
  evidenceViews,
  MAX_EVIDENCE_BYTES,
  TOTAL_PASSAGES,
} from '../../../src/governance/derivation/evidence-scope.js';
import { decompose } from '../../../src/governance/derivation/obligations.js';
import { trimEndOf } from '../../../src/governance/derivation/text-cues.js';

const at = new Date('2026-11-01T10:00:00Z');
const before = new Date('2026-12-01T00:00:00Z');
const options = { verifier: createDeterministicVerifier(), timeoutMs: 60_000 };
const passage = (id: string, text: string) => ({ id, text, at });

describe('the derivation audit under hostile input', () => {
  it(`leaves a memory of more than ${MAX_OBLIGATIONS} obligations unresolved without judging it`, async () => {
    const content = Array.from({ length: 80 }, (_, i) => `Ana visited depot ${i}`).join('. ') + '.';
    expect(decompose(content).length).toBeGreaterThan(MAX_OBLIGATIONS);
    const verdict = await auditDerivation({ content, cited: [passage('e1', content)], pool: [], before }, options);
    expect(verdict).toMatchObject({ label: 'unresolved', unresolvedBecause: 'obligation-budget', obligations: [] });
    expect(verdict.counts.obligations).toBe(decompose(content).length);
    // Positive control: the same evidence supports a memory within the budget.
    const small = await auditDerivation(
      { content: 'Ana visited depot 3.', cited: [passage('e1', content)], pool: [], before },
      options,
    );
    expect(small.label).toBe('supported');
  });

  it('leaves a memory whose citations exceed the evidence budget unresolved, and cuts retrieved history by bytes', async () => {
    const big = 'Ana visited the depot. '.repeat(Math.ceil(MAX_EVIDENCE_BYTES / 23 / 3) + 1);
    const cited = [passage('e1', big), passage('e2', big), passage('e3', big), passage('e4', big)];
    const verdict = await auditDerivation({ content: 'Ana visited the depot.', cited, pool: [], before }, options);
    expect(verdict).toMatchObject({ label: 'unresolved', unresolvedBecause: 'evidence-budget' });

    const pool = Array.from({ length: 10 }, (_, i) => passage(`p${i}`, big));
    const views = evidenceViews('Ana visited the depot.', [passage('e0', 'Ana called.')], pool, before);
    const bytes = views.expanded.reduce((n, p) => n + Buffer.byteLength(p.text), 0);
    expect(bytes).toBeLessThanOrEqual(MAX_EVIDENCE_BYTES);
    expect(views.expanded.length).toBeLessThan(TOTAL_PASSAGES);
    expect(views.expanded.length + views.leftOut.length).toBe(1 + pool.length);
  });

  it('trims trailing separators exactly as the regex did, in one pass', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', ',', '.', '\t', 'x', '1') }), (s) => {
        expect(trimEndOf(s, ' \t\n\r\f\v,')).toBe(s.replace(/[\s,]+$/, ''));
        expect(trimEndOf(s, '.,')).toBe(s.replace(/[.,]+$/, ''));
      }),
      { numRuns: 2000 },
    );
  });
});
