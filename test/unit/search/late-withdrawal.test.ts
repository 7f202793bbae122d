/**
 * A late withdrawal from the index checks the figures it reads: it returns only once `_segments` reports no deleted
 * document, and fails (so its activity retries) when one is still there after the wait. The index is a stand-in
 * that reports given figures; the real expunge is exercised by the erasure and re-embedding suites.
 */
import { describe, expect, it } from 'vitest';
import { ExpungeIncomplete, withdrawLate } from '../../../src/substrate/search/index-unless-erased.js';
import type { SearchIndex } from '../../../src/substrate/search/search-index.port.js';

function indexReporting(figures: number[]) {
  const calls = { purge: 0, expunge: 0 };
  const index = {
    async purge() {
      calls.purge += 1;
      return { deleted: 1, indices: [] };
    },
    async expungeDeleted() {
      const deletedDocs = figures[Math.min(calls.expunge, figures.length - 1)]!;
      calls.expunge += 1;
      return { deletedDocs };
    },
  } as unknown as SearchIndex;
  return { index, calls };
}

describe('a late withdrawal from the index', () => {
  it('waits until the segments report no deleted document, then returns those figures', async () => {
    const { index, calls } = indexReporting([2, 1, 0]);
    await expect(withdrawLate(index, 't', ['mem_1'], { attempts: 5, intervalMs: 1 })).resolves.toMatchObject({
      deletedDocs: 0,
    });
    expect(calls).toEqual({ purge: 1, expunge: 3 });
  });

  it('fails with the count when deleted documents are still there after the wait', async () => {
    const { index, calls } = indexReporting([3]);
    const failed = withdrawLate(index, 't', ['mem_1'], { attempts: 3, intervalMs: 1 });
    await expect(failed).rejects.toBeInstanceOf(ExpungeIncomplete);
    await expect(failed).rejects.toMatchObject({ name: 'ExpungeIncomplete', deletedDocs: 3 });
    expect(calls.expunge).toBe(3);
  });
});
