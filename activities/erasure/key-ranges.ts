/**
 * How a purge attempt accounts for the data keys it destroys, given what earlier attempts recorded.
 *
 * A key is counted once, when the attempt that first reaches its record finds it; the count is recorded (by range of
 * the erase set, `from_to`) before any key of the range goes, because an attempt that follows a crash finds them gone.
 * The heartbeated totals carry the counts of every range that starts before the cursor. Pure, so the arithmetic of
 * every crash point can be checked without a server.
 */

/** What one attempt resuming at `from` does about keys. */
export interface KeyShredPlan {
  /** Records whose keys an earlier attempt counted: destroyed again (it may have died mid-destroy), not counted. */
  again: { from: number; to: number } | null;
  /** The recorded counts this attempt adds to its totals: ranges that start at or after `from`. */
  counted: number;
  /** The records no range covers: their keys are counted as found, under `range`, before any goes. */
  fresh: { from: number; to: number; range: string } | null;
}

interface RecordedRange {
  start: number;
  end: number;
  n: number;
}

/** The `from_to` ranges among a round's recorded parts (other parts, such as `orphans`, are not ranges). */
export function recordedRanges(recorded: Readonly<Record<string, number>>): RecordedRange[] {
  return Object.entries(recorded).flatMap(([part, n]) => {
    const m = /^(\d+)_(\d+)$/.exec(part);
    return m ? [{ start: Number(m[1]), end: Number(m[2]), n }] : [];
  });
}

/**
 * The plan for an attempt over an erase set of `total` records resuming at `from`. Recorded ranges chain from `from`
 * (the one-pass destroy records one range for the whole rest; purges of earlier versions recorded one per chunk): the
 * chain is destroyed again, and the ranges in it that start at or after `from` are counted here, since the cursor's
 * totals hold only those before it.
 */
export function planKeyShred(recorded: Readonly<Record<string, number>>, from: number, total: number): KeyShredPlan {
  const ranges = recordedRanges(recorded);
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
  const counted = ranges.filter((r) => r.start >= from && r.start < covered).reduce((sum, r) => sum + r.n, 0);
  return {
    again: covered > from ? { from, to: covered } : null,
    counted,
    fresh: covered < total ? { from: covered, to: total, range: `${covered}_${total}` } : null,
  };
}
