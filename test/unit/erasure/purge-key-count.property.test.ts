import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { planKeyShred } from '../../../activities/erasure/key-ranges.js';

/**
 * A model of the purge's key accounting across attempts that die anywhere: the keys left, the counts recorded on the
 * request, and the cursor the server holds from the last heartbeat. Each attempt is the activity's own order of
 * effects; an attempt runs out of steps where a SIGKILL or a lost worker would stop it.
 */
interface World {
  keys: Set<number>;
  /** Heartbeats are throttled: every `dropEvery`-th never reaches the server (0: none lost). */
  dropEvery?: number;
  sent?: number;
  recorded: Record<string, number>;
  /** What the server holds of the last heartbeat; `keyRanges` only from the one-pass purge. */
  heartbeat: { next: number; keys: number; keyRanges?: string[] };
}

class Died extends Error {}

function stepper(budget: number) {
  let left = budget;
  return () => {
    if (left-- <= 0) throw new Died();
  };
}

/** `cipher.shred`: finds the range's keys, records the count through `onFound` when asked, then destroys one by one. */
function shred(w: World, from: number, to: number, step: () => void, onFound?: (n: number) => void): number {
  const found = [...w.keys].filter((k) => k >= from && k < to).sort((a, b) => a - b);
  if (onFound) {
    step();
    onFound(found.length);
  }
  for (const k of found) {
    step();
    w.keys.delete(k);
  }
  return found.length;
}

const recordOnce = (w: World, part: string) => (n: number) => {
  if (w.recorded[part] === undefined) w.recorded[part] = n;
};

function beat(w: World, heartbeat: World['heartbeat']): void {
  w.sent = (w.sent ?? 0) + 1;
  if (w.dropEvery && w.sent % w.dropEvery === 0) return;
  w.heartbeat = heartbeat;
}

/** The purge of this version: one destroy of the whole rest, then a heartbeat per chunk of rows. */
function onePassAttempt(w: World, total: number, chunk: number, step: () => void): number {
  const from = w.heartbeat.next;
  const snapshot = { ...w.recorded };
  let keys = w.heartbeat.keys;
  const plan = planKeyShred(snapshot, from, total, w.heartbeat.keyRanges);
  if (plan.again) shred(w, plan.again.from, plan.again.to, step);
  keys += plan.counted;
  if (plan.fresh) keys += shred(w, plan.fresh.from, plan.fresh.to, step, recordOnce(w, plan.fresh.range));
  for (let at = from; at < total; at += chunk) {
    step();
    beat(w, { next: Math.min(at + chunk, total), keys, keyRanges: plan.inTotals });
  }
  return keys;
}

/** The purge of earlier versions: a destroy per chunk, each recorded under the chunk's range. */
function perChunkAttempt(w: World, total: number, chunk: number, step: () => void): number {
  const snapshot = { ...w.recorded };
  let keys = w.heartbeat.keys;
  for (let at = w.heartbeat.next; at < total; at += chunk) {
    const to = Math.min(at + chunk, total);
    const part = `${at}_${to}`;
    const found = shred(w, at, to, step, recordOnce(w, part));
    keys += snapshot[part] ?? found;
    step();
    beat(w, { next: to, keys });
  }
  return keys;
}

function survive(attempt: () => number): void {
  try {
    attempt();
  } catch (e) {
    if (!(e instanceof Died)) throw e;
  }
}

const scenario = fc
  .record({ total: fc.integer({ min: 1, max: 40 }), chunk: fc.integer({ min: 1, max: 12 }) })
  .chain(({ total, chunk }) =>
    fc.record({
      total: fc.constant(total),
      chunk: fc.constant(chunk),
      keyed: fc.subarray([...Array(total).keys()]),
      perChunkDeaths: fc.array(fc.integer({ min: 0, max: 3 * total + 10 }), { maxLength: 3 }),
      onePassDeaths: fc.array(fc.integer({ min: 0, max: 3 * total + 10 }), { maxLength: 4 }),
      dropEvery: fc.integer({ min: 0, max: 3 }),
    }),
  );

