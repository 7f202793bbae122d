/**
 * How a purge attempt accounts for the data keys it destroys, given what earlier attempts recorded.
 *
 * A key is counted once, when the attempt that first reaches its record finds it; the count is recorded (by range of
 * the erase set, `from_to`) before any key of the range goes, because an attempt that follows a crash finds them gone.
 * The heartbeat names the ranges its totals hold. Pure, so the arithmetic of every crash point can be checked without
 * a server.
 */

/** What one attempt resuming at `from` does about keys. */
export interface KeyShredPlan {
  /** Records whose keys an earlier attempt counted: destroyed again (it may have died mid-destroy), not counted. */
  again: { from: number; to: number } | null;
  /** The recorded counts this attempt adds to its totals: ranges recorded and not yet in the resumed totals. */
  counted: number;
  /** The records no range covers: their keys are counted as found, under `range`, before any goes. */
  fresh: { from: number; to: number; range: string } | null;
  /**
   * The ranges the totals hold once this attempt has added its counts (`fresh` included): heartbeated with them, so
   * that the next attempt knows by name what is counted, whatever the cursor.
   */
  inTotals: string[];
}

interface RecordedRange {
  part: string;
  start: number;
  end: number;
  n: number;
}

/** The `from_to` ranges among a round's recorded parts (other parts, such as `orphans`, are not ranges). */
export function recordedRanges(recorded: Readonly<Record<string, number>>): RecordedRange[] {
  return Object.entries(recorded).flatMap(([part, n]) => {
    const m = /^(\d+)_(\d+)$/.exec(part);
    return m ? [{ part, start: Number(m[1]), end: Number(m[2]), n }] : [];
  });
}

/**
 * The plan for an attempt over an erase set of `total` records resuming at `from`, with the ranges the resumed totals
 * hold (`inTotals`, as the last heartbeat named them). Recorded ranges chain from `from` (the one-pass destroy records
 * one range for the rest of the set; purges of earlier versions recorded one per chunk): the chain is destroyed again,
 * and its ranges the totals do not hold yet are counted here.
 *
 * A heartbeat of the per-chunk purge names no ranges: its totals hold exactly the chunks before its cursor. The cursor
 * alone does not say it for the one-pass destroy, whose first heartbeat already holds a range that starts at or after
 * it (the rest of the set past the chain of an earlier version's chunks).
 */
export function planKeyShred(
  recorded: Readonly<Record<string, number>>,
  from: number,
  total: number,
  inTotals?: readonly string[],
): KeyShredPlan {
  const ranges = recordedRanges(recorded);
  const held = new Set(inTotals ?? ranges.filter((r) => r.start < from).map((r) => r.part));
  let covered = from;
  for (let grew = true; grew;) {
    grew = false;
    for (const r of ranges)
      if (r.start <= covered && covered < r.end) {
        covered = r.end;
        grew = true;
      }
  }
  covered = Math.min(covered, total);
  const adding = ranges.filter((r) => r.start < covered && !held.has(r.part));
  const fresh = covered < total ? { from: covered, to: total, range: `${covered}_${total}` } : null;
  return {
    again: covered > from ? { from, to: covered } : null,
    counted: adding.reduce((sum, r) => sum + r.n, 0),
    fresh,
    inTotals: [...held, ...adding.map((r) => r.part), ...(fresh ? [fresh.range] : [])].sort(),
  };
}
