import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  admissionLabel,
  admitsWithoutReview,
  combineLabels,
  OBLIGATION_LABELS,
  type ObligationLabel,
} from '../../../src/governance/derivation/labels.js';

const label = fc.constantFrom(...OBLIGATION_LABELS);
const ORDER = ['supported', 'ambiguous', 'unresolved', 'unsupported', 'contradicted'];
const rank = (l: string) => ORDER.indexOf(l);

describe('combining obligation labels into a record label', () => {
  it('takes the worst: contradicted > unsupported > unresolved > ambiguous > supported', () => {
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 12 }), (labels) => {
        const record = combineLabels(labels);
        const asRecord = (l: ObligationLabel) => (l === 'insufficient' ? 'unsupported' : l);
        expect(rank(record)).toBe(Math.max(...labels.map((l) => rank(asRecord(l)))));
      }),
    );
  });

  it('never improves when an obligation is added', () => {
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 8 }), label, (labels, extra) => {
        expect(rank(combineLabels([...labels, extra]))).toBeGreaterThanOrEqual(rank(combineLabels(labels)));
      }),
    );
  });

  it('keeps unresolved apart from unsupported: without an insufficient obligation it never becomes unsupported', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<ObligationLabel>('supported', 'ambiguous', 'unresolved'), { maxLength: 8 }),
        (labels) => {
          const record = combineLabels([...labels, 'unresolved']);
          expect(record).toBe('unresolved');
          expect(admitsWithoutReview(record)).toBe(false);
        },
      ),
    );
  });

  it('calls a memory with no obligations unresolved, never supported', () => {
    expect(combineLabels([])).toBe('unresolved');
  });

  it('admits without review only supported and repaired records; repaired means supported only when expanded', () => {
    fc.assert(
      fc.property(
        fc.array(label, { minLength: 1, maxLength: 6 }),
        fc.array(label, { minLength: 1, maxLength: 6 }),
        (a, b) => {
          const cited = combineLabels(a);
          const expanded = combineLabels(b);
          const admission = admissionLabel(cited, expanded);
          expect(admitsWithoutReview(admission)).toBe(expanded === 'supported');
          expect(admission === 'repaired').toBe(expanded === 'supported' && cited !== 'supported');
        },
      ),
    );
  });
});
