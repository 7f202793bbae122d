import { describe, expect, it } from 'vitest';
import { selfReviewRefusal } from '../../../src/shared/self-review.js';
import { FINISHED_ERASURE_STATES, isErasureFinished } from '../../../src/shared/erasure-finished.js';
import { ERASURE_STATES } from '../../../src/governance/erasure/erasure-request.js';

describe('no one decides on their own work', () => {
  it('refuses the writer of a memory under review, and no one else', () => {
    expect(selfReviewRefusal({ kind: 'review', writtenBy: 'agent-1' }, 'agent-1')).toBe(
      'reviewer: may not decide on a write they made',
    );
    expect(selfReviewRefusal({ kind: 'review', writtenBy: 'agent-1' }, 'rev-1')).toBeNull();
  });

  it('refuses any writer of a disputed record', () => {
    const dispute = { kind: 'dispute' as const, writers: ['agent-1', 'agent-2'] };
    expect(selfReviewRefusal(dispute, 'agent-2')).toMatch(/may not adjudicate a dispute over a write they made/);
    expect(selfReviewRefusal(dispute, 'rev-1')).toBeNull();
  });

  it('refuses the writer of the corrected record and the one who filed the correction, saying which', () => {
    const correction = { kind: 'rectification' as const, writers: ['agent-1'], requester: 'dpo-1' };
    expect(selfReviewRefusal(correction, 'agent-1')).toMatch(/correction of a record they wrote/);
    expect(selfReviewRefusal(correction, 'dpo-1')).toMatch(/a correction they filed/);
    expect(selfReviewRefusal(correction, 'rev-1')).toBeNull();
  });

  it("does not take a principal whose id merely contains a writer's for that writer", () => {
    expect(selfReviewRefusal({ kind: 'dispute', writers: ['agent-1'] }, 'agent-10')).toBeNull();
    expect(selfReviewRefusal({ kind: 'review', writtenBy: 'agent-1' }, 'agent-1 ')).toBeNull();
  });
});

describe('finished erasure states', () => {
  it('are states an erasure request can be in, and every other state is open', () => {
    for (const state of FINISHED_ERASURE_STATES) expect(ERASURE_STATES).toContain(state);
    expect(ERASURE_STATES.filter((s) => !isErasureFinished(s))).toEqual(
      ERASURE_STATES.filter((s) => s !== 'completed' && s !== 'rejected'),
    );
    expect(isErasureFinished('needs-dpo')).toBe(false);
    expect(isErasureFinished('Completed')).toBe(false);
  });
});