describe("the purge's count of destroyed keys", () => {
  it('counts every key once, wherever attempts die and whichever heartbeats are lost, after an upgrade from the per-chunk purge too', () => {
    fc.assert(
      fc.property(scenario, ({ total, chunk, keyed, perChunkDeaths, onePassDeaths, dropEvery }) => {
        const w: World = { keys: new Set(keyed), recorded: {}, heartbeat: { next: 0, keys: 0 }, dropEvery };
        for (const budget of perChunkDeaths) survive(() => perChunkAttempt(w, total, chunk, stepper(budget)));
        for (const budget of onePassDeaths) survive(() => onePassAttempt(w, total, chunk, stepper(budget)));
        const counted = onePassAttempt(w, total, chunk, stepper(Number.POSITIVE_INFINITY));
        expect(w.keys.size).toBe(0);
        expect(counted).toBe(keyed.length);
      }),
      { numRuns: 3000 },
    );
  });

  it('counts once the rest past a chunk an earlier version recorded and died in, when the one-pass attempt dies after its first heartbeat', () => {
    // 24 records, chunks of 3, keys on 3, 5 and 17: the per-chunk purge recorded 3_6 (2 keys) and died before
    // destroying them; a one-pass attempt destroyed them again, counted 6_24 (1 key), heartbeated at 6 and died.
    const w: World = { keys: new Set([3, 5, 17]), recorded: {}, heartbeat: { next: 0, keys: 0 } };
    survive(() => perChunkAttempt(w, 24, 3, stepper(3)));
    expect(w.recorded).toEqual({ '0_3': 0, '3_6': 2 });
    survive(() => onePassAttempt(w, 24, 3, stepper(5)));
    expect(w.heartbeat).toEqual({ next: 6, keys: 3, keyRanges: ['0_3', '3_6', '6_24'] });
    expect(onePassAttempt(w, 24, 3, stepper(Number.POSITIVE_INFINITY))).toBe(3);
  });

  it('a range recorded by an attempt that died before its first heartbeat is counted by the next, and its keys destroyed again', () => {
    // 10 records, keys on 7 of them; the first attempt recorded 7 and destroyed 4 before it died.
    const plan = planKeyShred({ '0_10': 7 }, 0, 10);
    expect(plan).toEqual({ again: { from: 0, to: 10 }, counted: 7, fresh: null, inTotals: ['0_10'] });
  });

  it('a range the heartbeat names is already in its totals, wherever it starts', () => {
    expect(planKeyShred({ '0_10': 7 }, 5, 10, ['0_10'])).toEqual({
      again: { from: 5, to: 10 },
      counted: 0,
      fresh: null,
      inTotals: ['0_10'],
    });
    // The rest past an earlier version's chunks starts at the cursor the one-pass attempt heartbeated, and is counted.
    expect(planKeyShred({ '0_3': 0, '3_6': 2, '6_24': 1 }, 6, 24, ['0_3', '3_6', '6_24']).counted).toBe(0);
  });

  it('a heartbeat of the per-chunk purge holds the chunks before its cursor', () => {
    expect(planKeyShred({ '0_5': 1, '5_10': 7 }, 5, 10)).toEqual({
      again: { from: 5, to: 10 },
      counted: 7,
      fresh: null,
      inTotals: ['0_5', '5_10'],
    });
  });

  it("reads an earlier version's chunks as one chain and counts the rest anew", () => {
    // Chunks 0_4 and 4_8 recorded; the cursor reached 4 (0_4's keys are in the totals); 8 onwards never recorded.
    expect(planKeyShred({ '0_4': 2, '4_8': 3, orphans: 9 }, 4, 12)).toEqual({
      again: { from: 4, to: 8 },
      counted: 3,
      fresh: { from: 8, to: 12, range: '8_12' },
      inTotals: ['0_4', '4_8', '8_12'],
    });
  });

  it('a first attempt has nothing to destroy again and records the whole set as one range', () => {
    expect(planKeyShred({}, 0, 6)).toEqual({
      again: null,
      counted: 0,
      fresh: { from: 0, to: 6, range: '0_6' },
      inTotals: ['0_6'],
    });
  });

  it('a range recorded past the end of a smaller set is cut at the end', () => {
    expect(planKeyShred({ '0_9': 4 }, 0, 6)).toEqual({
      again: { from: 0, to: 6 },
      counted: 4,
      fresh: null,
      inTotals: ['0_9'],
    });
  });
});
