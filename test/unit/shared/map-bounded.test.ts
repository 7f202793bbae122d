import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../../src/substrate/mongo/collections.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('mapBounded', () => {
  it('keeps results in the order of the items, with at most `limit` calls in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapBounded([5, 1, 4, 2, 3, 0, 6], 3, async (n) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, n));
      inFlight--;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30, 0, 60]);
    expect(most).toBe(3);
  });

  it('starts no further item once a call has failed, and rejects with that failure', async () => {
    const started: number[] = [];
    const items = Array.from({ length: 50 }, (_, i) => i);
    await expect(
      mapBounded(items, 4, async (n) => {
        started.push(n);
        await tick();
        if (n === 5) throw new Error('item 5 failed');
        return n;
      }),
    ).rejects.toThrow('item 5 failed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Items 0–5 ran, and the three calls under way beside item 5 could each have started one more before it failed.
    expect(Math.max(...started)).toBeLessThanOrEqual(5 + 3);
    expect(started.length).toBeLessThan(items.length);
  });
});
